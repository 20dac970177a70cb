"""paho's client as the venue's ear uses it (``subscriber``): the same MQTT,
the same QoS 1 (each message acknowledged by the venue once kept,
``manual_ack``), with less work per message for a thousand tables a second.

- A packet larger than ``MAX_PACKET`` is refused before it is read: paho
  reads a packet whole into memory, whatever its announced length.
- A table's message (QoS 1, no MQTT 5 properties) is read without paho's
  ``Properties`` object.
- Reads in bulk: paho asks the socket for a packet's first byte, then its
  length byte by byte, then its body (four ``recv`` for a table's state);
  here one ``recv`` of up to ``READ_CHUNK`` takes what the socket holds and
  paho's small reads are served from it.  ``loop_read`` goes on until that
  read-ahead is empty, so no packet waits in it for a ``select`` that cannot
  see it, and a connection closed drops it (it is not the next one's).  A
  whole table's message at its head is taken from it at once, not in those
  small steps; anything else is read paho's way.
- A turn that heard messages sends their acknowledgements before it ends,
  queued ones together in one ``send``; then, unless it heard ``GATHER_MOST``
  or more (a backlog: the venue is behind), the thread waits ``GATHER_S``
  before its next turn, so what arrives meanwhile is one turn's ``select``,
  ``recv`` and ``send`` rather than one each per message.  A message waits
  that much longer at most; an acknowledgement still goes only after the
  message was kept, as before (a play or an event: committed, fsynced).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import paho.mqtt.client as mqtt

from venue import schema

MAX_PACKET = schema.MAX_PAYLOAD + 1024  # the largest message the schema takes, its topic and header
READ_CHUNK = 64 * 1024  # what one recv takes from the broker's socket at most
GATHER_S = 0.005  # after a turn that heard messages, paho's thread waits this long before the next
GATHER_MOST = 10  # … unless the turn heard this many or more: a backlog is read without waiting
PUBACK = 0x40


def _plain_topic_end(packet: bytes) -> int | None:
    """Where the topic of a QoS 1 PUBLISH's body ``packet`` ends (after it: the packet id, then
    the properties' length), if the message has no MQTT 5 properties; None if it has some."""
    end = 2 + int.from_bytes(packet[:2], "big")  # the topic's length, then the topic
    return end if packet[end + 2:end + 3] == b"\x00" else None


