"""Which journal a copy belongs to (DESIGN.md, Persistence: copies).

A backup or a mirror belongs to one journal: the identity both carry is
the journal's first input, as its row holds it (its two times and its
text).  Every copy of the journal holds that row (a backup its first row,
the mirror its first line), two tables' first taps never share both their
times, and a journal written before this had it already: nothing new is
stored.  A restore or a recovery keeps it (the first input comes back
with the rest); the epoch (``journal.new_epoch``) tells those histories apart.
"""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

from companion.runtime.journal import read_at


def identity(t: float, wall: float, text: str) -> str:
    """The identity of the journal whose first input is this row."""
    return f"{zlib.crc32(f'{float(t)!r} {float(wall)!r} {text}'.encode()):08x}"


def identity_of(db: sqlite3.Connection) -> str | None:
    """The identity of ``db``'s journal; None before its first input."""
    row = db.execute("SELECT t, wall, input FROM inputs ORDER BY seq LIMIT 1").fetchone()
    return identity(row[0], row[1], row[2]) if row is not None else None


def identity_at(path: Path) -> str | None:
    """The identity of the journal (or backup) at ``path``; None if it has no input or cannot be read."""
    return read_at(path, identity_of)
