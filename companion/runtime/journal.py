"""The journal: every accepted input, appended to SQLite and made durable
before the table hears its feedback.  The game state is the replay of it.

Finished games are also written as plays (the score history) together with a
checkpoint, in the same transaction as the input that ended them, so start-up
replays only the game in progress, however long the history.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.core.events import Input, input_from_json, input_to_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS inputs (
    seq INTEGER PRIMARY KEY, t REAL NOT NULL, wall REAL NOT NULL, input TEXT NOT NULL);
-- plays.session is the games night (the evening): the column keeps the name the
-- first journals gave it, so every journal ever written reads the same way.
CREATE TABLE IF NOT EXISTS plays (
    id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, session INTEGER NOT NULL,
    game TEXT NOT NULL, play TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS checkpoint (
    id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS quarantine (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, row_id INTEGER NOT NULL, data TEXT,
    problem TEXT NOT NULL, wall REAL NOT NULL);
-- The MQTT outbox: messages written with the input (``seq``) that produced them,
-- sent in (seq, k) order, each deleted only once the broker acknowledged it
-- (mqtt/link.py).  Keyed by the input's seq, never given twice (inputs are only
-- appended), so the sender's "handed up to (seq, k)" always means the same rows.
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER NOT NULL, k INTEGER NOT NULL, id TEXT NOT NULL UNIQUE, topic TEXT NOT NULL,
    payload TEXT NOT NULL, PRIMARY KEY (seq, k));
-- What the broker acknowledged and may not have kept yet (``acked``: wall time), sent again at
-- each new connection until confirmed: a broker killed before it saved it forgets it (mqtt/link.py).
CREATE TABLE IF NOT EXISTS outbox_sent (
    id TEXT PRIMARY KEY, topic TEXT NOT NULL, payload TEXT NOT NULL, acked REAL NOT NULL);
"""
# PRAGMA user_version.  0: the first journals (no version, no quarantine table);
# 1: adds the quarantine; 2: the MQTT outbox (and its acknowledged rows).  A journal from a newer release is never written into.
SCHEMA_VERSION = 2
# The version that added each table v0 lacked: what a restore expects of an older backup (schema_problem).
TABLES_SINCE = {"quarantine": 1, "outbox": 2, "outbox_sent": 2}
# The journal's epoch (a ``meta`` key): none at first; a fresh token whenever older
# inputs are put back in its place (a restore, a recovery from a backup), since the
# seqs and play ids after them are then given out again.  The ids a table publishes
# carry it (runtime.outbox), so a receiver that keeps ids never drops a new play as
# one it has already seen.
EPOCH = "epoch"
# Every journal's page size (set before its first page): salvage tries it before a damaged header's.
PAGE_SIZE = 4096


def new_epoch(db: sqlite3.Connection) -> str:
    """Mark ``db``'s journal as put back: later ids differ from any before."""
    token = os.urandom(4).hex()  # not the secrets module: it brings OpenSSL (hashlib), 3.7 MiB of every daemon
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (EPOCH, token))
    return token


def epoch_of(db: sqlite3.Connection) -> str:
    row = db.execute("SELECT value FROM meta WHERE key=?", (EPOCH,)).fetchone()
    return str(row[0]) if row is not None else ""


def epoch_at(path: Path) -> str | None:
    """The epoch of the journal (or backup) at ``path``; None if it cannot be read."""
    return read_at(path, epoch_of)


def read_at(path: Path, read: Callable[[sqlite3.Connection], str | None]) -> str | None:
    """``read`` of the journal (or backup) at ``path``, opened read-only; None if it cannot be read."""
    try:
        db = read_only(path)
        try:
            return read(db)
        finally:
            db.close()
    except (sqlite3.Error, UnicodeDecodeError):  # SQLite's error text can quote a damaged page
        return None


# One input's outbox rows, made once its seq (and its play's id) is known: (id, topic, payload).
Letters = Callable[[int, int | None], Iterable[tuple[str, str, str]]]


class JournalError(Exception):
    """The journal could not make an input durable; it was not accepted."""


class JournalTooNew(Exception):
    """The journal was written by a newer release: refuse it rather than write into it."""


@dataclass(frozen=True)
class Entry:
    seq: int
    t: float
    wall: float
    input: Input


