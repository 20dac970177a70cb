"""The journal's mirror (``journal: mirror: DIR``: a USB stick, a second card):
every accepted input also appended and fsynced there before its feedback, in
a form the table is rebuilt from by replay alone (the files:
runtime.mirror_file).

The mirror is a second chance, never a reason to stop, and never a reason
to wait long.  Each line is said at the table once, after the night if it
is night (``due``), and logged at once; ``companion doctor`` reports the rest.

- A folder that is missing (an unplugged stick's empty mount point is never
  written to: DIR must already exist), a write or an fsync that fails: the
  table goes on with the journal alone, and the mirror is tried again at the
  next start, which first brings it up to date.
- Every operation on the stick runs on the mirror's own thread, and the table
  waits for it a bounded while (``WAIT_S`` for a tap's line, beside the
  journal's COMMIT; ``START_WAIT_S`` for each step at start).  A stick that
  stops answering is left behind then, and never waited for again: its
  thread is left to it until the next start.
- A stick pulled out is noticed at the tap whose line went to a file that is
  no longer there (its path checked after each sync); once its folder has
  been seen gone and is back, the mirror is brought up to the journal and
  written again.
- A file named for this journal that holds other inputs than the journal
  (a card cloned to a second table, a copy made by hand) is never merged:
  it is set aside (renamed, kept), and a new mirror begun.  A line past the
  journal's last input (a kill between a tap's line and its COMMIT: an input
  never acknowledged) is cut off at start, like a torn write.
"""

from __future__ import annotations

import errno
import os
import queue
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import IO, Any

from companion import threads
from companion.core.events import Say
from companion.runtime.journal_identity import identity_of
from companion.runtime.mirror_file import (
    CATCH_UP,
    TAIL_BYTES,
    Record,
    file_name,
    journal_records,
    keep_through,
    last_record,
    line,
    parse,
    records,
)

__all__ = ["Mirror", "line", "parse", "records"]

WAIT_S = 2.0  # a tap waits this long at most for its mirror line; a healthy stick syncs in well under a second
START_WAIT_S = 10.0  # each step at start (a batch of CATCH_UP inputs written, a file read)


