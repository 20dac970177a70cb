"""What a broker acknowledged is sent again until the broker has surely kept
it (mqtt/link.py, ``CONFIRM_S``; found by the MQTT fault campaign, qa/reliability/mqtt_faults.py).

mosquitto answers PUBACK before it saves to disk: killed in between, it forgets
a message it acknowledged.  So an acknowledged row waits in ``outbox_sent`` and
goes again at every new connection until the connection that acknowledged it
has held ``CONFIRM_S``.  These tests drive the link's worker through a stand-in
for paho's client (the same calls the link makes; the real client and broker are
in tests/test_mqtt_link.py and the fault campaign, qa/reliability/mqtt_faults.py),
so that a connection can be made by night, or dropped, exactly when the test says.
Every wait is bounded; nothing asserts a timing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from companion.core.events import Press
from companion.runtime.journal import Journal
from companion.runtime.outbox import OutboxStore
from mqtt import link as linkmod

TID = "t1"
OK = SimpleNamespace(is_failure=False, value=0)
EVENT = f"companion/{TID}/event"


class RunsCallables:
    """The loop's inbox as this link needs it: what is to run on the loop's
    thread runs at once; a command, a line for the table or the log is dropped."""

    def submit(self, item: Any) -> None:
        if callable(item):
            item()


class Client:
    """paho's client as the link uses it: what is published is kept in order."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes, int]] = []
        self._lock = threading.Lock()

    def publish(self, topic: str, payload: Any, qos: int = 0, retain: bool = False) -> Any:
        with self._lock:
            mid = len(self.sent) + 1
            self.sent.append((topic, payload if isinstance(payload, bytes) else str(payload).encode(), mid))
        return SimpleNamespace(mid=mid)

    def of(self, topic: str) -> list[tuple[bytes, int]]:
        with self._lock:
            return [(p, m) for t, p, m in self.sent if t == topic]

    def message_callback_add(self, *args: Any) -> None: ...
    def connect_async(self, *args: Any, **kwargs: Any) -> None: ...
    def loop_start(self) -> None: ...
    def subscribe(self, *args: Any, **kwargs: Any) -> None: ...
    def disconnect(self) -> None: ...
    def loop_stop(self) -> None: ...


class View:
    def __init__(self, night: bool) -> None:
        self.eyes_closed = night

    def public_view(self) -> dict[str, Any]:
        return {"phase": "playing", "game": "one-night", "seats": [], "lang": "en"}


class Rig:
    """A journal with one outbox row, the link on it, and its stand-in client."""

    def __init__(self, state: Path, night: bool = False) -> None:
        self.journal = Journal(state / "journal.sqlite")
        self.journal.append(Press("next"), 0.0, 0.0,
                            letters=lambda seq, play: [(f"{TID}/e/{seq}.0", EVENT, f'"{TID}/e/{seq}.0"')])
        self.store = OutboxStore(self.journal.path, self.journal.connection)
        self.client = Client()
        self.view = View(night)
        conf = linkmod.LinkConfig(TID, "127.0.0.1", 1)
        self.link = linkmod.MqttLink(conf, view=self.view, outbox=self.store, inbox=RunsCallables(),
                                     client_factory=lambda *_: self.client)

    def connect(self) -> None:
        self.link._on_connect(self.client, None, None, OK, None)

    def drop(self) -> None:
        self.link._on_disconnect(self.client, None, None, SimpleNamespace(is_failure=True), None)

    def ack(self, mid: int) -> None:
        self.link._on_publish(self.client, None, mid, OK, None)

    def states(self) -> int:
        return len(self.client.of(f"companion/{TID}/state"))

    def sent_events(self) -> list[int]:
        return [mid for _, mid in self.client.of(EVENT)]

    def sent_ids(self) -> list[str]:
        return [p.decode().strip('"') for p, _ in self.client.of(EVENT)]

    def unconfirmed(self) -> int:
        return int(self.journal.db.execute("SELECT count(*) FROM outbox_sent").fetchone()[0])

    def close(self) -> None:
        self.link.close()
        self.journal.close()


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    r = Rig(tmp_path)
    yield r
    r.close()


