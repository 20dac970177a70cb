"""The supervisor keeps the daemon alive through a missing or lost reader:
one announcement each way, exponential backoff in between, clean stop."""

from __future__ import annotations

import errno
import queue
import threading
import time
from typing import Any

import pytest

from hardware.base import ReaderStatus, TagSeen
from hardware.supervisor import Backoff, ReaderUnavailable, Supervisor, describe

WAIT = 3.0  # upper bound for anything a test waits for


class FakeWait:
    """Records every pause the supervisor asks for and returns at once; after
    ``block_after`` pauses it holds (like a long real wait) until released or
    until the supervisor's stop event is set."""

    def __init__(self, block_after: int = 1000) -> None:
        self.delays: list[float] = []
        self.block_after = block_after
        self.release = threading.Event()
        self.stopping: threading.Event | None = None
        self.changed = threading.Condition()

    def __call__(self, seconds: float) -> None:
        with self.changed:
            self.delays.append(seconds)
            self.changed.notify_all()
        if len(self.delays) >= self.block_after:
            deadline = time.monotonic() + WAIT
            while not self.release.is_set() and time.monotonic() < deadline:
                if self.stopping is not None and self.stopping.wait(0.01):
                    return

    def wait_for(self, count: int) -> list[float]:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.delays) >= count, WAIT), self.delays
            return list(self.delays)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ScriptedConnection:
    """A device following a script, one step per open():
    ``"missing"`` (open raises ReaderUnavailable), ``OSError(...)`` (open
    raises it), or ``("up", outcome)`` where outcome is what serve() does:
    ``"hold"`` (report until stopped), an exception to raise, or a callable."""

    def __init__(self, *steps: Any) -> None:
        self.steps = list(steps)
        self.opens = 0
        self.closes = 0
        self.serving = threading.Event()

    def open(self) -> str:
        self.opens += 1
        step = self.steps.pop(0) if self.steps else "missing"
        if step == "missing":
            raise ReaderUnavailable("no reader found on usb")
        if isinstance(step, Exception):
            raise step
        self._outcome = step[1]
        return f"fake reader #{self.opens}"

    def serve(self, emit: Any, stopping: threading.Event) -> None:
        self.serving.set()
        outcome = self._outcome
        if callable(outcome) and not isinstance(outcome, type):
            outcome = outcome(emit, stopping)
        if isinstance(outcome, BaseException):
            raise outcome
        if outcome == "hold":
            stopping.wait(WAIT * 2)

    def close(self) -> None:
        self.closes += 1


def events_until(q: queue.Queue[Any], count: int) -> list[Any]:
    got: list[Any] = []
    deadline = time.monotonic() + WAIT
    while len(got) < count:
        got.append(q.get(timeout=max(0.01, deadline - time.monotonic())))
    return got


def statuses(events: list[Any]) -> list[bool]:
    return [e.connected for e in events if isinstance(e, ReaderStatus)]


@pytest.fixture
def run():
    """Start a supervisor on a connection; always stopped at the end."""
    started: list[Supervisor] = []

    def _run(connection: ScriptedConnection, *, wait: FakeWait | None = None,
             clock: Any = time.monotonic, backoff: Backoff | None = None):
        q: queue.Queue[Any] = queue.Queue()
        sup = Supervisor(connection, backoff=backoff or Backoff(1, 30), wait=wait, clock=clock)
        if wait is not None:
            wait.stopping = sup._stopping
        started.append(sup)
        sup.start(q.put)
        return sup, q

    yield _run
    for sup in started:
        sup.stop()


def test_reader_missing_at_start_is_announced_once_then_its_arrival(run):
    wait = FakeWait()
    connection = ScriptedConnection("missing", "missing", "missing", ("up", "hold"))
    sup, q = run(connection, wait=wait)
    events = events_until(q, 2)
    assert events[0] == ReaderStatus(False, "no reader found on usb")
    assert events[1] == ReaderStatus(True, "fake reader #4")
    assert wait.delays == [1, 2, 4]
    assert sup.connected is True
    assert q.empty()


def test_backoff_doubles_up_to_the_configured_maximum(run):
    wait = FakeWait(block_after=8)
    connection = ScriptedConnection()  # never there
    run(connection, wait=wait, backoff=Backoff.from_config({"retry_s": [1, 30]}))
    assert wait.wait_for(8)[:8] == [1, 2, 4, 8, 16, 30, 30, 30]


def test_a_missing_reader_is_announced_only_once_however_often_it_is_retried(run):
    wait = FakeWait(block_after=6)
    sup, q = run(ScriptedConnection(), wait=wait)
    wait.wait_for(6)
    assert [e.connected for e in list(q.queue)] == [False]


@pytest.mark.parametrize("loss", [OSError(errno.EIO, "Input/output error"),
                                  OSError(errno.ENODEV, "No such device")])
def test_reader_lost_mid_read_is_announced_once_and_comes_back(run, loss):
    wait = FakeWait()
    connection = ScriptedConnection(("up", loss), "missing", "missing", ("up", "hold"))
    sup, q = run(connection, wait=wait)
    events = events_until(q, 3)
    name = errno.errorcode[loss.errno]
    assert statuses(events) == [True, False, True]
    assert name in events[1].detail
    assert wait.delays == [1, 2, 4]
    assert connection.closes >= 2  # the lost device was let go before reopening


