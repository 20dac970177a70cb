"""The venue: its store, its league's sides, its ear on a real
mosquitto (a persistent session, a broker that is down), its board (SSE, the
door, the language) and `companion venue` itself."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_venue_schema import play
from venue_kit import ROOT, Table, state, wait

from companion.app.cli import main
from tests.mosquitto import Broker, free_port
from venue import league, schema
from venue.app import Venue
from venue.server import language
from venue.store import Change, Store


def quiet(line: str) -> None:
    pass


# ---------------------------------------------------------------- the store
def test_a_repeated_play_or_event_is_dropped_and_counted(tmp_path: Path) -> None:
    store = Store(tmp_path)
    p = schema.check("companion/t1/play", json.dumps(play()).encode())
    assert isinstance(p, schema.Play)
    assert store.apply(p, 1.0) == Change("play", "t1/p/3")
    assert store.apply(p, 2.0) is None
    e = schema.check("companion/t1/event", json.dumps({"id": "t1/e/4.0", "table": "t1", "t": 5.0, "event": "dt_exit",
                                                       "player": "aki", "vp": 3, "place": 1}).encode())
    assert isinstance(e, schema.Event)
    assert store.apply(e, 1.0) == Change("event", "t1/e/4.0") and store.apply(e, 1.0) is None
    store.refuse()
    assert store.counts() == {"messages": 5, "duplicates": 2, "refused": 1, "plays": 1, "events": 1}
    assert [q["id"] for q in store.plays()] == ["t1/p/3"] and store.people() == {"aki": "aki", "ben": "ben"}


def test_a_table_row_changes_only_when_what_it_shows_changes(tmp_path: Path) -> None:
    store = Store(tmp_path)
    s = schema.check("companion/t1/state", json.dumps(state("t1", step="vote")).encode())
    assert isinstance(s, schema.State)
    assert store.apply(s, 1.0) == Change("table", "t1")
    assert store.apply(s, 2.0) is None  # the retained state again (a reconnect): nothing to push
    assert store.apply(schema.Status("t1", False), 3.0) == Change("table", "t1")
    assert store.tables()[0]["online"] is False and store.tables()[0]["state"]["step"] == "vote"
    assert store.apply(schema.Status("t1", None), 4.0) == Change("table", "t1")  # forgotten
    assert store.tables() == []


def test_states_share_a_commit_that_comes_without_another_message(tmp_path: Path) -> None:
    """A thousand tables' states a second share one commit (store.GROUP_S): the
    pages see each at once (one connection), the disk gets it soon after even
    when nothing more arrives, and a message that fails undoes only its own."""
    import sqlite3


    store = Store(tmp_path)
    s1 = schema.check("companion/t1/state", json.dumps(state("t1", step="vote")).encode())
    assert isinstance(s1, schema.State)
    assert store.apply(s1, 1.0) == Change("table", "t1") and store.tables()[0]["state"]["step"] == "vote"
    other = sqlite3.connect(tmp_path / "venue.sqlite")
    wait(lambda: other.execute("SELECT COUNT(*) FROM tables").fetchone()[0] == 1, timeout=5,
         what="the state committed by the timer")
    s2 = schema.check("companion/t2/state", json.dumps(state("t2")).encode())
    assert isinstance(s2, schema.State)
    store.apply(s2, 2.0)
    with pytest.raises(sqlite3.Error), store.lock, store._grouped():
        store.db.execute("INSERT INTO nowhere VALUES (1)")  # this message fails
    wait(lambda: other.execute("SELECT id FROM tables ORDER BY id").fetchall() == [("t1",), ("t2",)], timeout=5,
         what="the group committed without the message that failed")
    other.close()
    store.close()


def test_a_tables_state_is_one_statement_on_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A thousand tables' states a second: each is its row's one write inside the
    group's transaction — its row is not read back, no savepoint per message, the
    counters are written once per commit, not once per message."""
    from venue import store as storemod

    monkeypatch.setattr(storemod, "GROUP_S", 60.0)  # one group for the whole test
    store = Store(tmp_path)
    statements: list[str] = []
    store.db.set_trace_callback(statements.append)
    for i in range(100):
        s = schema.check(f"companion/t{i % 10}/state", json.dumps(state(f"t{i % 10}", round=i)).encode())
        assert isinstance(s, schema.State)
        assert store.apply(s, float(i)) == Change("table", f"t{i % 10}")
    writes = [q for q in statements if not q.startswith(("BEGIN", "PRAGMA"))]
    assert len(writes) == 100 and all(q.startswith("INSERT INTO tables") for q in writes), writes[:6]
    store.db.set_trace_callback(None)
    assert store.counts()["messages"] == 100 and store.tables()[3]["state"]["round"] == 93
    store.close()
    again = Store(tmp_path)  # what the pages were shown is what was committed
    assert again.counts()["messages"] == 100 and [t["state"]["round"] for t in again.tables()] == list(range(90, 100))
    again.close()


