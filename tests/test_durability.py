"""Durability honesty: the table hears nothing about an input — no
``accepted``, no line, no LED or beep — before the journal write for it is
durable; a write that fails leaves the table as it was, says so (an
``error`` event, a spoken refusal) and the next tap works.

A ``companion.runtime.journal.Journal`` subclass injects the faults (commit fails,
insert fails, commit stalls); it replaces the real one where the app builds it.
"""

from __future__ import annotations

import copy
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from companion.runtime.journal import Journal, JournalError, _Tx  # noqa: E402
from qa.reliability.inproc import Runner, journaled  # noqa: E402
from qa.reliability.scripts import Step, generate, press, tap  # noqa: E402


class FaultyJournal(Journal):
    """A journal whose next appends can fail at COMMIT, fail in the INSERT
    (as a full disk does) or stall before COMMIT until released."""

    fail_commit = 0
    fail_insert = 0
    stall: tuple[threading.Event, threading.Event] | None = None  # (entered, release)

    def _transaction(self) -> _Tx:
        return _FaultyTx(self)

    def append(self, inp: Any, t: float, wall: float, **kw: Any) -> int:
        if self.fail_insert:
            self.fail_insert -= 1
            with self._transaction():
                self.db.execute("INSERT INTO inputs (t, wall, input) VALUES (?, ?, ?)", (t, wall, "{}"))
                raise sqlite3.OperationalError("database or disk is full")
        return super().append(inp, t, wall, **kw)


class _FaultyTx(_Tx):
    def __init__(self, journal: FaultyJournal) -> None:
        super().__init__(journal.db)
        self.journal = journal

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        j = self.journal
        if exc_type is None and j.stall is not None:
            entered, release = j.stall
            entered.set()
            release.wait(10)
        if exc_type is None and j.fail_commit:
            j.fail_commit -= 1
            self.db.execute("ROLLBACK")
            raise JournalError("journal commit failed: disk I/O error (injected)")
        super().__exit__(exc_type, exc, tb)


class Feedback:
    """Wraps the panel; every LED and beep goes into the event log as it happens."""

    def __init__(self, inner: Any, events: list[dict[str, Any]]) -> None:
        self.inner, self.events = inner, events

    def led(self, name: str, on: bool, flash: bool = False) -> None:
        self.events.append({"event": "_led", "name": name, "on": on, "flash": flash})
        self.inner.led(name, on, flash)

    def beep(self, long: bool = False) -> None:
        self.events.append({"event": "_beep", "long": long})
        self.inner.beep(long)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr("companion.app.start.Journal", FaultyJournal)
    r = Runner(tmp_path)
    assert isinstance(r.sim.app.journal, FaultyJournal)
    sink = r.sim.app.sinks["panel"]
    sink.panel = Feedback(sink.panel, r.events)
    yield r
    r.close()


def journal(r: Runner) -> FaultyJournal:
    j = r.sim.app.journal
    assert isinstance(j, FaultyJournal)
    return j


def snapshot(r: Runner) -> tuple[Any, ...]:
    s = r.sim.loop.table
    engine = s.engine
    return (copy.deepcopy(s.state), type(engine).__name__,
            copy.deepcopy(engine.state) if engine is not None else None, r.sim.app.journal.count_inputs(),
            len(r.sim.app.journal.plays()))


def run(r: Runner, steps: list[Step]) -> None:
    for step in steps:
        r.run(step)