def test_connect_returning_false_counts_as_a_loss(run):
    # NfcConnection turns nfcpy's connect() == False into ReaderUnavailable.
    wait = FakeWait()
    connection = ScriptedConnection(("up", ReaderUnavailable("reader on usb stopped answering")),
                              ("up", "hold"))
    sup, q = run(connection, wait=wait)
    events = events_until(q, 3)
    assert events[1] == ReaderStatus(False, "reader on usb stopped answering")
    assert statuses(events) == [True, False, True]
    assert wait.delays == [1]


def test_open_raising_is_missing_not_fatal(run):
    wait = FakeWait()
    connection = ScriptedConnection(OSError(errno.EACCES, "Permission denied", "/dev/bus/usb/001/004"),
                              ("up", "hold"))
    sup, q = run(connection, wait=wait)
    events = events_until(q, 2)
    assert "EACCES" in events[0].detail and "/dev/bus/usb/001/004" in events[0].detail
    assert statuses(events) == [False, True]


def test_an_unexpected_failure_in_serve_keeps_the_daemon_running(run):
    wait = FakeWait()
    connection = ScriptedConnection(("up", RuntimeError("nfcpy tripped")), ("up", "hold"))
    sup, q = run(connection, wait=wait)
    events = events_until(q, 3)
    assert statuses(events) == [True, False, True]
    assert "RuntimeError: nfcpy tripped" in events[1].detail


def test_serve_returning_by_itself_is_a_loss(run):
    wait = FakeWait()
    connection = ScriptedConnection(("up", None), ("up", "hold"))
    sup, q = run(connection, wait=wait)
    assert statuses(events_until(q, 3)) == [True, False, True]


def test_flapping_reader_keeps_backing_off(run):
    # Each connection dies at once: the delays keep growing instead of hammering.
    wait = FakeWait(block_after=4)
    clock = FakeClock()
    eio = OSError(errno.EIO, "Input/output error")
    run(ScriptedConnection(*[("up", eio)] * 4), wait=wait, clock=clock)
    assert wait.wait_for(4)[:4] == [1, 2, 4, 8]


def test_a_connection_that_lasted_starts_the_backoff_afresh(run):
    wait = FakeWait()
    clock = FakeClock()
    eio = OSError(errno.EIO, "Input/output error")

    def long_connection(emit, stopping):
        clock.now += 3600  # an hour of play, then the cable is pulled
        return eio

    connection = ScriptedConnection(("up", eio), "missing", ("up", long_connection), "missing",
                              ("up", "hold"))
    sup, q = run(connection, wait=wait, clock=clock)
    assert statuses(events_until(q, 5)) == [True, False, True, False, True]
    assert wait.delays == [1, 2, 1, 2]


def test_tags_pass_through_while_connected(run):
    def reports(emit, stopping):
        emit(TagSeen(uid="04A1B2C3D4E5F6", text="skb/knight/1"))
        return "hold"

    sup, q = run(ScriptedConnection(("up", reports)), wait=FakeWait())
    assert events_until(q, 2)[1] == TagSeen(uid="04A1B2C3D4E5F6", text="skb/knight/1")


def test_stop_cuts_a_long_backoff_short():
    # Real waiting (the stop event's wait): a 30 s pause must not hold stop().
    connection = ScriptedConnection()
    sup = Supervisor(connection, backoff=Backoff(30, 30))
    q: queue.Queue[Any] = queue.Queue()
    sup.start(q.put)
    assert q.get(timeout=WAIT).connected is False
    thread = sup._thread
    assert thread is not None
    started = time.monotonic()
    sup.stop()
    assert time.monotonic() - started < 1.0
    assert not thread.is_alive()


def test_stop_while_serving_closes_the_device_and_reports_nothing_more():
    connection = ScriptedConnection(("up", "hold"))
    sup = Supervisor(connection)
    q: queue.Queue[Any] = queue.Queue()
    sup.start(q.put)
    assert q.get(timeout=WAIT) == ReaderStatus(True, "fake reader #1")
    assert connection.serving.wait(WAIT)
    started = time.monotonic()
    sup.stop()
    assert time.monotonic() - started < 1.0
    assert connection.closes == 1
    assert q.empty()
    sup.stop()  # idempotent


def test_backoff_config_is_validated():
    assert Backoff.from_config({}) == Backoff(1.0, 30.0)
    assert Backoff.from_config({"retry_s": [0.5, 10]}) == Backoff(0.5, 10.0)
    for bad in ([30, 1], [0, 5], "1-30", [1], [1, "x"], [True, 3]):
        with pytest.raises(ValueError, match="retry_s"):
            Backoff.from_config({"retry_s": bad})


def test_describe_names_the_errno():
    assert describe(OSError(errno.ENODEV, "No such device")) == \
        "reader error ENODEV: No such device"
    assert describe(ReaderUnavailable("no reader found on usb")) == "no reader found on usb"