def test_a_tables_new_state_is_shown_without_parsing_its_text_back(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The board and the TVs' pushes read a table's new state as the message gave it (the
    record the schema checked), not by parsing the text just written from it; what a new
    venue reads from the disk is the same."""
    from venue import reads

    store = Store(tmp_path)
    s = schema.check("companion/t1/state", json.dumps(state("t1", round=3, totals={"Ann": 2})).encode())
    assert isinstance(s, schema.State)
    store.apply(s, 1.0)
    monkeypatch.setattr(reads.json, "loads", lambda *_a, **_k: pytest.fail("a new state parsed back"))
    shown = store.tables("t1")[0]["state"]
    assert shown == s.state and (shown["round"], shown["totals"], shown["lang"]) == (3, {"Ann": 2}, "en")
    monkeypatch.undo()
    store.close()
    again = Store(tmp_path)
    assert again.tables("t1")[0]["state"] == shown
    again.close()


def test_a_group_undone_is_not_shown_nor_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """States not yet committed are shown at once; a group SQLite undid (a full
    disk) takes them back off the board and out of the counts."""
    from venue import store as storemod

    monkeypatch.setattr(storemod, "GROUP_S", 60.0)
    store = Store(tmp_path)
    for step, t in (("vote", 1.0), ("night", 2.0)):
        s = schema.check("companion/t1/state", json.dumps(state("t1", step=step)).encode())
        assert isinstance(s, schema.State)
        store.apply(s, t)
        if step == "vote":
            with store.lock:
                store._end_group()  # the first committed
    assert store.tables()[0]["state"]["step"] == "night" and store.counts()["messages"] == 2
    with store.lock:
        store._abandon_group()
    assert store.tables()[0]["state"]["step"] == "vote" and store.tables()[0]["last_seen"] == 1.0
    assert store.counts()["messages"] == 1
    store.close()


def test_a_play_whose_commit_fails_is_undone_and_kept_when_it_comes_again(tmp_path: Path) -> None:
    """A commit that fails (the disk full at that moment) undoes the play's
    transaction, with what the store holds in memory: not acknowledged, the
    play comes again and is kept then, counted once."""
    import sqlite3

    class FailingCommit:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def execute(self, sql: str, *args: Any) -> Any:
            if sql == "COMMIT":
                raise sqlite3.OperationalError("database or disk is full")
            return self.db.execute(sql, *args)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.db, name)

    store = Store(tmp_path)
    p = schema.check("companion/t1/play", json.dumps(play()).encode())
    assert isinstance(p, schema.Play)
    real = store.db
    store.db = FailingCommit(real)  # type: ignore[assignment]
    with pytest.raises(sqlite3.OperationalError):
        store.apply(p, 1.0)
    store.db = real
    assert not real.in_transaction and store.counts()["plays"] == 0
    assert store.apply(p, 2.0) == Change("play", "t1/p/3")
    assert store.counts() == {"messages": 1, "duplicates": 0, "refused": 0, "plays": 1, "events": 0}
    store.close()


def test_a_tables_message_is_read_without_paho_building_its_properties(monkeypatch: pytest.MonkeyPatch) -> None:
    """A QoS 1 PUBLISH with no MQTT 5 properties (a table's message, as mosquitto passes
    it on) reaches the venue without paho's ``Properties`` object, the largest part of
    reading a message; one that has properties is read by paho as before."""
    import struct

    import paho.mqtt.client as mqtt
    from paho.mqtt import _packet
    from paho.mqtt.enums import CallbackAPIVersion

    from venue.paho_client import _Client

    got: list[mqtt.MQTTMessage] = []
    client = _Client(CallbackAPIVersion.VERSION2, client_id="t", protocol=mqtt.MQTTv5, manual_ack=True)
    client.on_message = lambda _c, _u, m: got.append(m)
    topic, payload = b"companion/t1/state", json.dumps(state("t1")).encode()

    def publish(properties: bytes, header: int = 0x32) -> None:  # PUBLISH, QoS 1
        client._in_packet = {**client._in_packet, "command": header,
                             "packet": struct.pack("!H", len(topic)) + topic + struct.pack("!H", 7) + properties + payload}
        assert client._handle_publish() == mqtt.MQTT_ERR_SUCCESS

    real = _packet.Properties
    monkeypatch.setattr(_packet, "Properties", lambda *a: pytest.fail("Properties built for a plain message"))
    publish(b"\x00", 0x3B)  # dup, QoS 1, retained
    m = got[-1]
    assert (m.topic, m.payload, m.mid, m.qos, m.dup, m.retain) == (topic.decode(), payload, 7, 1, True, True)
    monkeypatch.setattr(_packet, "Properties", real)
    publish(b"\x05\x02\x00\x00\x00\x3c")  # a message expiry interval: paho's own way
    assert (got[-1].topic, got[-1].payload, got[-1].properties.MessageExpiryInterval) == (topic.decode(), payload, 60)


def test_no_message_checkpoints_the_wal_a_thread_of_its_own_does(tmp_path: Path) -> None:
    """A commit that checkpoints pays the database file's fsync: no message
    does it (a thousand tables' states would wait behind it); the store's
    checkpointer thread copies the WAL into the file."""
    from venue import store as storemod

    store = Store(tmp_path)
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    size = (tmp_path / "venue.sqlite").stat().st_size
    for i in range(300):
        s = schema.check(f"companion/t{i}/state", json.dumps(state(f"t{i}", step="vote")).encode())
        assert isinstance(s, schema.State)
        store.apply(s, 1.0)
    wait(lambda: (tmp_path / "venue.sqlite").stat().st_size > size, timeout=storemod.CHECKPOINT_S * 10,
         what="the checkpointer copying the WAL into the database file")
    store.close()
    assert not store._checkpointer.is_alive()


def test_the_state_directory_refused_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    from venue.store import StoreError

    with pytest.raises(StoreError, match="cannot keep its state in"):
        Store(blocker / "venue")


# --------------------------------------------------------------- the league
def p(name: str, winner: bool = False, team: str | None = None, place: int | None = None, seat: str = "s",
      score: int | None = 0) -> dict[str, Any]:
    return {"name": name, "person": name, "seat": seat, "winner": winner, "team": team, "place": place, "score": score}


def test_sides_of_each_kind_of_game() -> None:
    # Demagogos: by place, whoever did not finish shares the place after the last
    assert league.sides([p("a", place=2), p("b"), p("c", place=1), p("d")]) == ([[0], [1], [2], [3]], [2, 3, 1, 3])
    # One Night: the winning team first; a tanner is a team alone
    assert league.sides([p("a", True, "village"), p("b", False, "werewolf"), p("c", True, "village"),
                         p("d", False, "tanner")]) == ([[0, 2], [3], [1]], [1, 2, 2])
    # Seven Knights: a team whose members did not all win (three rounds' points) splits
    assert league.sides([p("a", True, "knights"), p("b", False, "knights"), p("c", False, "witch")]) == (
        [[0], [1], [2]], [1, 2, 2])
    # a player of no team in a team game: a side alone (by seat), ranked by winning
    assert league.sides([p("a", True, "village", seat="red"), p("b", False, None, seat="blue"),
                         p("c", False, "werewolf", seat="green")]) == ([[0], [1], [2]], [1, 2, 2])
    # neither: winners first, then by score
    assert league.sides([p("a", score=3), p("b", True, score=1), p("c", score=3), p("d", score=0)]) == (
        [[0], [1], [2], [3]], [2, 1, 2, 3])


def test_a_person_is_their_name_and_an_unnamed_seat_is_nobody() -> None:
    assert league.person("Aki", "red") == league.person(" ａｋｉ ", "blue") == "aki"
    assert league.person("red", "red") is None and league.person("Red", "red") is None
    assert league.person("aki", "aki") == "aki"  # an extra player's own card (player/aki): a person


def test_a_cooperative_play_moves_no_rating_but_counts() -> None:
    rows = league.standings([{"ended": 1.0, "table": "t1", "id": "t1/p/1",
                              "players": [p("a", True, "knights"), p("b", True, "knights")]}])
    assert [(s.name, s.plays, s.wins, s.mu) for s in rows] == [("a", 1, 1, 25.0), ("b", 1, 1, 25.0)]


def test_the_league_kept_play_by_play_equals_the_league_from_scratch(tmp_path: Path) -> None:
    """Incremental (a new play rated on top of the last) and, when a play arrives
    late (it ended before the last one rated), rated again from the start:
    either way the same as every play rated in order."""
    v = Venue(tmp_path / "v", ("127.0.0.1", 1), None, since=0.0, report=quiet)  # never started: no broker needed
    try:
        ends = [30, 10, 20, 50, 40]  # 10 and 40 arrive late
        for n, minute in enumerate(ends, 1):
            record = play(id=f"t1/p/{n}", players=[
                {"name": "aki", "seat": "red", "score": 1, "winner": n % 2 == 0, "team": "village", "place": None},
                {"name": "ben", "seat": "blue", "score": 0, "winner": n % 2 == 1, "team": "werewolf", "place": None}])
            record["play"]["durationMin"] = minute
            for q in record["play"]["players"]:
                q["winner"] = next(x["winner"] for x in record["players"] if x["name"] == q["name"])
            checked = schema.check("companion/t1/play", json.dumps(record).encode())
            assert isinstance(checked, schema.Play)
            v.store.apply(checked, 1.0)
            kept = v.league()
            scratch = [s.view() for s in league.standings(v.store.plays(), v.store.people())]
            assert kept["season"] == scratch, n
        assert v._tallies["season"][0].count == len(ends)
    finally:
        v.store.close()


def test_tonight_survives_a_restart_within_the_evening(tmp_path: Path) -> None:
    t0 = 1.8e9
    first = Venue(tmp_path / "v", ("127.0.0.1", 1), None, report=quiet, now=lambda: t0)
    first.store.apply(schema.Status("t1", True), t0 + 3600)  # heard an hour in
    first.store.close()
    again = Venue(tmp_path / "v", ("127.0.0.1", 1), None, report=quiet, now=lambda: t0 + 5 * 3600)
    assert again.since == t0  # back four hours after the last message: the same evening
    again.store.close()
    later = Venue(tmp_path / "v", ("127.0.0.1", 1), None, report=quiet, now=lambda: t0 + 8 * 3600)
    assert later.since == t0 + 8 * 3600  # seven hours of silence: a new evening
    later.store.close()
    given = Venue(tmp_path / "v", ("127.0.0.1", 1), None, report=quiet, since=t0 - 60, now=lambda: t0 + 9 * 3600)
    assert given.since == t0 - 60
    given.store.close()


# -------------------------------------------------------------- on the broker
def test_what_the_tables_sent_while_the_venue_was_down_arrives_once(broker: Any, tmp_path: Path) -> None:
    """A persistent session (MQTT 5, clean start off, a session expiry): the
    broker queues QoS 1 messages for the venue while it is away."""
    first = Venue(tmp_path / "v", (broker.host, broker.port), None, ident="venue-session", report=quiet).start()
    wait(first.ear.subscribed.is_set, what="the subscription")
    t = Table(broker, "t1")
    t.send("companion/t1/play", play(id="t1/p/1"))
    wait(lambda: first.store.counts()["plays"] == 1, what="the first play")
    first.stop()
    try:
        for n in (2, 3, 4):
            t.send("companion/t1/play", play(id=f"t1/p/{n}"))  # the venue is down
    finally:
        t.close()
    again = Venue(tmp_path / "v", (broker.host, broker.port), None, ident="venue-session", report=quiet).start()
    try:
        wait(lambda: again.store.counts()["plays"] == 4, what="the plays sent while the venue was down")
        time.sleep(0.3)
        assert again.store.counts()["duplicates"] == 0  # the first was acknowledged: not sent again
    finally:
        again.stop()


def test_a_broker_that_is_down_is_said_once_and_retried(tmp_path: Path) -> None:
    port = free_port()
    said: list[str] = []
    v = Venue(tmp_path / "v", ("127.0.0.1", port), None, ident="venue-retry", report=said.append).start()
    b = Broker(tmp_path / "broker", port=port)
    try:
        wait(lambda: said, what="the venue saying the broker is unreachable")
        time.sleep(2.5)  # a retry or two meanwhile
        assert said == [f"the broker at 127.0.0.1:{port} is unreachable; the venue keeps trying"]
        b.start()
        wait(v.ear.subscribed.is_set, timeout=40, what="the venue connecting once the broker is up")
        assert said[-1] == f"the broker at 127.0.0.1:{port} is back"
        t = Table(b, "t1")
        t.send("companion/t1/status", b"online")
        t.close()
        wait(lambda: v.store.tables(), what="a table heard")
    finally:
        v.stop()
        b.stop()


def test_a_flood_of_junk_is_counted_and_said_once_a_topic(broker: Any, tmp_path: Path) -> None:
    said: list[str] = []
    v = Venue(tmp_path / "v", (broker.host, broker.port), None, ident="venue-flood", report=said.append).start()
    t = Table(broker, "t1")
    try:
        wait(v.ear.subscribed.is_set, what="the subscription")
        for _ in range(50):
            t.send("companion/t1/state", b"junk")
        t.send("companion/t1/play", b"junk")
        wait(lambda: v.store.counts()["refused"] == 51, what="51 refusals counted")
        assert said == ["refused: companion/t1/state: not JSON", "refused: companion/t1/play: not JSON"]
        assert v.store.tables() == [] and v.store.counts()["plays"] == 0  # nothing of it kept
    finally:
        t.close()
        v.stop()


# ----------------------------------------------------------------- the board
@pytest.fixture
def venue(broker: Any, tmp_path: Path) -> Any:
    v = Venue(tmp_path / "v", (broker.host, broker.port), ("127.0.0.1", 0), ident="venue-board", report=quiet,
              since=0.0).start()
    wait(v.ear.subscribed.is_set, what="the subscription")
    yield v
    v.stop()


def sse_events(lines: Any, n: int) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    kind = None
    for line in lines:
        if line.startswith("event: "):
            kind = line.removeprefix("event: ")
        elif line.startswith("data: ") and kind:
            out.append((kind, json.loads(line.removeprefix("data: "))))
            if len(out) == n:
                return out
    return out


def test_the_stream_pushes_a_table_change_and_a_play(venue: Any, broker: Any) -> None:
    t = Table(broker, "t1")
    try:
        with httpx.stream("GET", venue.url + "/api/venue/events", timeout=10) as r:
            lines = r.iter_lines()
            (kind, board), = sse_events(lines, 1)
            assert kind == "board" and board["tables"] == [] and board["season"] == []
            t.send("companion/t1/state", state("t1", game="one-night", step="vote", waiting_for=["aki"]), retain=True)
            (kind, row), = sse_events(lines, 1)
            assert kind == "table" and row["id"] == "t1" and row["step"] == "vote" and row["waiting_for"] == ["aki"]
            t.send("companion/t1/play", play())
            (kind, standings), = sse_events(lines, 1)
            assert kind == "league" and [s["name"] for s in standings["season"]] == ["aki", "ben"]
            assert standings["season"][0]["wins"] == 1 and standings["counts"]["plays"] == 1
    finally:
        t.close()


def test_two_venues_in_one_process_stop_one_at_a_time(venue: Any, broker: Any, tmp_path: Path) -> None:
    """(The bench runs venues in-process.) Stopping one stops its own pages only."""
    other = Venue(tmp_path / "other", (broker.host, broker.port), ("127.0.0.1", 0), ident="venue-other",
                  report=quiet).start()
    other.stop()
    assert httpx.get(venue.url + "/api/venue").status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(other.url + "/api/venue")


def test_the_door_turns_away_a_foreign_host(venue: Any) -> None:
    assert httpx.get(venue.url + "/api/venue", headers={"Host": "evil.example"}).status_code == 421
    assert httpx.get(venue.url + "/api/venue").status_code == 200
    assert httpx.post(venue.url + "/api/venue", content=b"x" * 20000).status_code == 413


def test_the_page_speaks_the_asked_language(venue: Any) -> None:
    assert '<html lang="ja">' in httpx.get(venue.url + "/?lang=ja").text
    assert '<html lang="ja">' in httpx.get(venue.url + "/", headers={"Accept-Language": "ja-JP,en;q=0.5"}).text
    assert '<html lang="en">' in httpx.get(venue.url + "/?lang=xx", headers={"Accept-Language": "fr"}).text
    assert language(None, "fr;q=0.9, ja;q=0.8, en;q=0.9") == "en"
    assert language(None, "ja;q=0, en;q=0.1") == "en" and language(None, "ja;q=bad") == "en"


# ----------------------------------------------------------------- the wire
def test_the_venues_wire_is_what_the_games_publish() -> None:
    """venue/wire.json is the games' manifests and names as data (the venue
    imports no game): a game added or changed is ``python tools/venue_wire.py``
    again, and this fails until it is."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import venue_wire
    finally:
        sys.path.remove(str(ROOT / "tools"))
    assert (ROOT / "venue" / "wire.json").read_text(encoding="utf-8") == venue_wire.text(), \
        "venue/wire.json differs from the games' folders: run python tools/venue_wire.py"
    events = schema.published()
    assert {"round_scored", "game_over", "onw_result", "formation"} <= set(events)
    assert schema.rating("one-night") == "teams" and schema.names()["ja"]["one-night"]["name"]


# ----------------------------------------------------------- companion venue
@pytest.mark.parametrize("argv, why", [
    (["--mqtt", "broker:notaport"], "--mqtt: the port in 'broker:notaport' is not a number"),
    (["--mqtt", ":1883"], "--mqtt: ':1883' names no host"),
    (["--mqtt", "b", "--web", "0.0.0.0:99999"], "--web: the port"),
    (["--mqtt", "b", "--since", "tuesday"], "--since: 'tuesday' is not a date"),
    (["--mqtt", "b", "--password-file", "/nonexistent/pw"], "--password-file: cannot read /nonexistent/pw"),
    (["--mqtt", "b", "--wire", "/nonexistent/wire.json"], "--wire: cannot read /nonexistent/wire.json"),
    (["--mqtt", "b", "--wire", str(ROOT / "pyproject.toml")], "--wire: "),
])
def test_a_bad_argument_is_one_line(argv: list[str], why: str, capsys: Any) -> None:
    assert main(["venue", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"companion venue: {why}") and err.count("\n") == 1


def start_cli(tmp_path: Path, mqtt: str, *more: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"}  # SIGABRT: every thread's stack
    return subprocess.Popen([sys.executable, "-m", "companion.app.cli", "venue", "--mqtt", mqtt, "--web",
                             "127.0.0.1:0", "--state", str(tmp_path / "state"), "--id", "venue-cli", *more],
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def read_until(proc: subprocess.Popen[str], text: str, lines: list[str]) -> str:
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if text in line:
            return line
    raise AssertionError(f"no {text!r} in {lines}")


def test_companion_venue_serves_until_ctrl_c(broker: Any, tmp_path: Path) -> None:
    proc = start_cli(tmp_path, broker.address)
    lines: list[str] = []
    try:
        line = read_until(proc, "the board is at", lines)
        url = re.search(r"(http://\S+?)/ ", line)
        assert url is not None
        t = Table(broker, "t9")
        t.send("companion/t9/status", b"online", retain=True)
        t.close()
        wait(lambda: httpx.get(url[1] + "/api/venue").json()["tables"], what="the table on the board")
        proc.send_signal(signal.SIGINT)
        assert stopped(proc) == 0
        rest = proc.stderr.read() if proc.stderr else ""
        assert "venue: stopped" in rest and "Traceback" not in "".join(lines) + rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_venue_killed_hears_every_play_once_when_it_is_back(broker: Any, tmp_path: Path) -> None:
    """SIGKILL, not a clean stop: the broker keeps the session of a venue whose
    connection just died, and queues what the tables send meanwhile."""
    def board_of(proc: subprocess.Popen[str], lines: list[str]) -> str:
        line = read_until(proc, "the board is at", lines)
        found = re.search(r"(http://\S+?)/ ", line)
        assert found is not None
        return found[1]

    t = Table(broker, "t1")
    t.send("companion/t1/status", b"online", retain=True)  # on the board: the venue is subscribed
    lines: list[str] = []
    proc = start_cli(tmp_path, broker.address)
    try:
        url = board_of(proc, lines)
        wait(lambda: httpx.get(url + "/api/venue").json()["tables"], what="the subscription")
        for n in (1, 2):
            t.send("companion/t1/play", play(id=f"t1/p/{n}"))
        wait(lambda: httpx.get(url + "/api/venue").json()["counts"]["plays"] == 2, what="two plays")
        proc.kill()
        proc.wait(timeout=10)
        for n in (3, 4, 5):
            t.send("companion/t1/play", play(id=f"t1/p/{n}"))  # nobody is listening: the broker keeps them
        proc = start_cli(tmp_path, broker.address)
        url = board_of(proc, lines)
        wait(lambda: httpx.get(url + "/api/venue").json()["counts"]["plays"] == 5, what="all five plays")
        time.sleep(0.3)
        assert httpx.get(url + "/api/venue").json()["counts"]["duplicates"] == 0
    finally:
        t.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=20)


def stopped(proc: subprocess.Popen[str], timeout: float = 20) -> int:
    """The process's exit status once it stops; one that does not stop in ``timeout`` is
    aborted, and the failure shows where each of its threads was (faulthandler's dump)."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        _, err = proc.communicate(timeout=10)
        raise AssertionError(f"did not stop in {timeout} s; its threads:\n{err[-6000:]}") from None


def test_companion_venue_says_the_broker_is_unreachable_and_keeps_trying(tmp_path: Path) -> None:
    # A port held bound and not listening refuses every connection for the whole test; a port only
    # found free could be taken meanwhile by another test's broker or server.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        proc = start_cli(tmp_path, f"127.0.0.1:{held.getsockname()[1]}")
        lines: list[str] = []
        try:
            read_until(proc, "is unreachable; the venue keeps trying", lines)
            time.sleep(1.5)
            assert proc.poll() is None  # still there, still trying
            proc.send_signal(signal.SIGTERM)
            assert stopped(proc) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_companion_venue_on_a_taken_port_is_one_line(broker: Any, tmp_path: Path, capsys: Any) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["venue", "--mqtt", broker.address, "--web", f"127.0.0.1:{port}", "--state",
                     str(tmp_path / "s"), "--id", "venue-taken"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"companion venue: the board could not listen on 127.0.0.1:{port} (Address already in use)"]
