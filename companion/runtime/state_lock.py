"""One daemon per journal: an exclusive ``flock`` on ``journal.sqlite.lock``
held for the process's life; a second daemon is told who holds it.  Readers
(``companion scores``, ``companion backup``) need no lock: WAL lets them in."""

from __future__ import annotations

import fcntl
import os
import sys
import threading
from pathlib import Path

from companion.core.tags import printable


class StateLocked(Exception):
    """Another process holds the journal.  ``str()`` is one line for the terminal."""


class StateUnwritable(Exception):
    """The state directory cannot be written (a card gone read-only, a wrong
    owner): the table could accept nothing.  ``str()`` is one line."""


class StateLock:
    """An exclusive ``flock`` on ``<journal>.lock`` for as long as this object
    lives; the file names its holder (pid and command line)."""

    def __init__(self, journal_path: Path) -> None:
        self.path = Path(str(journal_path) + ".lock")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o640)
        except OSError as e:  # EROFS, EACCES, ENOSPC…: the first write of a start, said plainly
            raise StateUnwritable(f"{self.path.parent} cannot be written ({e.strerror or e}): the journal needs "
                                  "a writable state directory (a card that turned read-only needs fsck or "
                                  "replacing; a wrong owner, chown)") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(fd)
            os.close(fd)
            raise StateLocked(f"{journal_path} is in use by another companion ({holder}); "
                              "stop that one first, or give this one its own --state directory") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n{' '.join(sys.argv)}\n".encode())
        self.fd: int | None = fd
        self._releasing = threading.Lock()

    def release(self) -> None:
        # Taken under a lock: two releases at once (a signal's and a finally's) must not both
        # close it, the second maybe closing a descriptor the number was given to meanwhile.
        with self._releasing:
            fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace").splitlines()
    except OSError:
        text = []
    pid = text[0].strip() if text else "?"
    cmd = printable(text[1])[:200] if len(text) > 1 else "?"
    return f"pid {pid}: {cmd}"


def held_by(journal_path: Path) -> str | None:
    """Who holds the lock on this journal, or None if nobody does."""
    try:
        lock = StateLock(journal_path)
    except StateLocked as e:
        return str(e)
    lock.release()
    return None
