"""The table on a real broker (DESIGN.md, *MQTT*; docs/integrate/mqtt.md): a
mosquitto on a loopback port (the ``broker`` fixture) and a paho client that
reads what the table sends.  Every wait is bounded (generously: the machine
may be shared); nothing asserts a timing: what is checked is what arrived,
how often, and in which order."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from privacy import Secrets

from companion.app import config
from companion.app.config import ConfigError
from companion.app.simulate import load_script
from companion.core.events import TABLE, Press
from companion.core.messages import Event
from companion.core.wire import published
from companion.games import manifests
from conftest import Table, example_script, example_scripts
from mqtt import link as linkmod
from mqtt import settings
from tests.mosquitto import needs_mosquitto_passwd, password_broker

PUBLISHED = published(manifests())  # what the outbox publishes: the table's events and the games' manifests'
ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted([*example_scripts("*.yaml"), *example_scripts("demagogos/*.yaml"),
                  *example_scripts("one-night/*.yaml")])  # both editions, every role, phone votes
TID = "t1"


class Listener:
    """A paho subscriber to ``companion/#`` that keeps every message, and
    subscribes again whenever it reconnects (the broker restarted)."""

    def __init__(self, broker: Any, topic: str = "companion/#", user: tuple[str, str] | None = None,
                 ca_file: Path | None = None) -> None:
        self.got: list[tuple[str, bytes, bool]] = []
        self._cond = threading.Condition()
        self._ready = threading.Event()
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=f"listener-{id(self)}",
                                  protocol=paho.MQTTv5)
        self.client.reconnect_delay_set(1, 1)
        if user is not None:
            self.client.username_pw_set(*user)
        if ca_file is not None:
            self.client.tls_set(ca_certs=str(ca_file))

        def on_connect(c: Any, u: Any, f: Any, rc: Any, p: Any) -> None:
            c.subscribe(topic, qos=1)

        def on_subscribe(c: Any, u: Any, mid: Any, rcs: Any, p: Any) -> None:
            self._ready.set()

        def on_message(c: Any, u: Any, m: Any) -> None:
            with self._cond:
                self.got.append((m.topic, bytes(m.payload), bool(m.retain)))
                self._cond.notify_all()

        self.client.on_connect, self.client.on_subscribe, self.client.on_message = on_connect, on_subscribe, on_message
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        assert self._ready.wait(10), "the listener never subscribed"

    def of(self, name: str) -> list[bytes]:
        with self._cond:
            return [p for t, p, _ in self.got if t == f"companion/{TID}/{name}"]

    def json(self, name: str) -> list[dict[str, Any]]:
        return [json.loads(p) for p in self.of(name)]

    def wait_for(self, pred: Callable[[], bool], timeout: float = 40.0, pump: Table | None = None) -> None:
        deadline = time.monotonic() + timeout
        while not pred():
            assert time.monotonic() < deadline, f"not within {timeout} s; got {self.got[-5:]}"
            if pump is not None:
                pump.sim.loop.pump()
            with self._cond:
                self._cond.wait(0.05)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


@pytest.fixture
def listener(broker: Any) -> Iterator[Listener]:
    sub = Listener(broker)
    yield sub
    sub.close()


def mqtt(address: str, **more: Any) -> dict[str, Any]:
    return {"broker": address, "table_id": TID, **more}


def table(state: Path, address: str, script: Any = None, language: str | None = None, **more: Any) -> Table:
    overrides = dict(script.overrides) if script is not None else {}
    if language is not None:
        overrides["language"] = language
    return Table(state, draws=script.draws if script is not None else None, **overrides, mqtt=mqtt(address, **more))


def link(t: Table) -> linkmod.MqttLink:
    device = t.sim.app.sinks["mqtt"]
    assert isinstance(device, linkmod.MqttLink)
    return device


def settle(t: Table, until: Callable[[], bool], timeout: float = 40.0) -> None:
    """Pump the loop (the link's snapshots and lines run on it) until ``until``."""
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, f"not within {timeout} s"
        t.sim.loop.pump()
        time.sleep(0.02)


def outbox_rows(state: Path) -> int:
    db = sqlite3.connect(state / "journal.sqlite")
    try:
        return int(db.execute("SELECT count(*) FROM outbox").fetchone()[0])
    finally:
        db.close()


def play(t: Table, script: Any, pump_each: Callable[[], None] | None = None) -> None:
    for _, kind, value in script.steps:
        t.do(kind, value)
        if pump_each is not None:
            pump_each()


def online(sub: Listener) -> Callable[[], bool]:
    return lambda: bool(sub.of("status")) and sub.of("status")[-1] == b"online"


def delivered(sub: Listener, t: Table) -> Callable[[], bool]:
    """Every outbox row written so far has been acknowledged (and so received)."""
    return lambda: outbox_rows(t.state) == 0 and bool(sub.of("play"))


# ------------------------------------------------------------------ config
@pytest.mark.parametrize("text, line, words", [
    ("mqtt:\n  broker: 'broker.local:99999'\n", 2, "mqtt.broker must be HOST or HOST:PORT"),
    ("mqtt:\n  broker: [a]\n", 2, "mqtt.broker must be HOST[:PORT]"),
    ("mqtt:\n  table_id: Table_3\n", 2, "mqtt.table_id must be 1 to 32 of a-z"),
    ("mqtt:\n  tls: {cert_file: c.pem}\n", 2, "mqtt.tls must be null or {ca_file"),
    ("mqtt:\n  tls: {ca_file: ca.pem, cert_file: c.pem}\n", 2, "cert_file and key_file together"),
    ("mqtt:\n  commands: maybe\n", 2, "mqtt.commands must be on or off"),
    ("mqtt:\n  password: hunter2\n", 2, "unknown setting 'mqtt.password'"),
])
def test_a_bad_mqtt_setting_names_file_line_and_problem(tmp_path: Path, text: str, line: int, words: str) -> None:
    p = tmp_path / "c.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        config.load([p])
    assert str(e.value).startswith(f"{p}:{line}: ") and words in str(e.value), str(e.value)


@pytest.mark.parametrize("written, means", [
    ("off", False), ('"off"', False), ("'on'", True), ("on", True), ('"Yes"', True), ("'false'", False),
])
@pytest.mark.parametrize("switch", ["commands", "homeassistant"])
def test_a_quoted_off_in_mqtt_reads_like_the_bare_one(tmp_path: Path, switch: str, written: str,
                                                        means: bool) -> None:
    """D7: mqtt's switches use the config's one switch check (core settings),
    so a quoted "off" is the switch off, as YAML's bare off is; a word that
    is no switch is still ``file:line: problem``."""
    p = tmp_path / "c.yaml"
    p.write_text(f"mqtt:\n  broker: b.local\n  {switch}: {written}\n", encoding="utf-8")
    assert config.load([p])["mqtt"][switch] is means
    p.write_text(f"mqtt:\n  broker: b.local\n  {switch}: 'offf'\n", encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        config.load([p])
    assert str(e.value) == f"{p}:3: mqtt.{switch} must be on or off (true or false), not 'offf'"


def test_mqtt_is_off_by_default_and_the_cli_sets_or_clears_the_broker(tmp_path: Path) -> None:
    assert config.defaults()["mqtt"] == {"broker": None, "table_id": None, "username": None, "password_file": None,
                                         "tls": None, "commands": False, "homeassistant": True}
    args = type("Args", (), {"mqtt": "broker.local", "config": []})()
    assert settings.broker(config.for_command(args)) == ("broker.local", 1883)
    args.mqtt = "[::1]:1884"
    assert settings.broker(config.for_command(args)) == ("::1", 1884)
    args.mqtt = "off"
    assert not settings.enabled(config.for_command(args))
    args.mqtt = "a b:1"
    with pytest.raises(ConfigError, match="overrides.*mqtt.broker must be HOST"):
        config.for_command(args)
    assert settings.parse_broker("b.local", tls=True) == ("b.local", 8883)


def test_the_table_id_defaults_to_the_host_name_made_safe() -> None:
    assert settings.host_table_id("Games-Pi.Local") == "games-pi-local"
    assert settings.host_table_id("-" * 3 + "x" * 40) == "x" * 29
    assert settings.host_table_id("___") == "table"
    assert all(settings.TABLE_ID.fullmatch(settings.host_table_id(h)) for h in ("ÄÖ", "a" * 99, "9x"))
    cfg = config.load([], {"mqtt": {"broker": "b"}})
    assert settings.table_id(cfg) == settings.host_table_id(socket.gethostname())


def test_without_a_broker_there_is_no_link_and_the_journal_writes_no_outbox_rows(tmp_path: Path) -> None:
    t = Table(tmp_path, **load_script(example_script("seven-knights.yaml")).overrides)
    try:
        play(t, load_script(example_script("seven-knights.yaml")))
        assert "mqtt" not in t.sim.app.sinks and t.sim.loop.out.publish_as is None
        assert t.of("game_over") and outbox_rows(tmp_path) == 0
    finally:
        t.close()


def test_outbox_a_place_is_never_given_twice_once_the_outbox_is_empty(tmp_path: Path) -> None:
    """The sender hands rows "after (seq, k)": had an emptied outbox handed out
    its row ids again (SQLite's rowid does), the next rows would sit below that
    mark and never be sent."""
    from companion.runtime.journal import Journal
    from companion.runtime.outbox import OutboxStore

    j = Journal(tmp_path / "journal.sqlite")
    store = OutboxStore(j.path, j.connection)
    try:
        def one(seq: int, play_id: int | None) -> list[tuple[str, str, str]]:
            return [(f"{TID}/e/{seq}.0", f"companion/{TID}/event", "{}")]

        j.append(Press("next"), 0.0, 0.0, letters=one)
        [first] = store.pending()
        store.done([first.n])
        j.append(Press("next"), 1.0, 1.0, letters=one)
        [second] = store.pending(after=first.n)
        assert second.n > first.n and second.id != first.id
        j.append(Press("next"), 2.0, 2.0)  # no letters: no row
        assert store.count() == 1
    finally:
        store.close()
        j.close()


def test_the_state_reads_the_headline_when_the_public_view_has_one() -> None:
    """The headline (`/api/table`, docs/reference/pages.md) gives the step, whom the table waits
    for (seat ids: the state names them) and the timer's deadline; by night
    the state is the night's whatever the view says."""
    from mqtt import topics

    view = {"phase": "playing", "lang": "ja", "game": "one-night", "seats": [{"id": "red", "name": "aki"},
                                                                            {"id": "blue", "name": "blue"}],
            "tonight": {"one-night": {"aki": 1, "blue": 0}}, "play": {"step": "discussion", "whose_turn": ["x"]},
            "headline": {"step": "discussion", "waiting_for": ["red", "blue"], "anyone": True, "count": None,
                         "deadline": 1767300000.5, "night": False}}
    assert topics.state(view, TID) == {"table": TID, "game": "one-night", "step": "discussion",
                                       "waiting_for": ["aki", "blue"], "round": None, "totals": {"aki": 1, "blue": 0},
                                       "deadline": 1767300000.5, "night": False, "lang": "ja", "online": True}
    night = {**view, "headline": {**view["headline"], "night": True}}
    assert topics.state(night, TID) | {"step": "x"} == topics.state(view, TID) | {
        "step": "x", "waiting_for": [], "deadline": None, "night": True}
    assert topics.state(night, TID)["step"] == "night"
    assert topics.command(b" next\n") == "next" and topics.command(b"\xff") is None and topics.command(b"") is None


# ------------------------------------------------------------ what is sent
def test_status_is_online_retained_and_a_clean_close_says_offline(broker: Any, listener: Listener,
                                                                  tmp_path: Path) -> None:
    t = table(tmp_path, broker.address)
    try:
        listener.wait_for(online(listener))
        listener.wait_for(lambda: bool(listener.of("state")), pump=t)
        late = Listener(broker)  # a newcomer gets the retained status and state at once
        try:
            late.wait_for(lambda: bool(late.of("status")) and bool(late.of("state")))
            assert all(retained for topic, _, retained in late.got)
            assert late.json("state")[-1] == {"table": TID, "game": None, "step": "idle", "waiting_for": [],
                                              "round": None, "totals": {}, "deadline": None, "night": False,
                                              "lang": "en", "online": True}
        finally:
            late.close()
    finally:
        t.close()
    listener.wait_for(lambda: listener.of("status")[-1:] == [b"offline"])


def test_the_last_will_says_offline_when_the_daemon_is_killed(broker: Any, listener: Listener,
                                                              tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"mqtt:\n  table_id: {TID}\nvoice:\n  backend: silent\nweb:\n  listen: null\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COMPANION_CONFIG": str(tmp_path / "none.yaml")}
    proc = subprocess.Popen([sys.executable, "-m", "companion.app.cli", "--config", str(cfg), "run", "--simulate",
                             "--no-input", "--json", "--state", str(tmp_path / "state"), "--mqtt", broker.address],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        listener.wait_for(online(listener), timeout=30)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        listener.wait_for(lambda: listener.of("status")[-1:] == [b"offline"])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_events_and_plays_arrive_once_each_with_stable_ids(broker: Any, listener: Listener, tmp_path: Path) -> None:
    script = load_script(example_script("seven-knights.yaml"))
    t = table(tmp_path, broker.address, script)
    try:
        listener.wait_for(online(listener))
        play(t, script)
        listener.wait_for(delivered(listener, t), pump=t)
        events, plays = listener.json("event"), listener.json("play")
        logged = [e for e in t.events if e["event"] in PUBLISHED]
        assert len(logged) > 5 and [e["event"] for e in logged] == [e["event"] for e in events]
        for sent, log in zip(events, logged, strict=True):  # the log's fields exactly, with id, table and wall time
            assert {k: v for k, v in sent.items() if k not in ("id", "table", "t")} == {
                k: v for k, v in log.items() if k != "t"}
            assert sent["table"] == TID and isinstance(sent["t"], float)
        ids = [e["id"] for e in events] + [p["id"] for p in plays]
        assert len(set(ids)) == len(ids)
        assert all(i.startswith(f"{TID}/e/") for i in ids[:-1])
        [record] = t.sim.app.journal.plays()
        [sent_play] = plays
        assert sent_play["id"] == f"{TID}/p/{record['id']}" and sent_play["game"] == "seven-knights"
        assert sent_play["play"] == {k: v for k, v in record.items() if k not in ("id", "evening", "game")}
        assert sent_play["evening"] == record["evening"] and sent_play["table"] == TID
        assert [p["name"] for p in sent_play["players"]] == [p["name"] for p in record["players"]]
        assert {p["team"] for p in sent_play["players"]} <= {"knights", "witch"}
        assert [p["winner"] for p in sent_play["players"]] == [p["winner"] for p in record["players"]]
    finally:
        t.close()


def test_an_event_id_is_its_inputs_journal_seq_and_its_index_among_that_inputs_events(
        broker: Any, listener: Listener, tmp_path: Path) -> None:
    script = load_script(example_script("seven-knights.yaml"))
    t = table(tmp_path, broker.address, script)
    try:
        listener.wait_for(online(listener))
        play(t, script)
        listener.wait_for(delivered(listener, t), pump=t)
        seqs = [e.seq for e in t.sim.app.journal.entries()]
        for e in listener.json("event"):
            seq, n = e["id"].removeprefix(f"{TID}/e/").split(".")
            assert int(seq) in seqs and int(n) >= 0
        by_seq: dict[str, list[int]] = {}
        for e in listener.json("event"):
            seq, n = e["id"].removeprefix(f"{TID}/e/").split(".")
            by_seq.setdefault(seq, []).append(int(n))
        assert all(ns == list(range(len(ns))) for ns in by_seq.values())
    finally:
        t.close()


def test_the_outbox_survives_the_broker_down_and_a_restart_and_delivers_every_row_once(
        broker: Any, tmp_path: Path) -> None:
    script = load_script(example_script("seven-knights.yaml"))
    broker.stop()
    t = table(tmp_path, broker.address, script)  # the broker is down from the start
    try:
        play(t, script)
        assert t.of("game_over")  # the table played on, unhindered
        assert link(t).published == {}
    finally:
        t.close()
    waiting = outbox_rows(tmp_path)
    logged = sum(e["event"] in PUBLISHED for e in t.events) + 1  # and the play
    assert waiting == logged
    broker.start()
    sub = Listener(broker)
    again = table(tmp_path, broker.address)  # the journal reopened: the table resumes, the outbox drains
    try:
        sub.wait_for(delivered(sub, again), pump=again)
        ids = [e["id"] for e in sub.json("event")] + [p["id"] for p in sub.json("play")]
        assert len(ids) == len(set(ids)) == waiting
        assert [e["event"] for e in sub.json("event")] == [e["event"] for e in t.events if e["event"] in PUBLISHED]
    finally:
        again.close()
        sub.close()


def test_a_message_whose_acknowledgement_was_lost_goes_again_after_a_restart_with_its_id(
        broker: Any, listener: Listener, tmp_path: Path) -> None:
    """Sent, received, and the PUBACK lost (the power went): the row stays in
    the outbox and is sent again at the next start, with the same id, so the
    receiver keeps one of each."""
    from old_broker import OldBroker

    lossy = OldBroker(broker, drop_pubacks=True)
    script = load_script(example_script("seven-knights.yaml"))
    t = table(tmp_path, lossy.address, script)
    try:
        listener.wait_for(online(listener))
        play(t, script)
        listener.wait_for(lambda: bool(listener.of("play")), pump=t)
        first = [e["id"] for e in listener.json("event")] + [p["id"] for p in listener.json("play")]
        listener.wait_for(lambda: lossy.dropped >= len(first), pump=t)  # every acknowledgement lost
    finally:
        t.close()
    assert outbox_rows(tmp_path) == len(first)
    lossy.close()
    again = table(tmp_path, broker.address)
    try:
        listener.wait_for(lambda: outbox_rows(tmp_path) == 0 and len(listener.of("play")) == 2, pump=again)
    finally:
        again.close()
    every = [e["id"] for e in listener.json("event")] + [p["id"] for p in listener.json("play")]
    assert sorted(every) == sorted(first * 2)  # each twice on the wire …
    assert len(set(every)) == len(first)  # … once by id: nothing lost, a duplicate is known as one


@pytest.mark.parametrize("page", ["plays", "inputs"])
def test_outbox_rows_are_salvaged_with_a_damaged_journal(blackhole: str, tmp_path: Path, page: str) -> None:
    """A journal damaged on disk is recovered row by row at start: the outbox's
    rows come through with the rest (none taken for a play, none lost)."""
    from test_journal_guard import _checkpointed, _garbage_at_page

    script = load_script(example_script("seven-knights.yaml"))
    t = table(tmp_path, blackhole, script)
    try:
        play(t, script)
    finally:
        t.close()
    db = sqlite3.connect(tmp_path / "journal.sqlite")
    before = db.execute("SELECT seq, k, id, topic, payload FROM outbox ORDER BY seq, k").fetchall()
    plays = db.execute("SELECT count(*) FROM plays").fetchone()[0]
    db.close()
    assert len(before) > 5
    _checkpointed(tmp_path)
    _garbage_at_page(page)(tmp_path / "journal.sqlite")
    again = table(tmp_path, blackhole)
    try:
        assert [e for e in again.of("error") if "kept as" in e["message"]]
        db = sqlite3.connect(tmp_path / "journal.sqlite")
        assert db.execute("SELECT seq, k, id, topic, payload FROM outbox ORDER BY seq, k").fetchall() == before
        assert db.execute("SELECT count(*) FROM plays").fetchone()[0] <= plays
        db.close()
    finally:
        again.close()


def _outbox_ids(state: Path) -> list[str]:
    db = sqlite3.connect(state / "journal.sqlite")
    try:
        return [str(r[0]) for r in db.execute("SELECT id FROM outbox ORDER BY seq, k")]
    finally:
        db.close()


def test_finding_plays_after_restoring_an_old_backup_are_published_with_ids_never_used_before(
        blackhole: str, tmp_path: Path) -> None:
    """A restore puts older inputs back: the seqs and play ids after them are
    given out again.  With ids made of those alone, the game played after the
    restore was published under the ids of the game played before it, and a
    venue that keeps ids dropped it as a repeat: a play lost."""
    from companion.runtime.backups import make_backup, restore
    from companion.runtime.journal import Journal
    from venue import schema

    script = load_script(example_script("seven-knights.yaml"))
    table(tmp_path, blackhole, script).close()  # a journal with nothing yet: the backup to go back to
    journal = Journal(tmp_path / "journal.sqlite")
    backup = make_backup(journal, tmp_path / "start.sqlite")
    journal.close()

    def a_game() -> list[str]:
        t = table(tmp_path, blackhole, script)
        try:
            play(t, script)
            assert t.of("game_over")
        finally:
            t.close()
        return _outbox_ids(tmp_path)

    before = a_game()
    assert f"{TID}/p/1" in before  # a journal never put back keeps the agreed ids
    restore(tmp_path / "journal.sqlite", backup)
    after = a_game()
    assert len(after) == len(before) > 0  # the same game again, from the same start
    assert not set(after) & set(before)
    for mid in after:  # and the venue takes them
        kind = "play" if "/p/" in mid else "event"
        pattern = schema.PLAY_ID if kind == "play" else schema.EVENT_ID
        assert pattern.fullmatch(mid), mid


def test_the_broker_going_away_mid_game_loses_nothing_and_doubles_nothing(broker: Any, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # The listener (retrying each second) must be back on the restarted broker before the
    # table (each 3 s): a broker without persistence keeps nothing for a listener not yet there.
    monkeypatch.setattr(linkmod, "RECONNECT_S", (3, 3))
    script = load_script(example_script("seven-knights.yaml"))
    sub = Listener(broker)
    t = table(tmp_path, broker.address, script)
    try:
        sub.wait_for(online(sub))
        half = len(script.steps) // 2
        for _, kind, value in script.steps[:half]:
            t.do(kind, value)
        sub.wait_for(lambda: outbox_rows(tmp_path) == 0 and bool(sub.of("event")), pump=t)
        broker.stop()
        for _, kind, value in script.steps[half:]:
            t.do(kind, value)
        assert t.of("game_over") and outbox_rows(tmp_path) > 0
        sub._ready.clear()
        broker.start()
        assert sub._ready.wait(30), "the listener never came back"
        sub.wait_for(delivered(sub, t), timeout=90, pump=t)
        # What the broker acknowledged before it went is sent again at the reconnection
        # (it may have died before keeping it): on the wire twice, once by id.
        firsts = list({e["id"]: e for e in sub.json("event")}.values())
        assert [e["event"] for e in firsts] == [e["event"] for e in t.events if e["event"] in PUBLISHED]
        assert len({p["id"] for p in sub.json("play")}) == len(t.of("game_over"))
    finally:
        t.close()
        sub.close()


# --------------------------------------------------- a broker that checks
@needs_mosquitto_passwd
def test_a_broker_that_asks_for_a_password_gets_it_from_the_password_file(tmp_path: Path, readable: Path) -> None:
    b = password_broker(tmp_path, readable)
    (tmp_path / "pw").write_text("s3cret\n", encoding="utf-8")
    sub = Listener(b, user=("table", "s3cret"))
    t = table(tmp_path / "s", b.address, username="table", password_file=str(tmp_path / "pw"))
    try:
        sub.wait_for(online(sub))
        sub.wait_for(lambda: bool(sub.of("state")), pump=t)
    finally:
        t.close()
        sub.close()
        b.stop()


@needs_mosquitto_passwd
def test_a_wrong_or_unreadable_password_is_logged_and_the_table_plays_on(tmp_path: Path, readable: Path) -> None:
    b = password_broker(tmp_path, readable)
    (tmp_path / "pw").write_text("wrong\n", encoding="utf-8")
    sub = Listener(b, user=("table", "s3cret"))
    script = load_script(example_script("seven-knights.yaml"))
    t = table(tmp_path / "s", b.address, script, username="table", password_file=str(tmp_path / "pw"))
    t2 = table(tmp_path / "s2", b.address, username="table", password_file=str(tmp_path / "missing"))
    try:
        play(t, script)
        assert t.of("game_over")
        settle(t, lambda: any("refused us" in e["message"] for e in t.of("error")))
        settle(t2, lambda: any("cannot read password_file" in e["message"] for e in t2.of("error")))
        assert sub.of("status") == [] and link(t).published == {}
    finally:
        t.close()
        t2.close()
        sub.close()
        b.stop()


@pytest.mark.skipif(not shutil.which("openssl"), reason="openssl is not installed")
def test_tls_to_a_broker_whose_certificate_the_ca_file_vouches_for(tmp_path: Path, readable: Path) -> None:
    from tests.mosquitto import Broker

    cert, key = readable / "cert.pem", readable / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    key.chmod(0o644)
    b = Broker(tmp_path / "broker", extra=[f"certfile {cert}", f"keyfile {key}"]).start()
    sub = Listener(b, ca_file=cert)
    t = table(tmp_path / "s", b.address, tls={"ca_file": str(cert)})
    try:
        sub.wait_for(online(sub))
        sub.wait_for(lambda: bool(sub.of("state")), pump=t)
    finally:
        t.close()
        sub.close()
        b.stop()


def test_a_broker_that_refuses_mqtt_5_is_spoken_to_in_3_1_1(broker: Any, listener: Listener,
                                                             tmp_path: Path) -> None:
    from old_broker import OldBroker

    old = OldBroker(broker)
    script = load_script(example_script("madness-hour.yaml"))
    t = table(tmp_path, old.address, script)
    try:
        listener.wait_for(online(listener))
        play(t, script)
        listener.wait_for(delivered(listener, t), pump=t)
        assert old.refused >= 1 and link(t)._protocol == 3
        assert [e["event"] for e in listener.json("event")] == [e["event"] for e in t.events if e["event"] in PUBLISHED]
    finally:
        t.close()
        old.close()


# ---------------------------------------------------------------- commands
def _gather(t: Table) -> None:
    t.tap("game/one-night", "player/red", "player/blue", "player/green")


def test_commands_on_are_journaled_like_a_panel_press_and_anything_else_is_logged(
        broker: Any, listener: Listener, tmp_path: Path) -> None:
    t = table(tmp_path, broker.address, commands=True)
    try:
        listener.wait_for(online(listener))
        _gather(t)
        mark = t.mark()
        listener.client.publish(f"companion/{TID}/command", b"dance", qos=1).wait_for_publish(5)
        listener.client.publish(f"companion/{TID}/command", b"next", qos=1).wait_for_publish(5)
        settle(t, lambda: any(e["event"] == "accepted" and e["input"] == "next" for e in t.since(mark)))
        assert [e for e in t.since(mark, "error") if "ignored a command" in e["message"]]
        assert Press("next") in [e.input for e in t.sim.app.journal.entries()]
        assert len([e for e in t.since(mark) if e["event"] in ("accepted", "rejected")]) == 1
    finally:
        t.close()


def test_commands_off_nothing_from_the_broker_reaches_the_table(broker: Any, listener: Listener,
                                                                tmp_path: Path) -> None:
    t = table(tmp_path, broker.address)
    try:
        listener.wait_for(online(listener))
        _gather(t)
        mark = t.mark()
        listener.client.publish(f"companion/{TID}/command", b"next", qos=1).wait_for_publish(5)
        deadline = time.monotonic() + 1.0  # a bounded look: nothing may come
        while time.monotonic() < deadline:
            t.sim.loop.pump()
            time.sleep(0.05)
        assert not [e for e in t.since(mark) if e["event"] in ("accepted", "rejected")]
    finally:
        t.close()


# ------------------------------------------------- the table never waits
@pytest.fixture
def blackhole() -> Iterator[str]:
    """A loopback port whose listening socket never answers (the kernel
    completes the handshake; nothing ever reads or replies)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    yield f"127.0.0.1:{s.getsockname()[1]}"
    s.close()


def test_a_broker_that_never_answers_never_slows_a_tap(blackhole: str, tmp_path: Path) -> None:
    script = load_script(example_script("seven-knights.yaml"))
    t = table(tmp_path, blackhole, script)
    try:
        for _, kind, value in script.steps:
            mark = t.mark()
            t.do(kind, value)  # the loop's own thread: had it waited on the broker, this would hang
            if kind in ("tap", "press"):
                assert [e for e in t.since(mark) if e["event"] in ("accepted", "rejected")], (kind, value)
        assert t.of("game_over")
        assert link(t).published == {}  # nothing ever left: the broker never said CONNACK
        assert outbox_rows(tmp_path) == sum(e["event"] in PUBLISHED for e in t.events) + 1
    finally:
        t.close()


def _said(t: Table, key: str) -> int:
    return sum(e["event"] == "say" and e["key"] == key for e in t.events)


def test_the_table_hears_once_that_a_never_reached_link_is_down(blackhole: str, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linkmod, "DOWN_AFTER_S", 0.3)
    t = table(tmp_path, blackhole)
    try:
        settle(t, lambda: _said(t, "mqtt.down") == 1)
        assert [e for e in t.of("error") if "never reached" in e["message"]]
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            t.sim.loop.pump()
            time.sleep(0.05)
        assert _said(t, "mqtt.down") == 1 and _said(t, "mqtt.up") == 0
    finally:
        t.close()


def test_the_link_down_is_never_said_by_night_but_in_the_morning_and_back_once(
        broker: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linkmod, "DOWN_AFTER_S", 0.3)
    monkeypatch.setattr(linkmod, "RECONNECT_S", (1, 1))
    script = load_script(example_script("one-night.yaml"))
    sub = Listener(broker)
    t = table(tmp_path, broker.address, script, language="ja")
    try:
        sub.wait_for(online(sub))
        steps = list(script.steps)
        night = next(i for i, (_, k, v) in enumerate(steps) if k == "wait") # night has fallen before the first wait
        for _, kind, value in steps[:night]:
            t.do(kind, value)
        assert t.sim.loop.table.eyes_closed
        broker.stop()
        end = time.monotonic() + 1.5  # well past DOWN_AFTER_S, pumping: the line is owed, not said
        while time.monotonic() < end:
            t.sim.loop.pump()
            time.sleep(0.05)
        assert _said(t, "mqtt.down") == 0
        for _, kind, value in steps[night:]:
            t.do(kind, value)
        assert not t.sim.loop.table.eyes_closed
        settle(t, lambda: _said(t, "mqtt.down") == 1)
        [line] = [e for e in t.of("say") if e["key"] == "mqtt.down"]
        assert line["lang"] == "ja" and "会場" in line["text"]
        broker.start()
        settle(t, lambda: _said(t, "mqtt.up") == 1, timeout=30)
        assert _said(t, "mqtt.down") == 1
    finally:
        t.close()
        sub.close()


# ---------------------------------------------------------------- privacy
class BrokerWalk:
    """A whole game on the table with the broker listening; the private
    facts gathered after every step (a seat's page is gone once the game ends)."""

    def __init__(self, state: Path, broker: Any, script: Any) -> None:
        self.sub = Listener(broker)
        self.t = table(state, broker.address, script)
        self.heard: list[Event] = []
        self.t.sim.app.router.subscribe(lambda m: self.heard.append(m) if isinstance(m, Event) else None)
        self.secrets = Secrets()
        self.sub.wait_for(online(self.sub))

    def run(self, script: Any, night_taps: list[str] | None = None) -> None:
        """The script's steps; with ``night_taps``, One Night's night taps are
        these instead (what another deal would make a player try)."""
        for _, kind, value in script.steps:
            night = night_taps is not None and self.t.sim.loop.table.eyes_closed
            if night and kind == "tap":
                for tap in night_taps or ():
                    self.t.do("tap", tap)
                continue
            if night and kind == "wait":
                # virtual time runs the night in a blink; a real night lasts long enough for the
                # link to publish its state (the link sends the latest state, not every one)
                self.sub.wait_for(lambda: any(json.loads(p)["night"] for p in self.sub.of("state")), pump=self.t)
            self.t.do(kind, value)
            self.secrets.gather(self.t.sim.loop, self.heard)
        self.sub.wait_for(delivered(self.sub, self.t), pump=self.t)

    def close(self) -> None:
        self.t.close()
        self.sub.close()


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_every_message_on_the_broker_through_a_whole_game_holds_nothing_private(
        script: Path, broker: Any, tmp_path: Path) -> None:
    s = load_script(script)
    walk = BrokerWalk(tmp_path, broker, s)
    try:
        walk.run(s)
        got = walk.sub.got
        assert {topic.rsplit("/", 1)[-1] for topic, _, _ in got} <= {"status", "state", "event", "play"}
        # the events are the table's own, exactly (the event log's TABLE copies), none other
        public = [dict(e.fields) for e in walk.heard if e.audience == TABLE and e.fields["event"] in PUBLISHED]
        sent = walk.sub.json("event")
        assert [{k: v for k, v in e.items() if k not in ("id", "table", "t")} for e in sent] == [
            {k: v for k, v in e.items() if k != "t"} for e in public]
        # no message holds a private fact: a seat's page, value by value, or a private line's text
        assert [leak for _, p, _ in got for leak in walk.secrets.leaks(p.decode())] == []
        # by night one state only, whatever happens
        assert len({p for p in walk.sub.of("state") if json.loads(p)["night"]}) <= 1
    finally:
        walk.close()


def _night_on_the_broker(state: Path, broker: Any, night_taps: list[str]) -> list[tuple[str, bytes]]:
    """One Night to the discussion, with ``night_taps`` at night (what a
    deal would make a player try); what the broker got, in order."""
    s = load_script(example_script("one-night.yaml"))
    walk = BrokerWalk(state, broker, s)
    try:
        walk.run(s, night_taps)
        return [(topic, payload) for topic, payload, _ in walk.sub.got]
    finally:
        walk.close()


def test_one_nights_night_is_the_same_on_the_broker_for_two_deals(broker: Any, tmp_path: Path) -> None:
    a = _night_on_the_broker(tmp_path / "a", broker, ["onw/seer/1"])
    broker.restart()  # no retained message of the first table is left
    b = _night_on_the_broker(tmp_path / "b", broker, ["onw/werewolf/2", "player/red", "onw/thief/1"])

    def night(got: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
        first = next(i for i, (t, p) in enumerate(got) if t.endswith("/state") and json.loads(p)["night"])
        last = next(i for i in range(first, len(got)) if got[i][0].endswith("/state") and not json.loads(got[i][1])["night"])
        return got[first:last]

    assert night(a) == night(b)
    assert len(night(a)) == 1  # the night's one state, and nothing else until morning
    assert json.loads(night(a)[0][1]) == {"table": TID, "game": "one-night", "step": "night", "waiting_for": [],
                                          "round": None, "totals": {}, "deadline": None, "night": True,
                                          "lang": "en", "online": True}


def test_home_assistant_discovery_rides_the_link_and_is_sent_again_when_home_assistant_is_back(
        broker: Any, tmp_path: Path) -> None:
    """The daemon itself announces its device (not only `companion mqtt forget`'s
    tests): at connection, not retained, and again on HA's birth message."""
    from mqtt import homeassistant

    ha = Listener(broker, topic=homeassistant.config_topic(TID))
    t = table(tmp_path, broker.address)
    try:
        ha.wait_for(lambda: len(ha.got) >= 1, pump=t)
        topic, payload, retained = ha.got[0]
        config = json.loads(payload)
        assert topic == f"homeassistant/device/{TID}/config" and not retained
        assert config["cmps"] and all(c["p"] != "button" for c in config["cmps"].values())  # commands off
        birth = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="ha-birth")
        birth.connect(broker.host, broker.port)
        birth.loop_start()
        birth.publish(homeassistant.HA_STATUS_TOPIC, b"online", qos=1).wait_for_publish(10)
        ha.wait_for(lambda: len(ha.got) >= 2, pump=t)
        assert json.loads(ha.got[1][1]) == config
        birth.loop_stop()
        birth.disconnect()
    finally:
        t.close()
        ha.close()


def test_home_assistant_off_sends_no_discovery(broker: Any, listener: Listener, tmp_path: Path) -> None:
    ha = Listener(broker, topic="homeassistant/#")
    t = table(tmp_path, broker.address, homeassistant=False)
    try:
        listener.wait_for(online(listener), pump=t)
        t.tap("game/seven-knights")
        listener.wait_for(lambda: any(json.loads(p).get("game") == "seven-knights" for p in listener.of("state")),
                          pump=t)
        assert ha.got == []
    finally:
        t.close()
        ha.close()
