"""How the venue's ear reads the broker's socket (venue/paho_client.py): what
waits there is read in bulk and all of it handled in the same turn, the turn's
acknowledgements go out together before it waits, and nothing read ahead on
one connection is taken for the next one's."""

from __future__ import annotations

import json
import socket
import sqlite3
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from test_venue_schema import play
from venue_kit import state

from venue import paho_client
from venue.paho_client import _Client
from venue.store import Store
from venue.subscriber import Subscriber


class _Counted:
    """The client's end of a socket pair, counting paho's calls into it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.recvs, self.sends = sock, 0, 0

    def recv(self, n: int) -> bytes:
        self.recvs += 1
        return self.sock.recv(n)

    def send(self, data: bytes) -> int:
        self.sends += 1
        return self.sock.send(data)

    def fileno(self) -> int:
        return self.sock.fileno()

    def close(self) -> None:
        self.sock.close()


def publish(table: str, mid: int, kind: str = "state", payload: bytes | None = None) -> bytes:
    """A table's message as mosquitto passes it on to an MQTT 5 subscriber (QoS 1, no
    properties): by default a state."""
    topic = f"companion/{table}/{kind}".encode()
    if payload is None:
        payload = json.dumps({"table": table, "game": None, "lang": "en", "online": True}).encode()
    body = struct.pack("!H", len(topic)) + topic + struct.pack("!H", mid) + b"\x00" + payload
    length, n = b"", len(body)
    while True:
        n, byte = n >> 7, n & 0x7F
        length += bytes([byte | (0x80 if n else 0)])
        if not n:
            break
    return b"\x32" + length + body


def puback(mid: int) -> bytes:
    return struct.pack("!BBH", 0x40, 2, mid)


@pytest.fixture
def ear() -> Iterator[tuple[_Client, _Counted, socket.socket, list[mqtt.MQTTMessage]]]:
    """A venue's client on one end of a socket pair (the broker's end returned),
    acknowledging each message it hears, as the venue does once it is kept."""
    mine, broker = socket.socketpair()
    mine.setblocking(False)
    broker.settimeout(2)
    client = _Client(CallbackAPIVersion.VERSION2, client_id="t", protocol=mqtt.MQTTv5, manual_ack=True)
    heard: list[mqtt.MQTTMessage] = []

    def on_message(c: Any, _u: Any, m: mqtt.MQTTMessage) -> None:
        heard.append(m)
        c.ack(m.mid, m.qos)

    client.on_message = on_message
    counted = _Counted(mine)
    client._sock = counted  # type: ignore[assignment]
    yield client, counted, broker, heard
    mine.close()
    broker.close()


def test_messages_waiting_together_are_read_with_one_recv_and_all_handled(ear: Any) -> None:
    """Three tables' states waiting on the socket: one ``recv`` takes them (paho alone asks
    four times per message: its first byte, its length byte by byte, its body), all three
    are handled in the same read, none left behind where ``select`` cannot see it, and
    those after the first are taken whole from what was read, not in paho's small steps."""
    client, sock, broker, heard = ear
    paho_reads: list[int] = []
    real = client._packet_read
    client._packet_read = lambda: paho_reads.append(1) or real()
    broker.sendall(publish("t1", 1) + publish("t2", 2) + publish("t3", 3))
    assert client.loop_read() == mqtt.MQTT_ERR_SUCCESS
    assert [(m.topic, m.mid, m.qos) for m in heard] == [(f"companion/t{i}/state", i, 1) for i in (1, 2, 3)]
    assert json.loads(heard[2].payload)["table"] == "t3"
    assert sock.recvs == 1
    assert len(paho_reads) == 1  # the first read the socket; the others were taken whole from what it read


def test_other_packets_among_the_tables_messages_are_read_paho_s_way(ear: Any) -> None:
    """Read ahead with tables' messages: a ping's answer, a message with MQTT 5
    properties and one at QoS 0 are read by paho as ever, each in its place."""
    client, _sock, broker, heard = ear
    topic = b"\x00\x12companion/t2/state"
    expiry = topic + b"\x00\x02" + b"\x05\x02\x00\x00\x00\x3c" + b'{"table": "t2"}'  # an expiry interval
    qos0 = b"\x00\x12companion/t3/state\x00on"
    broker.sendall(publish("t1", 1) + b"\xd0\x00" + b"\x32" + bytes([len(expiry)]) + expiry
                   + b"\x30" + bytes([len(qos0)]) + qos0 + publish("t4", 4) + publish("t5", 5))
    client.loop_read()
    assert [(m.topic, m.qos) for m in heard] == [("companion/t1/state", 1), ("companion/t2/state", 1),
                                                 ("companion/t3/state", 0), ("companion/t4/state", 1),
                                                 ("companion/t5/state", 1)]
    assert heard[1].properties.MessageExpiryInterval == 60 and heard[2].payload == b"on"
    assert json.loads(heard[4].payload)["table"] == "t5" and heard[4].mid == 5


