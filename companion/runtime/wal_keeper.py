"""The journal's write-ahead log, folded into the main file off the tap's path
and kept bounded.

Every accepted input is one fsynced commit into the WAL before its feedback
(runtime.journal).  A commit must never do more: no commit folds the WAL
(the journal turns SQLite's automatic checkpoint off), and a fold begins the
emptied WAL itself (``journal.checkpoint_without_waiting``), so the next tap
does not pay the new WAL header's sync.  Folds happen at quiet moments:

- at a game's end (runtime.backups, before its backup);
- in the daemon, on a thread of its own with its own connection, once the
  table has been quiet for ``WAL_IDLE_S`` with no game timer running (a
  fold that locks the WAL for its last frame never lands on a timed cue)
  and the WAL has grown past ``WAL_IDLE_BYTES``;
- whenever the WAL passes ``WAL_BOUND_BYTES`` (a table that never pauses):
  the daemon's thread folds at once, quiet or not;
- again every ``RETRY_S`` after a fold a reader kept from emptying the WAL,
  as long as no input came since (the table is as quiet as it was).

The hard bound: after an input's outputs are out, a WAL past
``2 × WAL_BOUND_BYTES`` in the daemon (its thread fell behind or fails), or
past ``WAL_BOUND_BYTES`` in a simulation (no thread: deterministic, the
power-cut campaign sees every write), is folded there and then on the loop's
thread.  So the WAL never holds more than that plus one input's frames
(with a reader holding the WAL open no fold can empty it: `companion scores`
reads for a moment).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from companion import threads
from companion.runtime.journal import Journal, checkpoint_without_waiting
from companion.runtime.journal_check import DB_ERRORS

WAL_IDLE_S = 5.0  # quiet this long (and no game timer running): the daemon folds the WAL…
WAL_IDLE_BYTES = 1 << 20  # …if it holds this much (a long game; a game's end folds it anyway)
WAL_BOUND_BYTES = 4 << 20  # about 1,000 frames: SQLite's own automatic checkpoint's size
RETRY_S = 1.0  # a fold a reader kept from emptying the WAL: tried again this much later, if still quiet


class WalKeeper:
    """A loop observer (``observe``): after each input's outputs are out it
    looks at the WAL's size (one ``stat``) and folds it, or asks its thread
    to.  ``background``: the daemon (a thread, connections of its own);
    otherwise folds run inline, only at the bound.  ``timed``: is a game
    timer running (asked on the loop's thread).  Failures are reported,
    never raised: the inputs are already safe in the WAL."""

    def __init__(self, journal: Journal, report: Callable[[str], None], *, background: bool,
                 timed: Callable[[], bool] = lambda: False) -> None:
        self.journal, self.report, self.timed = journal, report, timed
        self.idle_s, self.idle_bytes, self.bound_bytes = WAL_IDLE_S, WAL_IDLE_BYTES, WAL_BOUND_BYTES
        self.folds = 0  # folds done by this keeper (tests, the bench)
        self._cv = threading.Condition()
        self._due: float | None = None  # monotonic time of the next fold on the thread (None: none wanted)
        self._observed = 0  # inputs observed: a try again is due only if none came since the fold
        self._stopped = False
        self._thread = threads.spawn("wal-keeper", self._run, stop=self.close) if background else None

    def wal_bytes(self) -> int:
        try:
            return os.stat(f"{self.journal.path}-wal").st_size
        except OSError:
            return 0

    def observe(self, stage: str, item: Any, info: Any) -> None:
        if stage != "done":
            return
        size = self.wal_bytes()
        if size >= (self.bound_bytes if self._thread is None else 2 * self.bound_bytes):
            self._fold(self.journal.db)  # the hard bound, on the loop's thread
            return
        if self._thread is None:
            return
        if size >= self.bound_bytes:
            due: float | None = time.monotonic()
        elif size >= self.idle_bytes and not self.timed():
            due = time.monotonic() + self.idle_s
        else:
            due = None  # small, or the table runs on the clock: the next input decides again
        with self._cv:
            self._due = due
            self._observed += 1
            self._cv.notify()

    def close(self) -> None:
        with self._cv:
            self._stopped = True
            self._cv.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._stopped and (self._due is None or self._due > time.monotonic()):
                    self._cv.wait(None if self._due is None else self._due - time.monotonic())
                if self._stopped:
                    return
                self._due, observed = None, self._observed
            try:
                db = self.journal.connection()
            except DB_ERRORS as e:
                self.report(f"folding the journal's write-ahead log into it failed: {e}")
                continue
            try:
                emptied = self._fold(db)
            finally:
                db.close()
            with self._cv:  # a reader kept the WAL: once it leaves, the next tap would begin it
                if emptied is False and self._observed == observed and self._due is None:
                    self._due = time.monotonic() + RETRY_S  # no input since: the table is as quiet

    def _fold(self, db: Any) -> bool | None:
        """Whether the WAL was emptied (None: the fold failed, and said so)."""
        try:
            emptied = checkpoint_without_waiting(db)
        except (OSError, *DB_ERRORS) as e:
            self.report(f"folding the journal's write-ahead log into it failed: {e}")
            return None
        self.folds += 1
        return emptied