class _Client(mqtt.Client):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_ahead = bytearray()  # taken from the socket, not yet asked for by paho
        self._heard_in_turn = 0

    # ------------------------------------------------------------ reading
    def _sock_recv(self, bufsize: int) -> bytes:
        packet = self._in_packet
        if packet["have_remaining"] and packet["remaining_length"] > MAX_PACKET:
            raise OSError(f"a packet of {packet['remaining_length']} bytes, over the {MAX_PACKET} the venue takes")
        ahead = self._read_ahead
        if not ahead:
            data: bytes = super()._sock_recv(READ_CHUNK)
            if len(data) <= bufsize:
                return data
            ahead += data
        data = bytes(ahead[:bufsize])
        del ahead[:bufsize]
        return data

    def loop_read(self, max_packets: int = 1) -> Any:
        rc = super().loop_read(max_packets)
        while rc == mqtt.MQTT_ERR_SUCCESS and self._read_ahead and self._sock is not None:
            if not self._take_publishes():
                rc = super().loop_read(max_packets)
        return rc

    def _take_publishes(self) -> bool:
        """Whole table messages (PUBLISH, QoS 1, no properties) at the head of the
        read-ahead, each heard straight from it: paho's way reads a packet in five
        small steps (its first byte, its length byte by byte, its body, its handling)
        that cost as much as the rest of its reading.  False if the head is anything
        else (paho reads it), or only part of a packet (paho keeps it for the rest)."""
        ahead, taken = self._read_ahead, 0
        while ahead and self._protocol == mqtt.MQTTv5 and ahead[0] & 0xF6 == 0x32 and self._in_packet["command"] == 0:
            length, shift, at = 0, 0, 1
            while at < len(ahead) and at <= 4:
                length += (ahead[at] & 0x7F) << shift
                shift += 7
                at += 1
                if not ahead[at - 1] & 0x80:
                    break
            else:
                return taken > 0  # its length not all here (or too long: paho says so)
            end = at + length
            if length > MAX_PACKET or end > len(ahead):
                break
            packet = bytes(ahead[at:end])
            topic_end = _plain_topic_end(packet)
            if topic_end is None:
                break
            header = ahead[0]
            del ahead[:end]
            self._heard_in_turn += 1
            self._hear(header, packet, topic_end)
            taken += 1
            if self._sock is None:
                break
        return taken > 0

    def _sock_close(self) -> None:
        self._read_ahead.clear()  # what was read ahead on a connection is not the next one's
        super()._sock_close()

    def _handle_publish(self) -> Any:
        """A QoS 1 PUBLISH without properties (what a table sends, as the broker passes it
        on) read without paho's MQTT 5 ``Properties`` object, whose making and unpacking
        cost more than the rest of the message's reading: about a third of the venue's CPU
        per message.  Anything else goes paho's way."""
        self._heard_in_turn += 1
        header, packet = self._in_packet["command"], bytes(self._in_packet["packet"])
        end = _plain_topic_end(packet)
        if self._protocol != mqtt.MQTTv5 or (header & 0x06) >> 1 != 1 or end is None:
            return super()._handle_publish()
        self._hear(header, packet, end)
        return mqtt.MQTT_ERR_SUCCESS  # acknowledged by the venue once kept (manual_ack)

    def _hear(self, header: int, packet: bytes, topic_end: int) -> None:
        """A QoS 1 PUBLISH without properties (its fixed header's first byte, its body, where
        its topic ends) handed to ``on_message`` as paho's own reading would."""
        message = mqtt.MQTTMessage(mid=int.from_bytes(packet[topic_end:topic_end + 2], "big"),
                                   topic=packet[2:topic_end])
        message.dup, message.qos, message.retain = bool(header & 0x08), 1, bool(header & 0x01)
        message.payload, message.timestamp = packet[topic_end + 3:], time.monotonic()
        self._handle_on_message(message)

    # ------------------------------------------------------------ a turn
    def _loop(self, timeout: float = 1.0) -> Any:
        self._heard_in_turn = 0
        rc = super()._loop(timeout)
        heard = self._heard_in_turn
        if heard and rc == mqtt.MQTT_ERR_SUCCESS and self._sock is not None:
            if self.want_write():
                rc = self.loop_write()  # this turn's acknowledgements, now
            if heard < GATHER_MOST and rc == mqtt.MQTT_ERR_SUCCESS:
                time.sleep(GATHER_S)
        return rc

    # ------------------------------------------------------------ writing
    def _packet_write(self) -> Any:
        """Acknowledgements queued one after the other go out as one ``send``."""
        out = self._out_packet
        if len(out) > 1 and out[0]["command"] == PUBACK and out[0]["pos"] == 0:
            acks = [out.popleft()]
            while out and out[0]["command"] == PUBACK:  # (only the first can be partly sent)
                acks.append(out.popleft())
            joined = b"".join(a["packet"] for a in acks)
            out.appendleft({**acks[0], "packet": joined, "to_process": len(joined)})
        return super()._packet_write()

    def _packet_queue(self, command: int, packet: bytes | bytearray, mid: int, qos: int,
                      info: Any = None) -> Any:
        """A packet queued on paho's own thread (the acknowledgement of each message,
        sent from ``on_message``) needs no wake-up byte through paho's socket pair: a
        turn that heard messages writes what is queued before it ends, and any turn
        asks its ``select`` to write what is queued when it begins.  Two system calls
        saved per message heard."""
        if threading.current_thread() is not self._thread:
            return super()._packet_queue(command, packet, mid, qos, info)
        wake, self._sockpairW = self._sockpairW, None
        try:
            return super()._packet_queue(command, packet, mid, qos, info)
        finally:
            self._sockpairW = wake
