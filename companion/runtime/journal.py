"""The journal: every accepted input, appended to SQLite and made durable
before the table hears its feedback.  The game state is the replay of it.

Finished games are also written as plays (the score history) together with a
checkpoint, in the same transaction as the input that ended them, so start-up
replays only the game in progress, however long the history.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.core.events import Input, input_from_json, input_to_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS inputs (
    seq INTEGER PRIMARY KEY, t REAL NOT NULL, wall REAL NOT NULL, input TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS plays (
    id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, session INTEGER NOT NULL,
    game TEXT NOT NULL, play TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS checkpoint (
    id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, state TEXT NOT NULL);
"""


class JournalError(Exception):
    """The journal could not make an input durable; it was not accepted."""


@dataclass(frozen=True)
class Entry:
    seq: int
    t: float
    wall: float
    input: Input


class Journal:
    def __init__(self, path: Path | str, *, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly:  # a reader beside the running daemon (companion scores); WAL allows it
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, one transaction per input.
        self.db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        # FULL: each COMMIT is fsynced to the WAL before it returns — the durability
        # the table relies on ("nothing accepted is ever lost, not even on power loss").
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)

    # --------------------------------------------------------------- meta
    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -------------------------------------------------------------- write
    def append(self, inp: Input, t: float, wall: float, *,
               play: tuple[int, str, Mapping[str, Any]] | None = None,
               checkpoint: Mapping[str, Any] | None = None) -> int:
        """Append one accepted input (and, if it ended a game, the play and
        the new checkpoint) durably; returns its sequence number."""
        with self._transaction():
            cur = self.db.execute("INSERT INTO inputs (t, wall, input) VALUES (?, ?, ?)",
                                  (t, wall, json.dumps(input_to_json(inp))))
            seq = int(cur.lastrowid or 0)
            if play is not None:
                session, game, data = play
                self.db.execute("INSERT INTO plays (seq, session, game, play) VALUES (?, ?, ?, ?)",
                                (seq, session, game, json.dumps(data, sort_keys=True)))
            if checkpoint is not None:
                self.db.execute("INSERT OR REPLACE INTO checkpoint VALUES (1, ?, ?)",
                                (seq, json.dumps(checkpoint, sort_keys=True)))
        return seq

    def _transaction(self) -> _Tx:
        return _Tx(self.db)

    # --------------------------------------------------------------- read
    def checkpoint(self) -> tuple[int, dict[str, Any] | None]:
        row = self.db.execute("SELECT seq, state FROM checkpoint WHERE id=1").fetchone()
        return (row[0], json.loads(row[1])) if row else (0, None)

    def entries(self, after: int = 0) -> Iterator[Entry]:
        for seq, t, wall, data in self.db.execute(
                "SELECT seq, t, wall, input FROM inputs WHERE seq > ? ORDER BY seq", (after,)):
            yield Entry(seq, t, wall, input_from_json(json.loads(data)))

    def plays(self, session: int | None = None) -> list[dict[str, Any]]:
        q = "SELECT id, session, game, play FROM plays"
        rows = (self.db.execute(q + " WHERE session=? ORDER BY id", (session,)) if session is not None
                else self.db.execute(q + " ORDER BY id"))
        return [{"id": i, "session": s, "game": g, **json.loads(p)} for i, s, g, p in rows]

    def last_wall(self) -> float | None:
        """When the last input was taken (wall clock), if any."""
        row = self.db.execute("SELECT wall FROM inputs ORDER BY seq DESC LIMIT 1").fetchone()
        return float(row[0]) if row else None

    def count_inputs(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM inputs").fetchone()[0])

    def close(self) -> None:
        self.db.close()


class _Tx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:  # locked by another writer, disk gone, …
            raise JournalError(f"journal unavailable: {e}") from e

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            try:
                self.db.execute("COMMIT")
                return
            except sqlite3.Error as e:
                self._rollback()
                raise JournalError(f"journal commit failed: {e}") from e
        self._rollback()
        if isinstance(exc, sqlite3.Error):
            raise JournalError(f"journal write failed: {exc}") from exc

    def _rollback(self) -> None:
        # SQLite may have rolled back already (a full disk does): a second
        # ROLLBACK would raise "no transaction is active" over the real error.
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
