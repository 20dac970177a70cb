"""Reader faults: the reader unplugged and plugged back 100 times mid-game,
and a reader that raises in the middle of a read.  The daemon keeps running,
loses no input, and announces each change once: ``reader`` events alternate,
with one ``reader.lost`` / ``reader.back`` line each."""

from __future__ import annotations

import errno
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from companion.core.events import ReaderStatus, TagSeen  # noqa: E402
from hardware.supervisor import Backoff, ReaderUnavailable, Supervisor  # noqa: E402
from qa.reliability.inproc import Runner, journaled, read_journal, same_input  # noqa: E402
from qa.reliability.proc import Daemon  # noqa: E402
from qa.reliability.scripts import Step, press, tap  # noqa: E402

SETUP = [tap("game/seven-knights"), *(tap(f"player/{c}") for c in ("red", "blue", "green", "white", "black")),
         press("next"), tap("skb/knight/2"), press("next")]  # the captain's tile, confirmed → the formation


def reader_states(events: list[dict[str, Any]]) -> list[str]:
    return [e["state"] for e in events if e["event"] == "reader"]


def said(events: list[dict[str, Any]], key: str) -> int:
    return sum(1 for e in events if e["event"] == "say" and e["key"] == key)


def announced(events: list[dict[str, Any]], key: str) -> int:
    """Lines ``key`` said as a reader change's announcement (right after its
    ``reader`` event), not as a ``repeat`` of it."""
    return sum(1 for prev, e in zip(events, events[1:], strict=False)
               if prev["event"] == "reader" and e["event"] == "say" and e["key"] == key)


def assert_alternating(states: list[str]) -> None:
    assert states, "no reader events"
    assert all(a != b for a, b in zip(states, states[1:], strict=False)), states