class _Job:
    """One piece of work on the stick, done on the mirror's thread."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self.work = work
        self.value: Any = None
        self.error: OSError | None = None
        self.done = threading.Event()

    def run(self) -> None:
        try:
            self.value = self.work()
        except OSError as e:
            self.error = e
        finally:
            self.done.set()


class Mirror:
    """The mirror of one journal, opened at start (``open``), then given
    each input as it is committed (``stage`` and ``settle``, from ``Journal.append``)."""

    sync: Callable[[int], None] = staticmethod(os.fsync)  # a modeled card's in the bench

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path: Path | None = None
        self.problem: str | None = None  # why it stopped, while it is stopped
        self.report: Callable[[str], None] = lambda message: None
        self._db: Any = None
        self._epoch = ""
        self._f: IO[bytes] | None = None
        self._first = False  # the journal has no input yet: the file is named for, and made with, the first
        self._staged: tuple[_Job, int] | None = None  # the line being written and synced, and its input's seq
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._stuck = False  # left behind: its thread waits on the stick
        self._away = False  # its folder seen gone since it stopped: taken up again when it is back
        self._to_say: list[str] = []

    # ------------------------------------------------------------ at start
    def open(self, db: Any, epoch: str) -> None:
        """Bring the mirror up to the journal (what is torn or was never
        taken cut off, the inputs it lacks appended): from here on it holds
        every input."""
        self._db, self._epoch = db, epoch
        try:
            self._on_stick(self._present, START_WAIT_S)
            self._begin(identity_of(db))
        except OSError as e:
            self._fail(e)

    def _present(self) -> None:
        if not self.folder.is_dir():
            raise FileNotFoundError(errno.ENOENT, f"{self.folder} is not there (is the stick plugged in and mounted?)")

    def _begin(self, ident: str | None, upto: int | None = None) -> None:
        """Open this journal's file and bring it up to input ``upto`` (None: the last)."""
        db = self._db
        self._first = ident is None
        if ident is None:
            return
        self.path = path = self.folder / file_name(self._epoch, ident)
        top = int(db.execute("SELECT coalesce(max(seq), 0) FROM inputs").fetchone()[0]) if upto is None else upto
        last: Record | None = self._on_stick(lambda: last_record(path, top) if path.exists() else None,
                                             START_WAIT_S)
        if last is not None and not self._holds(last):
            aside = self._on_stick(lambda: _set_aside(path), START_WAIT_S)
            self._tell(f"journal mirror {self.folder}: {path.name} does not hold this journal's inputs (another "
                       f"table's, or a copy that went its own way); kept as {aside.name}, a new mirror begun",
                       "journal.mirror_set_aside")
            last = None
        kept = last["seq"] if last is not None else 0
        self._f, kept = self._on_stick(partial(self._reopen, path, kept), START_WAIT_S)
        while kept < top:
            batch = b"".join(line(r) for r in journal_records(db, kept, min(top, kept + CATCH_UP)))
            if batch:
                self._on_stick(partial(self._write, batch), START_WAIT_S)
            kept += CATCH_UP

    def _holds(self, record: Record) -> bool:
        """Does the journal hold this very input at its seq?"""
        row = self._db.execute("SELECT input FROM inputs WHERE seq=?", (record["seq"],)).fetchone()
        return row is not None and row[0] == record["input"]

    def _reopen(self, path: Path, kept: int) -> tuple[IO[bytes], int]:
        """The file, open to append after input ``kept``'s good line, and
        ``kept`` (0 if that line is not there after all): only what follows
        that line's own newline is cut (a torn write, a line the journal
        never took), and a line that lost its newline gets it back."""
        if path.exists():
            with open(path, "r+b") as f:
                size = f.seek(0, os.SEEK_END)
                base = max(0, size - TAIL_BYTES) if kept else 0
                f.seek(base)
                data = f.read()
                end = keep_through(data, kept)
                if kept and not end and base:  # its line is further back than the tail
                    f.seek(0)
                    base, data = 0, f.read()
                    end = keep_through(data, kept)
                kept = kept if end else 0
                cut = base + end < size
                if cut:
                    f.truncate(base + end)
                if end and not data[:end].endswith(b"\n"):
                    f.seek(base + end)
                    f.write(b"\n")
                    cut = True
                if cut:
                    f.flush()
                    self.sync(f.fileno())
        return open(path, "ab"), kept

    # ---------------------------------------------------------- every input
    # One input's line: handed to the mirror's thread inside its journal
    # transaction (``stage``), written and synced there while the journal's
    # COMMIT syncs on the SD card, and waited for after the COMMIT (``settle``,
    # at most WAIT_S): two devices' syncs side by side — still before the feedback.
    def stage(self, db: Any, seq: int) -> None:
        """Input ``seq`` is about to be committed: its line written, its sync begun."""
        try:
            if self._first and self._f is None:
                self._begin(identity_of(db), upto=seq - 1)
            if self._staged is not None:  # a transaction that ended without a word: kept if its seq was not given again
                self.settle(committed=self._staged[1] < seq)
            if self._f is None:
                return
            f, data = self._f, b"".join(line(r) for r in journal_records(db, seq - 1, seq))
            self._staged = (self._submit(lambda: self._append(f, data)), seq)
        except OSError as e:
            self._fail(e)

    def settle(self, committed: bool) -> None:
        """After the journal's COMMIT (or its failure): the line synced, or —
        the input not taken — cut off again, so the mirror never holds an input
        the journal refused."""
        if self._staged is None:
            return
        (job, _), self._staged = self._staged, None
        try:
            at = self._wait(job, WAIT_S)
            if not committed and (f := self._f) is not None:
                self._on_stick(lambda: self._take_back(f, at), WAIT_S)
        except OSError as e:
            self._fail(e)

    def _append(self, f: IO[bytes], data: bytes) -> int:
        at = f.tell()
        f.write(data)
        f.flush()
        self.sync(f.fileno())
        self._still_there(f)
        return at

    def _still_there(self, f: IO[bytes]) -> None:
        """A stick pulled out leaves the open file writable — into nothing."""
        assert self.path is not None
        mine = os.fstat(f.fileno())
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            now = None
        if now is None or (now.st_dev, now.st_ino) != (mine.st_dev, mine.st_ino):
            raise OSError(errno.ENODEV, f"{self.path.name} is no longer there (the stick was unplugged)")

    def _take_back(self, f: IO[bytes], at: int) -> None:
        f.truncate(at)
        self.sync(f.fileno())

    def _write(self, data: bytes) -> None:
        assert self._f is not None
        self._f.write(data)
        self._f.flush()
        self.sync(self._f.fileno())

    # --------------------------------------------------------- the thread
    def _submit(self, work: Callable[[], Any]) -> _Job:
        if self._stuck:
            raise TimeoutError(errno.ETIMEDOUT, "it stopped answering")
        job = _Job(work)
        if self._worker is None:
            self._worker = threads.spawn("journal-mirror", self._run_jobs, stop=lambda: self._jobs.put(None))
        self._jobs.put(job)
        return job

    def _wait(self, job: _Job, bound: float) -> Any:
        if not job.done.wait(bound):
            self._stuck = True
            raise TimeoutError(errno.ETIMEDOUT, f"the stick stopped answering (nothing back in {bound:g} s); "
                               "left behind until the next start")
        if job.error is not None:
            raise job.error
        return job.value

    def _on_stick(self, work: Callable[[], Any], bound: float) -> Any:
        return self._wait(self._submit(work), bound)

    def _run_jobs(self) -> None:
        while (job := self._jobs.get()) is not None:
            job.run()

    # ------------------------------------------------------ when it fails
    def _fail(self, e: OSError) -> None:
        self.problem = f"journal mirror {self.folder}: {e.strerror or e}; the table goes on with the journal alone"
        self._first = False
        self._close_file()
        self._tell(self.problem, "journal.mirror_lost")

    def _tell(self, message: str, key: str) -> None:
        self.report(message)
        self._to_say.append(key)

    def due(self, quiet: bool) -> list[Say]:
        """The lines the table hears once each (the mirror stopped, set aside
        or written again) — never while eyes are closed (the night must sound
        the same).  A stick plugged in again is taken up here, after an input."""
        if quiet:
            return []
        self._take_up_again()
        said, self._to_say = [Say(key) for key in self._to_say], []
        return said

    def _take_up_again(self) -> None:
        """Once its folder was seen gone (an unplugged stick) and is there
        again: brought up to the journal and written again.  A stick that
        failed while there (full, read-only) waits for the next start."""
        if self.problem is None or self._stuck or self._db is None:
            return
        try:
            there = self._on_stick(self.folder.is_dir, WAIT_S)
        except OSError:
            there = False  # a mount whose stick was pulled answers with an error: gone all the same
        if not there or not self._away or self._stuck:
            self._away = self._away or not there
            return None
        self._away, self.problem = False, None
        try:
            self._begin(identity_of(self._db))
        except OSError as e:
            return self._fail(e)
        self._tell(f"journal mirror {self.folder}: there again; brought up to the journal and written again",
                   "journal.mirror_back")
        return None

    def close(self) -> None:
        self._close_file()
        if self._worker is not None:
            self._jobs.put(None)
            if not self._stuck:
                self._worker.join(5)
            self._worker = None

    def _close_file(self) -> None:
        """Closed on the mirror's thread, after what it is doing: a stick that
        stopped answering holds the loop's thread no more than it did."""
        f, self._f = self._f, None
        if f is None:
            return
        if self._worker is None:
            _close(f)
        else:
            self._jobs.put(_Job(lambda: _close(f)))


def _close(f: IO[bytes]) -> None:
    try:
        f.close()
    except OSError:
        pass  # a device already gone cannot refuse it more


def _set_aside(path: Path) -> Path:
    """Rename a file that is not this journal's mirror, keeping it."""
    aside = path.with_name(f"{path.name}.set-aside-{time.strftime('%Y%m%d-%H%M%S')}")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.set-aside-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
    os.replace(path, aside)
    return aside