class Journal:
    mirror: Any = None  # runtime.mirror.Mirror: each committed input also goes there (journal: mirror: DIR)

    def __init__(self, path: Path | str, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.skipped: list[tuple[str, int]] = []  # (table, row id) of rows that could not be read
        if readonly:  # a reader beside the running daemon (companion scores); WAL allows it
            self.db = read_only(self.path)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = self._open()
        self.db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a no-op on a journal that has pages
        self.db.execute("PRAGMA journal_mode=WAL")
        # FULL: each COMMIT is fsynced to the WAL before it returns (nothing accepted is ever lost)
        self.db.execute("PRAGMA synchronous=FULL")
        version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            self.db.close()
            raise JournalTooNew(f"{self.path} was written by a newer companion (journal version {version}; "
                                f"this one knows up to {SCHEMA_VERSION}): install that release again, "
                                "or `companion restore` a backup this release made")
        # One transaction: a power cut leaves the whole schema or none of it.
        # CREATE … IF NOT EXISTS is also the migration from version 0.
        self.db.executescript(f"BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")

    def _connect(self) -> sqlite3.Connection:
        """The read-write connection (the power-cut campaign swaps in one
        through a crash-simulating VFS: qa/reliability/powercut.py)."""
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, one transaction per input.
        db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        db.text_factory = _text
        return db

    def _open(self) -> sqlite3.Connection:
        db = self._connect()
        # No commit folds the WAL into the main file (SQLite's automatic checkpoint
        # would, in the committing connection, once the WAL passes 1000 pages: a
        # tap's feedback waiting for two more syncs).  runtime.wal_keeper folds it,
        # off the tap's path, and keeps it bounded.
        db.execute("PRAGMA wal_autocheckpoint=0")
        return db

    def connection(self) -> sqlite3.Connection:
        """Another read-write connection to this journal, made the same way
        (the MQTT outbox's, runtime.outbox.OutboxStore, used from its own thread;
        the WAL keeper's)."""
        return self._open()

    # --------------------------------------------------------------- meta
    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    @property
    def epoch(self) -> str:
        """``""`` until the journal was put back (``new_epoch``)."""
        return epoch_of(self.db)

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -------------------------------------------------------------- write
    def append(self, inp: Input, t: float, wall: float, *,
               play: tuple[int, str, Mapping[str, Any]] | None = None,
               checkpoint: Mapping[str, Any] | None = None, letters: Letters | None = None) -> int:
        """Append one accepted input (and, if it ended a game, the play and
        the new checkpoint; the messages it publishes, ``letters``) durably,
        all or nothing; returns its sequence number."""
        with self._transaction():
            cur = self.db.execute("INSERT INTO inputs (t, wall, input) VALUES (?, ?, ?)",
                                  (t, wall, json.dumps(input_to_json(inp))))
            seq = int(cur.lastrowid or 0)
            play_id = None
            if play is not None:
                evening, game, data = play
                cur = self.db.execute("INSERT INTO plays (seq, session, game, play) VALUES (?, ?, ?, ?)",
                                      (seq, evening, game, json.dumps(data, sort_keys=True)))
                play_id = int(cur.lastrowid or 0)
            if letters is not None:
                self.db.executemany("INSERT INTO outbox (seq, k, id, topic, payload) VALUES (?, ?, ?, ?, ?)",
                                    [(seq, k, *row) for k, row in enumerate(letters(seq, play_id))])
            if checkpoint is not None:
                self.db.execute("INSERT OR REPLACE INTO checkpoint VALUES (1, ?, ?)",
                                (seq, json.dumps(checkpoint, sort_keys=True)))
            if self.mirror is not None:  # its line, synced beside the COMMIT's sync (runtime.mirror); never fails
                self.mirror.stage(self.db, seq)
        return seq

    def _transaction(self) -> _Tx:
        return _Tx(self.db, self.mirror)

    # --------------------------------------------------------------- read
    # A row that cannot be read is skipped and its id kept in ``skipped``: the
    # daemon moves such rows to the quarantine at start (companion.runtime.journal_guard),
    # a reader beside it (``companion scores``) must still show the rest.
    def checkpoint(self) -> tuple[int, dict[str, Any] | None]:
        """(seq, state); an unreadable checkpoint counts as none, so the
        replay starts from the first input — every input is kept, so the
        table comes out the same, only slower."""
        row = self.db.execute("SELECT seq, state FROM checkpoint WHERE id=1").fetchone()
        if row is None:
            return 0, None
        state = _json(row[1])
        if not isinstance(row[0], int) or not isinstance(state, dict):
            self.skipped.append(("checkpoint", 1))
            return 0, None
        return row[0], state

    def entries(self, after: int = 0) -> Iterator[Entry]:
        for seq, t, wall, data in self.db.execute(
                "SELECT seq, t, wall, input FROM inputs WHERE seq > ? ORDER BY seq", (after,)):
            try:
                inp = input_from_json(_json(data))
                yield Entry(seq, float(t), float(wall), inp)
            except (ValueError, TypeError):
                self.skipped.append(("inputs", seq))

    def plays(self, evening: int | None = None) -> list[dict[str, Any]]:
        q = "SELECT id, session, game, play FROM plays"
        rows = (self.db.execute(q + " WHERE session=? ORDER BY id", (evening,)) if evening is not None
                else self.db.execute(q + " ORDER BY id"))
        out = []
        for i, s, g, p in rows:
            data = _json(p)
            if play_problem(data) is None:
                out.append({"id": i, "evening": s, "game": g, **data})
            else:
                self.skipped.append(("plays", i))
        return out

    def last_wall(self) -> float | None:
        """When the last input was taken (wall clock), if any."""
        last = self.last_times()
        return last[1] if last else None

    def last_times(self) -> tuple[float, float] | None:
        """The last input's (t, wall), if any: where the next run's times go on from."""
        row = self.db.execute("SELECT t, wall FROM inputs ORDER BY seq DESC LIMIT 1").fetchone()
        return (float(row[0]), float(row[1])) if row else None

    def count_inputs(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM inputs").fetchone()[0])

    def checkpoint_wal(self) -> None:
        """Copy the WAL into the main file and empty it (at a game's end): until then the WAL
        *is* the data, and a copy of the main file alone would save nothing.  Never waits."""
        checkpoint_without_waiting(self.db)

    def backup_to(self, target: Path) -> None:
        """A consistent copy through SQLite's online backup API (safe while
        this or another connection writes), as a self-contained file with no
        WAL, fsynced before it is renamed into place."""
        tmp = target.with_name(target.name + ".part")
        tmp.unlink(missing_ok=True)
        dest = sqlite3.connect(str(tmp), isolation_level=None)
        try:
            self.db.backup(dest)
            dest.execute("PRAGMA journal_mode=DELETE")
        finally:
            dest.close()
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
        fsync_dir(target.parent)

    def close(self) -> None:
        if self.mirror is not None:
            self.mirror.close()
        self.db.close()


def checkpoint_without_waiting(db: sqlite3.Connection) -> bool:
    """Fold the WAL into the main file, and empty it if no reader is using it —
    without ever making a tap wait; True if emptied.  TRUNCATE alone holds the
    write lock while its busy handler waits for readers to leave the WAL (a
    `companion scores` beside the daemon): the next tap then waited 5 s and was
    refused.  So PASSIVE first (copies what it can, takes no write lock), then
    TRUNCATE with no busy wait: with a reader (or a writer) there it gives up
    at once and the WAL stays, as it is (SQLite starts it over at a later write,
    or a later fold empties it).  An emptied WAL is begun here (``_begin_wal``)."""
    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    waited = int(db.execute("PRAGMA busy_timeout").fetchone()[0])
    db.execute("PRAGMA busy_timeout=0")
    try:
        busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    finally:
        db.execute(f"PRAGMA busy_timeout={waited}")
    if not busy:  # kept by a reader, the WAL would only grow by the first frame
        _begin_wal(db)
    return not busy


def _begin_wal(db: sqlite3.Connection) -> None:
    """Write the first frame of an emptied WAL now.  The first commit into
    an empty (or started over) WAL writes the WAL's header and syncs it
    before its own frames — SQLite's guard against a restart being reordered
    with what follows — so it pays two syncs: on a microSD card the next
    tap's feedback waited for both.  The frame rewrites the schema version
    as it is, changing nothing.  Only a saving: if it cannot be written (a
    full disk), the next commit begins the WAL as it always could."""
    try:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        db.execute("BEGIN IMMEDIATE")
        db.execute(f"PRAGMA user_version={version}")
        db.execute("COMMIT")
    except sqlite3.Error:
        _Tx(db)._rollback()


def read_only(path: Path) -> sqlite3.Connection:
    """A connection that reads ``path`` and never writes it."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    db.text_factory = _text
    return db


def _text(raw: bytes) -> str:
    # A damaged page can hold text that is not UTF-8: read it (and let the
    # row be judged as the garbage it is) rather than raise mid-query.
    return raw.decode("utf-8", "replace")


def fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _json(text: Any) -> Any:
    """Parsed JSON, or None if it is not JSON text."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def play_problem(data: Any) -> str | None:
    """Why a stored play cannot be shown (None: it can)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if not isinstance(data.get("playDate"), str) or not isinstance(data.get("durationMin"), int):
        return "no playDate or durationMin"
    players = data.get("players")
    if not isinstance(players, list) or not all(
            isinstance(p, dict) and isinstance(p.get("name"), str) and isinstance(p.get("score"), int)
            and isinstance(p.get("winner"), bool) and isinstance(p.get("startPlayer"), bool) for p in players):
        return "players are not a list of {name, score, winner, startPlayer}"
    return None


class _Tx:
    def __init__(self, db: sqlite3.Connection, mirror: Any = None) -> None:
        self.db, self.mirror = db, mirror  # the mirror waits for its line's sync, or takes it back

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:  # locked by another writer, disk gone, …
            raise JournalError(f"journal unavailable: {e}") from e

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            try:
                self.db.execute("COMMIT")
                if self.mirror is not None:
                    self.mirror.settle(committed=True)
                return
            except sqlite3.Error as e:
                self._rollback()
                raise JournalError(f"journal commit failed: {e}") from e
        self._rollback()
        if isinstance(exc, sqlite3.Error):
            raise JournalError(f"journal write failed: {exc}") from exc

    def _rollback(self) -> None:
        if self.mirror is not None:
            self.mirror.settle(committed=False)
        # SQLite may have rolled back already (a full disk does): a second
        # ROLLBACK would raise "no transaction is active" over the real error.
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