def assert_journal_matches(events: list[dict[str, Any]], state: Path) -> None:
    inputs, _ = read_journal(state)
    accepted = [e["input"] for e in events if journaled(e if e["event"] == "accepted" else None)]
    labels = [i.get("tap") or i.get("press") for i in inputs]
    assert len(labels) == len(accepted) and all(map(same_input, accepted, labels)), (accepted, labels)


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A Runner; closed (again) at the end, when no thread may have died with
    a traceback (the panel's blinks after close printed 42 of them here)."""
    died: list[str] = []
    monkeypatch.setattr(threading, "excepthook", lambda a: died.append(f"{a.thread}: {a.exc_type.__name__}"))
    r = Runner(tmp_path)
    yield r
    r.close().join(5)
    time.sleep(0.2)  # a blink started after close would die within its 0.15 s on-time
    assert died == []


def test_the_simulated_reader_runs_the_real_supervisor(runner: Runner) -> None:
    """Unplugged, the simulated device is lost under the Supervisor, which
    announces it, waits, reopens it once plugged and announces the return."""
    reader = runner.sim.reader
    assert isinstance(reader.supervisor, Supervisor) and reader.supervisor.connected is True
    start = len(runner.events)
    runner.step(Step("unplug", "reader"))
    assert reader.supervisor.connected is False
    runner.step(Step("plug", "reader"))
    assert reader.supervisor.connected is True
    assert [(e["state"], e["detail"]) for e in runner.events[start:] if e["event"] == "reader"] == [
        ("disconnected", "simulated reader unplugged"), ("connected", "simulated reader")]


def test_a_hundred_unplug_replug_cycles_mid_game(runner: Runner) -> None:
    for step in SETUP:
        assert runner.step(step)["event"] == "accepted"
    for i in range(100):
        runner.step(Step("unplug", "reader"))
        runner.step(Step("unplug", "reader"))  # pulled twice: still one change
        assert runner.step(tap("skb/knight/4")) is None  # no reader, no tap: nothing happens
        assert runner.step(press("repeat"))["event"] == "accepted"  # the buttons still work
        runner.step(Step("plug", "reader"))
        # the game goes on: lay a tile, take it back, alternately
        resp = runner.step(tap("skb/knight/1") if i % 2 == 0 else press("back"))
        assert resp is not None and resp["event"] == "accepted", resp
    # the hundredth cycle took the last tile back: lay the formation and finish it
    for step in [tap("skb/knight/2"), tap("skb/knight/3"), tap("skb/knight/4"), tap("skb/knight/5"),
                 tap("skb/witch"), press("next"), tap("skb/knight/1")]:  # knight 1 left out: 6 on the table
        assert runner.step(step)["event"] == "accepted"
    evs = runner.events
    states = reader_states(evs)
    assert_alternating(states)
    assert states.count("disconnected") == 100 and states.count("connected") == 101  # + the first
    assert announced(evs, "reader.lost") == 100 and announced(evs, "reader.back") == 100
    # repeat while unplugged says the last instruction again, not the reader notice
    assert said(evs, "reader.lost") == 100 and said(evs, "reader.back") == 100
    assert not [e for e in evs if e["event"] == "error"]
    engine = runner.sim.loop.table.engine
    assert engine.state.formation == ["skb/knight/2", "skb/knight/3", "skb/knight/4", "skb/knight/5",
                                      "skb/witch"]
    assert engine.state.step == "witch_team"
    runner.close()
    assert_journal_matches(evs, runner.state)


def test_the_loop_announces_a_reader_change_once(runner: Runner) -> None:
    loop = runner.sim.loop
    start = len(runner.events)
    for connected in (False, False, False, True, True, False, True):
        loop.submit(ReaderStatus(connected, "flapping"))
    loop.pump()
    evs = runner.events[start:]
    assert reader_states(evs) == ["disconnected", "connected", "disconnected", "connected"]
    assert said(evs, "reader.lost") == 2 and said(evs, "reader.back") == 2


# ------------------------------------------------ a reader that raises mid-read
class ScriptedConnection:
    """A ``hardware.supervisor.Connection`` whose every step the test scripts:
    ``open`` takes the next action (an exception to fail, anything else to
    succeed); ``serve`` emits tags and raises when told to."""

    def __init__(self) -> None:
        self.actions: queue.Queue[Any] = queue.Queue()
        self.closing = threading.Event()

    def _next(self, stopping: threading.Event | None = None) -> Any:
        while not self.closing.is_set() and not (stopping is not None and stopping.is_set()):
            try:
                return self.actions.get(timeout=0.02)
            except queue.Empty:
                continue
        return None

    def open(self) -> str:
        action = self._next()
        self.actions.task_done() if action is not None else None
        if isinstance(action, BaseException):
            raise action
        return "scripted reader"

    def serve(self, emit: Any, stopping: threading.Event) -> None:
        while True:
            action = self._next(stopping)
            if action is None:
                return
            self.actions.task_done()
            if isinstance(action, BaseException):
                raise action
            emit(action)

    def close(self) -> None:
        pass


def test_a_reader_that_raises_mid_read_loses_nothing_and_says_each_change_once(runner: Runner) -> None:
    loop = runner.sim.loop
    runner.sim.reader.close()  # the supervised reader below replaces the simulated one
    delivered: queue.Queue[Any] = queue.Queue()

    def emit(event: Any) -> None:
        loop.submit(event)
        delivered.put(event)

    connection = ScriptedConnection()
    sup = Supervisor(connection, backoff=Backoff(0.01, 0.02), wait=lambda s: None, name="test-reader")
    sup.start(emit)

    def feed(*actions: Any, expect: int) -> list[Any]:
        """Hand the connection its next actions; wait for ``expect`` events to reach the loop."""
        for a in actions:
            connection.actions.put(a)
        got = [delivered.get(timeout=5) for _ in range(expect)]
        connection.actions.join()
        loop.pump()
        return got

    try:
        feed("open", expect=1)  # connected (already said by the simulated reader: not again)
        start = len(runner.events)
        feed(TagSeen(text="game/seven-knights"), TagSeen(text="player/red"), expect=2)
        # the device vanishes in the middle of a read …
        feed(TagSeen(text="player/blue"), OSError(errno.ENODEV, "No such device"), expect=2)
        # … and is missing for a while (one announcement, not three) …
        feed(ReaderUnavailable("no reader on usb"), OSError(errno.EACCES, "Permission denied"),
             ReaderUnavailable("no reader on usb"), expect=0)
        assert delivered.empty()
        # … then back; a half-read tag is refused out loud; a driver bug mid-read
        got = feed("open", TagSeen(uid="04A1B2C3D4E5F6", error="CRC error mid-read"),
                   TagSeen(text="player/green"), RuntimeError("driver bug"), expect=4)
        assert [type(g).__name__ for g in got] == ["ReaderStatus", "TagSeen", "TagSeen", "ReaderStatus"]
        assert [g.connected for g in got if isinstance(g, ReaderStatus)] == [True, False]
        feed("open", TagSeen(text="player/white"), expect=2)
    finally:
        connection.closing.set()
        sup.stop()
    evs = runner.events[start:]
    assert reader_states(evs) == ["disconnected", "connected", "disconnected", "connected"]
    assert said(evs, "reader.lost") == announced(evs, "reader.lost") == 2
    assert said(evs, "reader.back") == announced(evs, "reader.back") == 2
    answers = [(e["event"], e["input"]) for e in evs if e["event"] in ("accepted", "rejected")]
    assert answers == [("accepted", "game/seven-knights"), ("accepted", "player/red"),
                       ("accepted", "player/blue"), ("rejected", "uid:04A1B2C3D4E5F6"),
                       ("accepted", "player/green"), ("accepted", "player/white")]
    rejected = [e for e in evs if e["event"] == "rejected"]
    assert all(e["reason"] for e in rejected)
    assert runner.sim.loop.table.players == ["red", "blue", "green", "white"]
    runner.close()
    assert_journal_matches(runner.events, runner.state)


# ------------------------------------------------------------ the real daemon
def test_the_daemon_process_survives_unplug_replug_cycles_mid_game(tmp_path: Path) -> None:
    d = Daemon(tmp_path)
    try:
        for step in SETUP:
            start = d.mark()
            assert d.send(step.command())
            assert d.response(start)[1]["event"] == "accepted"
        for i in range(10):
            start = d.mark()
            d.send("unplug")
            assert d.wait_event(lambda e: e["event"] == "reader", start)[1]["state"] == "disconnected"
            start = d.mark()
            d.send("plug")
            assert d.wait_event(lambda e: e["event"] == "reader", start)[1]["state"] == "connected"
            start = d.mark()
            d.send("skb/knight/1" if i % 2 == 0 else "back")
            assert d.response(start)[1]["event"] == "accepted"
    finally:
        rc = d.quit()
    assert rc == 0 and d.traceback() is None
    states = reader_states(d.events)
    assert_alternating(states)
    assert states.count("disconnected") == 10
    assert said(d.events, "reader.lost") == announced(d.events, "reader.lost") == 10
    assert said(d.events, "reader.back") == announced(d.events, "reader.back") == 10
    assert_journal_matches(d.events, tmp_path)