def assert_refused_honestly(r: Runner, start: int, label: str, forbidden_keys: set[str]) -> None:
    """Nothing for ``label`` but its refusal: no accepted, no line of its own,
    no ok LED, no short beep; an error event and a rejection with a reason."""
    evs = r.events[start:]
    assert not [e for e in evs if e["event"] == "accepted"], evs
    assert [e for e in evs if e["event"] == "error"], evs
    rejected = [e for e in evs if e["event"] == "rejected"]
    assert [e["input"] for e in rejected] == [label] and rejected[0]["reason"]
    said = {e["key"] for e in evs if e["event"] == "say"}
    assert not said & forbidden_keys, said
    assert said <= {"refuse.not_saved"}, said
    assert not [e for e in evs if e["event"] == "_led" and e["name"] == "ok"], evs
    assert not [e for e in evs if e["event"] == "_beep" and not e["long"]], evs
    reports = {e["event"] for e in evs} & {"formation", "round_scored", "game_over", "onw_result",
                                          "game_started", "session_scores"}
    assert not reports, evs


GATHER = [tap("game/seven-knights"), tap("player/red"), tap("player/blue"), tap("player/green")]


def test_a_failed_commit_is_not_accepted_changes_nothing_and_the_next_tap_works(runner: Runner) -> None:
    run(runner, GATHER)
    before = snapshot(runner)
    journal(runner).fail_commit = 1
    start = len(runner.events)
    runner.step(tap("player/white"))
    assert_refused_honestly(runner, start, "player/white", {"table.player_seated"})
    assert snapshot(runner) == before
    start = len(runner.events)
    assert runner.step(tap("player/white"))["event"] == "accepted"
    assert "table.player_seated" in [e.get("key") for e in runner.events[start:]]
    assert runner.sim.app.journal.count_inputs() == before[3] + 1


def test_a_full_disk_is_not_accepted_changes_nothing_and_the_next_tap_works(runner: Runner) -> None:
    run(runner, [*GATHER, tap("player/white"), press("next")])
    before = snapshot(runner)
    journal(runner).fail_insert = 1
    start = len(runner.events)
    runner.step(tap("skb/knight/3"))  # the captain's tile: would say "the captain is ready"
    # refused under its public name, as it would have been accepted: a tile before the command phase is skb/*
    assert_refused_honestly(runner, start, "skb/*", {"skb.captain.ready"})
    assert snapshot(runner) == before
    assert runner.step(tap("skb/knight/3"))["event"] == "accepted"
    assert runner.sim.loop.table.engine.state.step == "captain_ready"


@pytest.mark.parametrize("game", ["seven-knights", "one-night"])
def test_the_input_that_ends_a_game_fails_to_save_then_ends_it_once(runner: Runner, game: str) -> None:
    """The last input of a game also writes the play and the checkpoint: all
    or nothing, and no verdict or score is heard before it is saved."""
    script = generate(11, games=[game], wrong=0.0)
    *body, last = script.steps
    run(runner, body)
    before = snapshot(runner)
    journal(runner).fail_commit = 1
    start = len(runner.events)
    runner.run(last)
    assert_refused_honestly(runner, start, last.label, {"table.standings", "skb.game_over.winners",
                                                         "onw.verdict.winners", "onw.verdict.no_winners"})
    assert snapshot(runner) == before
    assert runner.run(last)[0]["event"] == "accepted"
    plays = runner.sim.app.journal.plays()
    assert len(plays) == 1 and plays[0]["game"] == game
    ends = [e for e in runner.events if e["event"] in ("game_over", "onw_result")]
    assert len(ends) == 1


def test_several_failures_in_a_row_then_the_game_goes_on(runner: Runner) -> None:
    run(runner, [*GATHER, tap("player/white"), press("next"), tap("skb/knight/2"), press("next")])
    for _ in range(5):
        before = snapshot(runner)
        journal(runner).fail_commit = 1
        start = len(runner.events)
        runner.step(tap("skb/knight/1"))
        assert_refused_honestly(runner, start, "skb/knight/1", {"skb.formation.tile"})
        assert snapshot(runner) == before
    assert runner.step(tap("skb/knight/1"))["event"] == "accepted"
    assert runner.sim.loop.table.engine.state.formation == ["skb/knight/1"]


