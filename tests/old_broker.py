"""Brokers that misbehave, as far as a client can tell: a loopback proxy in
front of a real mosquitto that answers an MQTT 5 CONNECT the way a 3.1.1
broker does (CONNACK, return code 1: unacceptable protocol version) and
passes every other connection through — or, with ``drop_pubacks``, passes
everything but the broker's PUBACKs (a message that arrived, its
acknowledgement lost on the way back: a power cut's timing, made to order)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any


class OldBroker:
    def __init__(self, broker: Any, drop_pubacks: bool = False) -> None:
        self.target = (broker.host, broker.port)
        self.drop_pubacks = drop_pubacks
        self.dropped = 0
        self._lossy: set[int] = set()  # packet ids of the client's event and play messages
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.address = f"127.0.0.1:{self.port}"
        self.refused = 0  # MQTT 5 connections turned away
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        try:
            first = conn.recv(4096)  # a CONNECT: fixed header, remaining length, "\0\4MQTT", level
            at = first.find(b"\x00\x04MQTT")
            if at >= 0 and len(first) > at + 6 and first[at + 6] == 5:
                self.refused += 1
                conn.sendall(b"\x20\x02\x00\x01")
                return
            up = socket.create_connection(self.target, timeout=10)
            up.sendall(first)
            threading.Thread(target=_relay, args=(up, conn, self._without_pubacks if self.drop_pubacks else None),
                             daemon=True).start()
            _relay(conn, up, self._noting if self.drop_pubacks else None)
        except OSError:
            pass
        finally:
            conn.close()

    def _noting(self, packet: bytes) -> bool:
        """The client's packets to the broker, all passed on, noting the
        packet id of each QoS 1 PUBLISH (type 3) to an event or play topic."""
        if packet[0] >> 4 == 3 and (packet[0] >> 1) & 3:
            body = packet[_header_len(packet):]
            n = int.from_bytes(body[:2], "big")
            if body[2:2 + n].endswith((b"/event", b"/play")):
                self._lossy.add(int.from_bytes(body[2 + n:4 + n], "big"))
        return True

    def _without_pubacks(self, packet: bytes) -> bool:
        """The broker's packets to the client, the PUBACKs (type 4) of the
        noted messages left out."""
        body = packet[_header_len(packet):]
        if packet[0] >> 4 == 4 and int.from_bytes(body[:2], "big") in self._lossy:
            self.dropped += 1
            return False
        return True

    def close(self) -> None:
        self._stop.set()
        self.sock.close()


def _header_len(packet: bytes) -> int:
    """The fixed header's length: one byte, then the variable length's bytes."""
    at = 1
    while packet[at] & 0x80:
        at += 1
    return at + 1


def _one_packet(buf: bytes) -> bytes | None:
    """The first whole MQTT packet in ``buf`` (its fixed header, a variable
    length, then that many bytes), or None while it is incomplete."""
    length, shift, at = 0, 0, 1
    while True:
        if at >= len(buf):
            return None
        length |= (buf[at] & 0x7F) << shift
        at += 1
        if not buf[at - 1] & 0x80:
            break
        shift += 7
    return buf[:at + length] if len(buf) >= at + length else None


def _relay(a: socket.socket, b: socket.socket, keep: Callable[[bytes], bool] | None = None) -> None:
    """``a``'s bytes to ``b`` until either side closes, then both shut down;
    with ``keep``, whole MQTT packets, only those it keeps (it may note them)."""
    a.settimeout(None)
    buf = b""
    try:
        while data := a.recv(65536):
            if keep is None:
                b.sendall(data)
                continue
            buf += data
            while (packet := _one_packet(buf)) is not None:
                buf = buf[len(packet):]
                if keep(packet):
                    b.sendall(packet)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
