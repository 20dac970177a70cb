"""A broker that speaks MQTT 3.1.1 only, as far as a client can tell: a
loopback proxy in front of a real mosquitto that answers an MQTT 5 CONNECT
the way a 3.1.1 broker does (CONNACK, return code 1: unacceptable protocol
version) and passes every other connection through untouched."""

from __future__ import annotations

import socket
import threading
from typing import Any


class OldBroker:
    def __init__(self, broker: Any) -> None:
        self.target = (broker.host, broker.port)
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
            threading.Thread(target=_pipe, args=(up, conn), daemon=True).start()
            _pipe(conn, up)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self.sock.close()


def _pipe(a: socket.socket, b: socket.socket) -> None:
    a.settimeout(None)
    try:
        while data := a.recv(65536):
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
