"""A reader that exists only in software: scripts and the terminal put tags on it.

It runs the real ``Supervisor`` (as gpiozero's mock pins run the real panel
code): a ``SimulatedConnection`` stands where nfcpy's would, so a simulated
unplug is a lost device, the supervisor announces it, waits, reopens and
announces the return, exactly as on the Pi.  What the simulation adds is the
hand-over: ``present``, ``unplug`` and ``plug`` return only once the
supervisor has reported what they caused (a tag, a loss, a return), so a
script's next step (``loop.pump()``) finds it in the loop's inbox and a
simulated run logs the same every time.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

from hardware.base import Emit, Inbox, ReaderEvent, ReaderStatus, TagSeen
from hardware.supervisor import Backoff, ReaderUnavailable, Supervisor

NAME = "simulated reader"
UNPLUGGED = "simulated reader unplugged"
HAND_OVER_S = 5.0  # a supervisor thread that takes longer than this is stuck: the step gives up

# The simulated reader's comings and goings are in the event log (``reader``);
# the supervisor's log lines would print them a second time, on stderr.
_quiet = logging.getLogger(__name__)
_quiet.addHandler(logging.NullHandler())


class _Laid:
    __slots__ = ("done", "reported", "tag")

    def __init__(self, tag: TagSeen) -> None:
        self.tag, self.reported, self.done = tag, False, threading.Event()


class SimulatedConnection:
    """The supervisor's ``Connection`` for a reader in software: ``open``
    fails while unplugged; ``serve`` hands on each tag laid on the reader and
    raises ``ReaderUnavailable`` once it is unplugged."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.plugged = True
        self.closed = False  # the supervisor is stopping: every wait ends
        self._tags: deque[_Laid] = deque()

    def open(self) -> str:
        with self.changed:
            if not self.plugged:
                raise ReaderUnavailable(UNPLUGGED)
        return NAME

    def serve(self, emit: Emit, stopping: threading.Event) -> None:
        while True:
            with self.changed:
                self.changed.wait_for(lambda: self._tags or not self.plugged or self.closed or stopping.is_set())
                if self.closed or stopping.is_set():
                    return
                if not self._tags:
                    raise ReaderUnavailable(UNPLUGGED)
                laid = self._tags.popleft()
            emit(laid.tag)
            laid.reported = True
            laid.done.set()

    def close(self) -> None:
        with self.changed:
            for laid in self._tags:  # the reader went away under them: never reported
                laid.done.set()
            self._tags.clear()

    def lay(self, tag: TagSeen) -> bool:
        """Hand a tag to ``serve``; True once it was reported."""
        laid = _Laid(tag)
        with self.changed:
            self._tags.append(laid)
            self.changed.notify_all()
        laid.done.wait(HAND_OVER_S)
        return laid.reported

    def pause(self, seconds: float) -> None:
        """The supervisor's wait between attempts: cut short by a plug or a stop."""
        with self.changed:
            self.changed.wait_for(lambda: self.plugged or self.closed, seconds)

    def wake(self) -> None:
        with self.changed:
            self.closed = True
            self.changed.notify_all()


class SimulatedReader:
    """A ``Reader``: the real supervisor over a ``SimulatedConnection``."""

    def __init__(self) -> None:
        self.connection = SimulatedConnection()
        self.supervisor = Supervisor(self.connection, backoff=Backoff(), wait=self.connection.pause,
                                     wake=self.connection.wake, name=NAME, logger=_quiet)
        self._emit: Emit | None = None
        self._reported = threading.Condition()
        self._status: bool | None = None  # what the supervisor last reported
        self._lock = threading.Lock()  # one person's hand at a time (the terminal, the page)

    @property
    def connected(self) -> bool:
        """Plugged in (the page's virtual reader shows it)."""
        return self.connection.plugged

    def start(self, inbox: Inbox) -> None:
        self._emit = inbox.submit
        self.connection.closed = False
        self.supervisor.start(self._report)
        self._await(lambda: self._status is not None)  # where it stands is said before start returns

    def close(self) -> None:
        self._emit = None
        self.supervisor.stop()

    def _report(self, event: ReaderEvent) -> None:
        """The supervisor's ``emit``: on to the loop, and noted for the hand-over."""
        emit = self._emit
        if emit is None:
            return
        emit(event)
        if isinstance(event, ReaderStatus):
            with self._reported:
                self._status = event.connected
                self._reported.notify_all()

    def _await(self, reported: Callable[[], bool]) -> None:
        with self._reported:
            self._reported.wait_for(reported, HAND_OVER_S)

    def present(self, *, text: str | None = None, uid: str | None = None) -> bool:
        """Lay a tag on the reader: an identity carried as NDEF text, or a bare
        UID.  Returns False (and nothing is reported) while unplugged."""
        with self._lock:
            if not self.connection.plugged or self._emit is None:
                return False
            return self.connection.lay(TagSeen(uid=uid, text=text))

    def unplug(self) -> None:
        with self._lock:
            with self.connection.changed:
                if not self.connection.plugged:
                    return
                self.connection.plugged = False
                self.connection.changed.notify_all()
            if self._emit is not None:
                self._await(lambda: self._status is False)

    def plug(self) -> None:
        with self._lock:
            with self.connection.changed:
                if self.connection.plugged:
                    return
                self.connection.plugged = True
                self.connection.changed.notify_all()
            if self._emit is not None:
                self._await(lambda: self._status is True)