def test_a_packet_split_across_reads_is_read_whole(ear: Any) -> None:
    """Half a packet read ahead with a whole one: the whole is heard, the half waits for its rest."""
    client, _sock, broker, heard = ear
    second = publish("t2", 2)
    broker.sendall(publish("t1", 1) + second[:9])
    client.loop_read()
    assert [m.mid for m in heard] == [1]
    broker.sendall(second[9:])
    client.loop_read()
    assert [(m.topic, m.mid) for m in heard] == [("companion/t1/state", 1), ("companion/t2/state", 2)]


def test_a_turns_acknowledgements_go_out_together_before_it_waits(ear: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn that heard messages acknowledges them (one ``send``, in order) before it
    waits GATHER_S for more; a turn that heard nothing does not wait, nor one that
    heard GATHER_MOST or more (a backlog is read on at once)."""
    client, sock, broker, heard = ear
    waits: list[tuple[float, bytes]] = []

    def sleep(s: float) -> None:
        broker.setblocking(False)
        try:
            acked = broker.recv(4096)
        except BlockingIOError:
            acked = b""
        broker.settimeout(2)
        waits.append((s, acked))

    monkeypatch.setattr(paho_client.time, "sleep", sleep)
    broker.sendall(publish("t1", 1) + publish("t2", 2) + publish("t3", 3))
    assert client._loop(1.0) == mqtt.MQTT_ERR_SUCCESS
    assert len(heard) == 3
    assert waits == [(paho_client.GATHER_S, puback(1) + puback(2) + puback(3))]
    assert sock.sends == 1
    assert client._loop(0.0) == mqtt.MQTT_ERR_SUCCESS  # nothing came: no wait
    assert len(waits) == 1
    many = range(10, 10 + paho_client.GATHER_MOST)
    broker.sendall(b"".join(publish(f"t{i}", i) for i in many))
    assert client._loop(1.0) == mqtt.MQTT_ERR_SUCCESS
    assert len(heard) == 3 + paho_client.GATHER_MOST and len(waits) == 1
    assert broker.recv(4096) == b"".join(puback(i) for i in many)


def test_nothing_read_ahead_on_a_connection_is_taken_for_the_next(ear: Any) -> None:
    """A connection let go with a message read ahead behind the packet that ended it (one
    announcing more than MAX_PACKET): the next connection starts with its own bytes."""
    client, _sock, broker, heard = ear
    too_big = b"\x32\xff\xff\x7f"  # PUBLISH, remaining length 2 MiB: over MAX_PACKET
    broker.sendall(too_big + publish("old", 1))
    client.loop_read()
    assert heard == [] and client._sock is None  # let go
    mine, broker2 = socket.socketpair()
    mine.setblocking(False)
    client._sock = _Counted(mine)
    client._in_packet = _Client(CallbackAPIVersion.VERSION2, client_id="u")._in_packet  # as paho's reconnect does
    broker2.sendall(publish("new", 2))
    client.loop_read()
    assert [m.topic for m in heard] == ["companion/new/state"]
    mine.close()
    broker2.close()


def test_a_play_is_acknowledged_in_its_turn_only_once_it_is_on_the_disk(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn with table states and a play: every acknowledgement goes out before the turn
    waits, and the play's only once it is committed — a reader of the database file (a
    venue started after a power cut) finds it; the states around it are acknowledged too
    (a state comes again, retained, at the next subscription)."""
    store = Store(tmp_path)
    ear = Subscriber(store, "127.0.0.1", 1, ident="t")
    mine, broker = socket.socketpair()
    mine.setblocking(False)
    broker.settimeout(2)
    ear.client._sock = mine  # type: ignore[assignment]
    on_disk: list[tuple[bytes, int]] = []

    def sleep(_s: float) -> None:
        acked = broker.recv(4096)
        with sqlite3.connect(tmp_path / "venue.sqlite") as other:
            on_disk.append((acked, other.execute("SELECT COUNT(*) FROM plays").fetchone()[0]))

    monkeypatch.setattr(paho_client.time, "sleep", sleep)
    broker.sendall(publish("t1", 1, payload=json.dumps(state("t1")).encode())
                   + publish("t1", 2, "play", json.dumps(play("t1")).encode())
                   + publish("t2", 3, payload=json.dumps(state("t2")).encode()))
    assert ear.client._loop(1.0) == mqtt.MQTT_ERR_SUCCESS
    assert on_disk == [(puback(1) + puback(2) + puback(3), 1)]
    assert ear.heard == 3 and store.counts()["plays"] == 1
    mine.close()
    broker.close()
    store.close()
