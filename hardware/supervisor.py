"""Keeps a reader alive.

A reader can be missing when the daemon starts (not plugged in yet, no udev
permission, the PN532 HAT not enabled) or vanish later (the USB cable pulled,
the serial line dead).  None of that may stop the daemon: the supervisor says
``ReaderStatus(False, why)`` once, retries with exponential backoff, and says
``ReaderStatus(True, what)`` once the reader answers again.  Games carry on
meanwhile; only taps are missing.

The device itself is a ``Connection``: ``open`` finds it, ``serve`` reports tags
until asked to stop (returns) or until the device is lost (raises), ``close``
lets go of it.  Time goes through an injected ``wait`` and ``clock`` so tests
walk the backoff without sleeping.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from companion import threads
from companion.core import settings
from companion.core.settings import Field
from hardware.base import Emit, ReaderEvent, ReaderStatus

log = logging.getLogger(__name__)


class ReaderUnavailable(Exception):
    """The reader is missing or stopped answering; the message says why, for people."""


class Connection(Protocol):
    def open(self) -> str:
        """Find and open the device; return a description of it.  Raises
        ``ReaderUnavailable`` (or ``OSError``) when there is none to open."""

    def serve(self, emit: Emit, stopping: threading.Event) -> None:
        """Report tags until ``stopping`` is set (then return); raise when the
        device is lost."""

    def close(self) -> None:
        """Let go of the device; must not raise and may be called twice."""


@dataclass(frozen=True)
class Backoff:
    """Retry delays: ``first_s``, doubling (``factor``) up to ``max_s``."""

    first_s: float = 1.0
    max_s: float = 30.0
    factor: float = 2.0

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Backoff:
        """From ``retry_s: [min, max]`` (seconds) of the reader config, checked
        by the schema's rule (``SettingError``, a ValueError, names it)."""
        part = {"retry_s": RETRY_S}
        return cls.from_checked(settings.checked(part, {k: v for k, v in config.items() if k in part}, "reader"))

    @classmethod
    def from_checked(cls, config: Mapping[str, Any]) -> Backoff:
        """From the reader section as the config loader checked it."""
        first, longest = config["retry_s"]
        return cls(float(first), float(longest))

    def delays(self) -> Iterator[float]:
        delay = self.first_s
        while True:
            yield delay
            delay = min(delay * self.factor, self.max_s)


# The reader's ``retry_s`` setting: the backoff's first and longest pause.
RETRY_S = Field([Backoff.first_s, Backoff.max_s], settings.range_(0.01, 3600),
                "[min, max] seconds between attempts to find a missing reader")


def describe(exc: BaseException) -> str:
    """A sentence about why the reader is gone, for the log and the ``reader`` event."""
    if isinstance(exc, ReaderUnavailable):
        return str(exc)
    if isinstance(exc, OSError) and exc.errno is not None:
        name = errno.errorcode.get(exc.errno, str(exc.errno))
        where = f" ({exc.filename})" if exc.filename else ""
        return f"reader error {name}: {exc.strerror or os.strerror(exc.errno)}{where}"
    return f"reader failed: {type(exc).__name__}: {exc}"


class Supervisor:
    """A ``Reader`` that runs a ``Connection`` on its own thread and reopens it
    whenever it is missing or lost.

    ``wait(seconds)`` pauses between attempts (default: the stop event's
    wait, so ``stop`` cuts a pause short); ``clock()`` tells how long a
    connection lasted: one that stayed up for ``backoff.max_s`` or longer
    starts the next backoff from the beginning, a flapping one does not.
    ``wake()``: called by ``stop`` once the stop event is set, for a
    connection or a ``wait`` that blocks on something of its own (the
    simulated reader's hand-over); ``logger``: where the comings and goings
    are logged (the simulated reader's are in the event log already).
    """

    def __init__(self, connection: Connection, *, backoff: Backoff = Backoff(),
                 wait: Callable[[float], object] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 join_s: float = 1.5, name: str = "reader",
                 wake: Callable[[], None] | None = None, logger: logging.Logger = log) -> None:
        self.connection = connection
        self.backoff = backoff
        self._stopping = threading.Event()
        self._wait = wait if wait is not None else self._stopping.wait
        self._clock = clock
        self._join_s = join_s
        self._name = name
        self._thread: threading.Thread | None = None
        self._emit: Emit | None = None
        self._announced: bool | None = None
        self._wake = wake
        self._log = logger

    @property
    def connected(self) -> bool | None:
        """What was last announced: True, False, or None before the first attempt."""
        return self._announced

    def start(self, emit: Emit) -> None:
        if self._thread is not None:
            raise RuntimeError(f"{self._name} supervisor already started")
        self._emit = emit
        self._announced = None  # a fresh start says where it stands, whatever was said before
        self._stopping.clear()
        self._thread = threads.spawn(f"{self._name}-supervisor", self._run, stop=self._stopping.set)

    def stop(self) -> None:
        self._stopping.set()
        if self._wake is not None:
            self._wake()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(self._join_s)
            if thread.is_alive():
                self._log.warning("%s did not stop within %.1f s", self._name, self._join_s)

    # ------------------------------------------------------------ thread
    def _send(self, event: ReaderEvent) -> None:
        # Nothing is reported once stop() was called: the loop is going away.
        if self._emit is not None and not self._stopping.is_set():
            self._emit(event)

    def _announce(self, connected: bool, detail: str) -> None:
        if self._announced is connected:
            self._log.debug("%s still %s: %s", self._name,
                      "connected" if connected else "unavailable", detail)
            return
        self._announced = connected
        (self._log.info if connected else self._log.warning)("%s %s: %s", self._name,
                                                 "connected" if connected else "unavailable",
                                                 detail)
        self._send(ReaderStatus(connected, detail))

    def _pause(self, seconds: float) -> bool:
        """Wait before the next attempt; True when it is time to stop."""
        if self._stopping.is_set():
            return True
        self._log.debug("%s: next attempt in %.1f s", self._name, seconds)
        self._wait(seconds)
        return self._stopping.is_set()

    def _run(self) -> None:
        delays = self.backoff.delays()
        while not self._stopping.is_set():
            try:
                detail = self.connection.open()
            except Exception as exc:  # any failure to open is "missing", never fatal
                self._close_quietly()
                self._announce(False, describe(exc))
                if self._pause(next(delays)):
                    break
                continue
            if self._stopping.is_set():
                self._close_quietly()
                break
            self._announce(True, detail)
            opened_at = self._clock()
            try:
                self.connection.serve(self._send, self._stopping)
                loss = "reader stopped reporting"
            except Exception as exc:  # a lost device must never take the daemon down
                if not isinstance(exc, (ReaderUnavailable, OSError)):
                    self._log.exception("%s: unexpected failure", self._name)
                loss = describe(exc)
            finally:
                self._close_quietly()
            if self._stopping.is_set():
                break
            self._announce(False, loss)
            if self._clock() - opened_at >= self.backoff.max_s:
                delays = self.backoff.delays()
            if self._pause(next(delays)):
                break

    def _close_quietly(self) -> None:
        try:
            self.connection.close()
        except Exception:  # closing a vanished device may fail; it is gone either way
            self._log.debug("%s: close failed", self._name, exc_info=True)
