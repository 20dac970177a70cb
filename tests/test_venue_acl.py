"""docs/mqtt/acl on a real mosquitto: a table (user name = its table id) may
write only its own topics, the venue hears every table, nobody without a
password gets in.  Table A publishing on table B's topic never reaches the
venue: the broker drops it, whatever the payload says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from venue_kit import Table, state, wait

from tests.mosquitto import documented_broker
from venue.app import Venue

USERS = {"venue": "venue-secret", "table-a": "a-secret", "table-b": "b-secret"}


@pytest.fixture
def locked(tmp_path: Path) -> Any:
    """The broker as docs/mqtt/companion.conf sets it up (its ACL, a password file)."""
    b = documented_broker(tmp_path / "broker", tmp_path, USERS)
    yield b
    b.stop()


def test_a_table_cannot_write_another_tables_topic(locked: Any, tmp_path: Path) -> None:
    heard: list[str] = []
    venue = Venue(tmp_path / "venue", (locked.host, locked.port), None, ident="venue-acl", username="venue",
                  password=USERS["venue"], report=lambda line: None)
    venue.listeners.append(lambda change: heard.append(change.id))
    venue.start()
    a = Table(locked, "table-a", "table-a", USERS["table-a"])
    try:
        wait(venue.ear.subscribed.is_set, what="the venue's subscription")
        a.send("companion/table-b/status", b"online", retain=True)  # B's topic, B's own payload: still A's
        a.send("companion/table-b/state", state("table-b", game="one-night"), retain=True)
        a.send("companion/table-a/status", b"online", retain=True)  # its own: heard, and after the others
        wait(lambda: "table-a" in heard, what="table A's own status")
        assert heard == ["table-a"]
        assert [t["id"] for t in venue.board()["tables"]] == ["table-a"]
        assert venue.store.counts()["refused"] == 0  # dropped by the broker: the venue never saw them
    finally:
        a.close()
        venue.stop()


def test_a_table_reads_only_its_own_commands(locked: Any) -> None:
    got: list[str] = []
    spy = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="spy")
    spy.username_pw_set("table-a", USERS["table-a"])
    spy.on_message = lambda c, u, m: got.append(m.topic)
    spy.connect(locked.host, locked.port)
    spy.loop_start()
    b = Table(locked, "table-b", "table-b", USERS["table-b"])
    try:
        ok = []
        spy.on_subscribe = lambda *args: ok.append(1)
        spy.subscribe([("companion/+/#", 1), ("companion/table-a/command", 1)])
        wait(lambda: ok, what="the spy's subscription")
        b.send("companion/table-b/state", state("table-b"))
        b.send("companion/table-a/command", b"next")  # B may not press A's buttons either
        # A writes its own and may not read it back (from the spy's own connection: with client ids
        # bound to user names, a second connection as table-a would take the spy's place)
        spy.publish("companion/table-a/state", b"probe", qos=1).wait_for_publish(5)
        import time

        time.sleep(0.5)
        assert got == []
    finally:
        b.close()
        spy.disconnect()
        spy.loop_stop()


@pytest.mark.parametrize("user, password", [(None, None), ("table-a", "wrong"), ("nobody", "x")])
def test_nobody_without_the_password_gets_in(locked: Any, user: str | None, password: str | None) -> None:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="stranger", protocol=mqtt.MQTTv5)
    if user is not None:
        c.username_pw_set(user, password)
    reasons: list[Any] = []
    c.on_connect = lambda cl, u, f, reason, p: reasons.append(reason)
    c.connect(locked.host, locked.port)
    c.loop_start()
    try:
        wait(lambda: reasons, what="the broker's answer")
        assert reasons[0].is_failure
    finally:
        c.loop_stop()