def until(pred: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, f"not within {timeout} s"
        time.sleep(0.01)


def acknowledged_once(r: Rig) -> int:
    """Connect, hand the row, acknowledge it: it leaves the outbox unconfirmed."""
    r.connect()
    until(lambda: len(r.sent_events()) == 1)
    r.ack(r.sent_events()[0])
    until(lambda: r.store.count() == 0 and r.unconfirmed() == 1)
    return r.sent_events()[0]


def test_finding_a_connection_made_by_night_sends_again_in_the_morning_what_the_broker_may_have_lost(
        tmp_path: Path) -> None:
    """The link marked a new connection "fresh" and consumed the mark before it
    saw the night: the acknowledged rows it should send again were never sent,
    and a broker that had died before saving them had lost them for good."""
    first = Rig(tmp_path / "a")
    acknowledged_once(first)
    first.close()
    r = Rig(tmp_path / "a", night=True)  # the daemon started again, by night
    try:
        r.connect()
        until(lambda: r.states() == 1)  # the night's state, and nothing else
        time.sleep(0.3)  # a few of the worker's turns by night
        assert r.sent_events() == []
        r.view.eyes_closed = False
        r.link.snapshot()  # the morning
        until(lambda: len(r.sent_events()) == 2)
        assert r.sent_ids() == [f"{TID}/e/1.0", f"{TID}/e/2.0"]  # the one kept aside first, then the new
    finally:
        r.close()


def test_finding_what_the_broker_acknowledged_an_hour_ago_goes_again_at_a_new_connection(tmp_path: Path) -> None:
    """The rows kept aside were sent again only if acknowledged in the last
    30 s by the wall clock: a table that found its broker again later (its own
    restart, a broker down a while, paho's backoff) had forgotten them."""
    j = Journal(tmp_path / "journal.sqlite")
    j.append(Press("next"), 0.0, 0.0, letters=lambda seq, play: [(f"{TID}/e/{seq}.0", EVENT, f'"{TID}/e/{seq}.0"')])
    store = OutboxStore(j.path, j.connection)
    [row] = store.pending()
    store.done([row.n], now=time.time() - 3600)
    store.close()
    j.close()
    r = Rig(tmp_path)  # appends a second row: the old one goes first, then the new
    try:
        r.connect()
        until(lambda: len(r.sent_events()) == 2)
        assert r.sent_ids() == [f"{TID}/e/1.0", f"{TID}/e/2.0"]
    finally:
        r.close()


def test_a_row_goes_again_while_its_connection_has_not_held_and_never_once_it_has(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linkmod, "CONFIRM_S", 0.5)
    acknowledged_once(rig)
    rig.drop()  # before CONFIRM_S: the broker may have died with it
    rig.connect()
    until(lambda: len(rig.sent_events()) == 2)
    assert rig.unconfirmed() == 1
    rig.ack(rig.sent_events()[1])  # acknowledged on this connection, which then holds
    until(lambda: rig.unconfirmed() == 0)
    states = rig.states()
    rig.drop()
    rig.connect()
    until(lambda: rig.states() == states + 1)  # the new connection's state: the worker has seen it
    time.sleep(0.3)
    assert len(rig.sent_events()) == 2


def test_an_acknowledgement_that_came_on_a_connection_since_dropped_confirms_nothing(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """paho's thread hands an acknowledgement, then the connection drops and
    another is made before the worker looks: the row was acknowledged by a
    broker that may be gone, so it goes again on the new connection."""
    monkeypatch.setattr(linkmod, "CONFIRM_S", 0.2)
    rig.connect()
    until(lambda: len(rig.sent_events()) == 1)
    with rig.link._lock:  # the worker waits while paho's thread does all three
        rig.ack(rig.sent_events()[0])
        rig.link._connected = False
        rig.link._connection += 1
        rig.link._connected = rig.link._fresh = True
    until(lambda: len(rig.sent_events()) == 2)
    assert rig.unconfirmed() == 1
