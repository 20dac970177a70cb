"""docs/mqtt/acl on a real mosquitto: a table (user name = its table id) may
write only its own topics, the venue hears every table, nobody without a
password gets in.  Table A publishing on table B's topic never reaches the
venue: the broker drops it, whatever the payload says."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from venue_kit import ROOT, Table, state, wait

from tests.mosquitto import Broker
from venue.app import Venue

PASSWD = shutil.which("mosquitto_passwd")
USERS = {"venue": "venue-secret", "table-a": "a-secret", "table-b": "b-secret"}


@pytest.fixture
def locked(tmp_path: Path) -> Any:
    if PASSWD is None:
        pytest.skip("mosquitto_passwd is not installed (Debian: mosquitto)")
    passwd = tmp_path / "passwd"
    for i, (user, password) in enumerate(USERS.items()):
        subprocess.run([PASSWD, *(["-c"] if i == 0 else []), "-b", str(passwd), user, password], check=True,
                       capture_output=True)
    # run as root (a CI container), mosquitto would become user mosquitto and not read the test's files
    stay = ["user root"] if os.geteuid() == 0 else []
    b = Broker(tmp_path / "broker", extra=[f"acl_file {ROOT / 'docs' / 'mqtt' / 'acl'}", f"password_file {passwd}",
                                           "allow_anonymous false", *stay]).start()
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
        a = Table(locked, "table-a-self", "table-a", USERS["table-a"])
        a.send("companion/table-a/status", b"online")  # A writes its own; it may not read it back
        a.close()
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
