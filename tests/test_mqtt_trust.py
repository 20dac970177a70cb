"""What the table trusts on the broker, tried against a real mosquitto: the
documented set-up (docs/mqtt/companion.conf) binds each client id to its
user, so no login can take another's session; the table takes no command
from a retained message, tells the broker the largest packet it reads, and
logs and acts at a bounded rate whatever a flood sends it.  Waits are
bounded; nothing asserts a timing (a rate bound is derived from the time
the flood took, measured in the test)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from paho.mqtt.properties import Properties
from paho.mqtt.packettypes import PacketTypes
from test_mqtt_link import TID, Listener, link, online, settle, table

from mqtt import link as linkmod

from tests.mosquitto import Broker, documented_broker

USERS = {"venue": "venue-secret", "table-a": "a-secret", "table-b": "b-secret"}


def client(broker: Any, client_id: str, user: str | None = None, *, clean_start: bool = True,
           expiry_s: int = 0) -> paho.Client:
    """A bare MQTT 5 client, connected (CONNACK waited for, bounded)."""
    c = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
    if user is not None:
        c.username_pw_set(user, USERS[user])
    answered = threading.Event()
    c.on_connect = lambda *a: answered.set()
    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = expiry_s
    c.connect(broker.host, broker.port, clean_start=clean_start, properties=props)
    c.loop_start()
    assert answered.wait(10), "the broker never answered"
    return c


def bye(c: paho.Client) -> None:
    c.disconnect()
    c.loop_stop()


@pytest.fixture
def documented(tmp_path: Path) -> Iterator[Broker]:
    b = documented_broker(tmp_path / "broker", tmp_path, USERS)
    yield b
    b.stop()


# ------------------------------------------------------- borrowing a client id
def test_finding_a_table_using_the_venues_client_id_cannot_wipe_the_venues_queued_session(
        documented: Broker) -> None:
    got: list[str] = []
    # the venue as venue/subscriber.py holds it: clean start off, a session that outlives it
    venue = client(documented, "venue-hall", "venue", clean_start=False, expiry_s=7 * 86400)
    subscribed = threading.Event()
    venue.on_subscribe = lambda *a: subscribed.set()
    venue.subscribe("companion/+/play", qos=1)
    assert subscribed.wait(10)
    bye(venue)  # away: the broker queues for it
    a = client(documented, "companion-table-a", "table-a")
    for n in range(3):
        a.publish("companion/table-a/play", f'{{"id": "table-a/p/{n}"}}'.encode(), qos=1).wait_for_publish(10)
    bye(a)
    thief = client(documented, "venue-hall", "table-b", clean_start=True)  # the venue's id, a clean start
    bye(thief)
    venue = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="venue-hall", protocol=paho.MQTTv5)
    venue.username_pw_set("venue", USERS["venue"])
    venue.on_message = lambda c, u, m: got.append(m.payload.decode())
    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = 7 * 86400
    venue.connect(documented.host, documented.port, clean_start=False, properties=props)
    venue.loop_start()
    try:
        deadline = time.monotonic() + 10
        while len(got) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(got) == 3, f"{len(got)} of 3 plays queued for the venue arrived"
    finally:
        bye(venue)


def test_finding_a_table_using_another_tables_client_id_never_knocks_it_off(
        documented: Broker, tmp_path: Path) -> None:
    (tmp_path / "pw").write_text(USERS["table-a"] + "\n", encoding="utf-8")
    (tmp_path / "pw").chmod(0o600)
    board = Listener(documented, topic="companion/table-a/status", user=("venue", USERS["venue"]))
    t = table(tmp_path / "a", documented.address, table_id="table-a", username="table-a",
              password_file=str(tmp_path / "pw"))
    try:
        board.wait_for(lambda: any(p == b"online" for _, p, _ in board.got), pump=t)
        a = link(t)
        assert a._connection == 1 and linkmod.client_id(a.conf) == "table-a"  # what the broker calls it
        # table B logs in under table A's client ids: the link's, and its user name
        for stolen in ("companion-table-a", "table-a", "table-a"):
            bye(client(documented, stolen, "table-b"))
        settle(t, lambda: a._connected)
        time.sleep(1.5)  # a bounded look: a table knocked off reconnects after 1 s
        assert [p for _, p, _ in board.got if p == b"offline"] == [], "table A was knocked off"
        assert a._connection == 1, f"table A had to connect {a._connection} times"
    finally:
        t.close()
        board.close()
