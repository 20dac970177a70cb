"""A damaged venue database (a failing card): kept aside as it is, a new one
made, and every row SQLite can still read copied into it, read in ranges of
row ids that halve around the damage so one bad page costs only its rows
(as the table's journal salvage reads, companion/runtime/salvage.py: that
one knows the journal's tables and lives in the runtime, which the venue
does not import).  A play is kept only with all its players, so the league
never rates half a play.  SQLite's own ``.recover`` is not used: the
``sqlite3`` tool may be missing, and the one Debian 12 ships fails on every
file ("SQL logic error")."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

TABLES = ("meta", "tables", "events", "plays", "play_players", "people")
BUDGET = 20000  # queries: a damaged b-tree could otherwise send us down 2^31 ranges


def recover(path: Path, error: Exception, reopen: Callable[[], sqlite3.Connection]) -> str:
    """``path`` aside, ``reopen()`` a new database there, the rows copied; the line to say."""
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    path.rename(aside)
    wal = Path(f"{path}-wal")
    if wal.exists():
        wal.rename(Path(f"{aside}-wal"))
    Path(f"{path}-shm").unlink(missing_ok=True)
    db = reopen()
    try:
        old = sqlite3.connect(f"file:{aside}?mode=ro", uri=True)
    except sqlite3.Error:
        old = None
    plays = events = 0
    if old is not None:
        try:
            db.execute("BEGIN IMMEDIATE")
            for table in TABLES:
                _copy(old, db, table)
            _whole_plays_only(db)
            db.execute("UPDATE plays SET at = ended WHERE at IS NULL")
            db.execute("COMMIT")
        finally:
            old.close()
        plays = db.execute("SELECT COUNT(*) FROM plays").fetchone()[0]
        events = db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    why = " ".join(str(error).replace("*** in database main ***", "").split())
    return (f"{path.name} was damaged ({why}); kept as {aside.name}; recovered {plays} plays and {events} events; "
            "the venue goes on from there")


def _copy(old: sqlite3.Connection, db: sqlite3.Connection, table: str) -> None:
    cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
    try:
        have = {r[1] for r in old.execute(f"PRAGMA table_info({table})")}
    except sqlite3.Error:
        return
    cols = [c for c in cols if c in have]
    if not cols:
        return  # the schema's page is lost: nothing of this table can be found by name
    try:
        top = old.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0]
    except sqlite3.Error:
        top = 1 << 31
    if top is None:
        return
    names = ", ".join(cols)
    insert = f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({', '.join('?' * len(cols))})"
    stack, budget = [(1, int(top))], BUDGET
    while stack and budget > 0:
        lo, hi = stack.pop()
        budget -= 1
        try:
            rows = old.execute(f"SELECT {names} FROM {table} WHERE rowid BETWEEN ? AND ?", (lo, hi)).fetchall()
        except sqlite3.Error:
            if lo < hi:
                mid = (lo + hi) // 2
                stack += [(mid + 1, hi), (lo, mid)]
            continue
        for row in rows:
            try:
                db.execute(insert, row)
            except sqlite3.Error:  # a row garbled past its types (NOT NULL): not kept
                pass


def _whole_plays_only(db: sqlite3.Connection) -> None:
    counts = dict(db.execute("SELECT play_id, COUNT(*) FROM play_players GROUP BY play_id").fetchall())
    for ident, play in db.execute("SELECT id, play FROM plays").fetchall():
        try:
            whole = counts.get(ident, 0) == len(json.loads(play)["players"])
        except (ValueError, TypeError, KeyError):
            whole = False
        if not whole:
            db.execute("DELETE FROM plays WHERE id=?", (ident,))
    db.execute("DELETE FROM play_players WHERE play_id NOT IN (SELECT id FROM plays)")