def test_no_feedback_while_the_commit_stalls(runner: Runner) -> None:
    """The loop on its own thread, the commit held open: nothing is heard or
    lit for the tap until the row is committed, then everything is."""
    run(runner, GATHER)
    entered, release = threading.Event(), threading.Event()
    journal(runner).stall = (entered, release)
    path = runner.state / "journal.sqlite"
    committed = Journal(path)
    count = committed.count_inputs()
    start = len(runner.events)
    runner.sim.reader.present(text="player/white")
    worker = threading.Thread(target=runner.sim.loop.pump, daemon=True)
    worker.start()
    try:
        assert entered.wait(5), "the loop never reached the commit"
        stalled = list(runner.events[start:])
        assert not [e for e in stalled if e["event"] in ("accepted", "say", "_led", "_beep")], stalled
        assert committed.count_inputs() == count  # not visible to anyone yet
    finally:
        journal(runner).stall = None
        release.set()
        worker.join(10)
    assert not worker.is_alive()
    evs = runner.events[start:]
    assert [e["event"] for e in evs][:1] == ["accepted"], evs
    assert committed.count_inputs() == count + 1
    committed.close()


def test_every_feedback_comes_after_its_input_is_committed(tmp_path: Path) -> None:
    """A whole game: at each accepted event, each line and each LED/beep, a
    second connection already sees every input accepted so far committed."""
    r = Runner(tmp_path)
    other = Journal(tmp_path / "journal.sqlite")
    seen: list[tuple[dict[str, Any], int]] = []

    class Tracked(list[dict[str, Any]]):
        def append(self, ev: dict[str, Any]) -> None:
            super().append(ev)
            seen.append((ev, other.count_inputs()))

    tracked = Tracked()
    r.sim.app.sinks["log"].log = tracked.append
    sink = r.sim.app.sinks["panel"]
    sink.panel = Feedback(sink.panel, tracked)
    db = r.sim.app.journal.db
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL: fsynced at each commit
    for step in generate(5, games=["seven-knights"]).steps:
        r.run(step)
    r.close()
    other.close()
    accepted = 0
    for ev, committed in seen:
        if journaled(ev if ev["event"] == "accepted" else None):
            accepted += 1
        if ev["event"] in ("accepted", "say", "_led", "_beep", "formation", "round_scored", "game_over"):
            assert committed >= accepted, ev
    assert accepted > 30


def test_a_locked_journal_is_refused_like_any_failed_write(runner: Runner) -> None:
    """Regression (fixed in f95b2d9): BEGIN IMMEDIATE on a locked database used
    to raise sqlite3.OperationalError out of the loop and kill the daemon."""
    run(runner, GATHER)
    before = snapshot(runner)
    other = sqlite3.connect(runner.state / "journal.sqlite", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    runner.sim.app.journal.db.execute("PRAGMA busy_timeout=50")
    start = len(runner.events)
    try:
        runner.step(tap("player/white"))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert_refused_honestly(runner, start, "player/white", {"table.player_seated"})
    assert snapshot(runner) == before
    assert runner.step(tap("player/white"))["event"] == "accepted"


def test_a_night_timer_that_fails_to_save_does_not_stop_the_night(runner: Runner) -> None:
    """Regression (fixed in f95b2d9): a timer whose write failed was dropped and
    the night never ended (every tap refused, no timer left)."""
    run(runner, [tap("game/one-night"), tap("player/red"), tap("player/blue"), tap("player/green"),
                 press("next"), press("next")])
    journal(runner).fail_commit = 1
    start = len(runner.events)
    runner.wait(1.0)  # the seer's wake-up timer fires, and its write fails
    assert [e for e in runner.events[start:] if e["event"] == "error"]
    assert runner.sim.loop.table.engine.state.step == "night"  # the failed beat changed nothing
    runner.wait(60.0)
    keys = [e["key"] for e in runner.events[start:] if e["event"] == "say"]
    assert keys.count("onw.seer.wake") == 1 and "onw.night.morning" in keys, keys
    assert runner.sim.loop.table.engine.state.step != "night"
