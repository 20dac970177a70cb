"""The venue's own SQLite (WAL, ``<state>/venue.sqlite``): every table's last
state and whether it is online, the events and the plays keyed by their ids
(a repeat is dropped: ``INSERT OR IGNORE``), the people who played.

Written on the MQTT thread, read by the pages' thread: one connection behind
a lock.  A play or an event is acknowledged to the broker only once it is
committed here (subscriber), so a venue killed mid-write hears it again.
The tables' rows are also held in memory (``_rows``, the database's copy,
loaded at the start and reloaded when a write is undone): a thousand tables'
states a second neither read their row back nor parse it for every page.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from venue import schema
from venue.reads import Reads

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY, state TEXT, online INTEGER, last_seen REAL NOT NULL, changed REAL NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY, table_id TEXT NOT NULL, t REAL NOT NULL, event TEXT NOT NULL, fields TEXT NOT NULL,
    received REAL NOT NULL);
CREATE TABLE IF NOT EXISTS plays (
    id TEXT PRIMARY KEY, table_id TEXT NOT NULL, seq INTEGER NOT NULL, game TEXT NOT NULL, evening INTEGER NOT NULL,
    ended REAL NOT NULL, play TEXT NOT NULL, received REAL NOT NULL, at REAL);
CREATE TABLE IF NOT EXISTS play_players (
    play_id TEXT NOT NULL, pos INTEGER NOT NULL, person TEXT, name TEXT NOT NULL, seat TEXT NOT NULL, score INTEGER,
    winner INTEGER NOT NULL, team TEXT, place INTEGER, PRIMARY KEY (play_id, pos));
CREATE TABLE IF NOT EXISTS people (key TEXT PRIMARY KEY, name TEXT NOT NULL, first_seen REAL NOT NULL);
"""
# after the columns a venue of an older version lacks are added (``_upgrade``)
INDEXES = """
CREATE INDEX IF NOT EXISTS plays_in_order ON plays (ended, table_id, seq);
CREATE INDEX IF NOT EXISTS plays_in_league_order ON plays (at, table_id, seq);
"""
CHECKPOINT_S = 2.0  # the WAL copied into the database file this often, on a thread of its own
WAL_LIMIT = 64 * 1024 * 1024  # what of the WAL's file is kept once checkpointed (bytes)
GROUP_S = 0.05  # tables' states share one commit this long (a play or an event has its own)
# a table's state as stored: keys sorted (a state sent again is the same text); one encoder, not one per call
_STATE_TEXT = json.JSONEncoder(sort_keys=True).encode
# A play rated later than this many plays already rated (a table that was away for days) is rated
# where it arrives: the league keeps this much history to rate a late play in its place (league.Tally).
LATE_PLAYS = 200


@dataclass(frozen=True)
class Change:
    """What a message changed, for the pages: a table's row, a new event or a new play."""
    kind: str  # "table" | "event" | "play"
    id: str


class StoreError(Exception):
    """The state directory cannot hold the venue's database (one line)."""


class Store(Reads):
    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / "venue.sqlite"
        self.recovered: str | None = None  # what a start on a damaged database recovered (venue.salvage)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = self._open()
        except sqlite3.OperationalError as e:
            raise StoreError(f"the venue cannot keep its state in {self.path.parent} ({e})") from None
        except sqlite3.DatabaseError as e:  # damaged (a failing card): kept aside, what it holds recovered
            from venue import salvage

            try:
                self.recovered = salvage.recover(self.path, e, self._open)
            except (OSError, sqlite3.Error) as again:
                raise StoreError(f"{self.path}: damaged ({e}), and it could not be set aside ({again}); move it "
                                 "aside to start an empty venue") from None
        except OSError as e:
            raise StoreError(f"the venue cannot keep its state in {self.path.parent} ({e})") from None
        self.lock = threading.Lock()
        self._group_since: float | None = None  # when the open group of states began (monotonic)
        self._group_open = threading.Event()  # wakes the flusher: a group began
        self._closed = False
        self._stop = threading.Event()
        self._checkpointer = threading.Thread(target=self._checkpoints, name="venue-checkpoint", daemon=True)
        self._checkpointer.start()
        # commits a group no message did: one thread, not a timer's thread per group (20 a second)
        self._flusher = threading.Thread(target=self._flushes, name="venue-group-commit", daemon=True)
        self._flusher.start()
        self._synchronous = ""  # the PRAGMA in force (set on the first write)
        self._counted: dict[str, int] = {}  # counters not yet in ``meta``: written with the next commit
        self._rows: dict[str, list[Any]] = {}  # id → [state text, online, last seen, state parsed or None]
        self._load_rows()
        self.version = 0  # moves with every change the pages may show
        self.plays_version = 0  # moves with every new play (the league is recomputed only then)

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=5.0)
        self.db = db
        try:
            # a damaged file (a failing card) is found here, not by the first play's commit
            problems = [row[0] for row in db.execute("PRAGMA quick_check(3)").fetchall()]
            if problems != ["ok"]:
                raise sqlite3.DatabaseError(problems[0])
            db.execute("PRAGMA journal_mode=WAL")
            # never checkpointed by a commit: a message never waits for the database file's
            # fsync; the checkpointer thread does it (``_checkpoints``), and the WAL kept is bounded
            db.execute("PRAGMA wal_autocheckpoint=0")
            db.execute(f"PRAGMA journal_size_limit={WAL_LIMIT}")
            db.executescript(SCHEMA)
            self._upgrade()
            db.executescript(INDEXES)
        except BaseException:
            db.close()
            raise
        return db

    def _upgrade(self) -> None:
        """A venue database of an older version: the league's order (``at``) is the play's end."""
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(plays)")}
        if "at" not in columns:
            self.db.execute("ALTER TABLE plays ADD COLUMN at REAL")
        self.db.execute("UPDATE plays SET at = ended WHERE at IS NULL")

    # ---------------------------------------------------------------- writes
    def apply(self, record: schema.Record, now: float) -> Change | None:
        """Keep ``record`` (heard at wall time ``now``); what it changed, or None
        (a repeat, a state the board shows already, a command)."""
        # A play or an event is on the disk before the broker hears it was taken (FULL:
        # the commit is fsynced, its own).  A table's state comes again (retained, at each
        # new subscription), so a power cut may lose its last few: states share one
        # commit (``_grouped``) every GROUP_S (NORMAL: fsynced at the WAL's checkpoint),
        # and a thousand tables' states a second cost neither an fsync nor a commit each.
        durable = isinstance(record, (schema.Event, schema.Play))
        with self.lock:
            if durable:
                self._end_group()
                self._sync("FULL")
                with self._tx():
                    change = self._apply(record, now)
                    self._write_counts()
                    return change
            with self._grouped():
                return self._apply(record, now)

    def _apply(self, record: schema.Record, now: float) -> Change | None:
        if isinstance(record, schema.Command):
            change = None  # a button from Home Assistant: the table's business, not the board's
        elif isinstance(record, (schema.Status, schema.State)):
            change = self._table(record, now)
        elif isinstance(record, schema.Event):
            change = self._event(record, now)
        else:
            change = self._play(record, now)
        self._count("messages")  # counted once kept: a message that failed comes again
        if change is None and isinstance(record, (schema.Event, schema.Play)):
            self._count("duplicates")
        elif change is not None:
            self.version += 1
            self.plays_version += change.kind == "play"
        return change

    def refuse(self) -> None:
        with self.lock, self._grouped():  # a count: nothing the broker would send again
            self._count("refused")
            self._count("messages")

    @contextmanager
    def _grouped(self) -> Iterator[None]:
        """One message's changes inside the group's transaction, committed once
        GROUP_S old, by the next message or by the flusher.  A state writes one
        statement, which SQLite undoes alone when it fails (no savepoint per
        message); a failure that undid the whole transaction (a full disk) drops
        the group.  The pages read through this same connection (and ``_rows``),
        so they see a state before its commit."""
        if self._group_since is None:
            self._sync("NORMAL")
            self.db.execute("BEGIN IMMEDIATE")
            self._group_since = time.monotonic()
            self._group_open.set()
        try:
            yield
        except BaseException:
            if not self.db.in_transaction:  # SQLite undid the whole transaction itself
                self._abandon_group()
            raise
        if time.monotonic() - self._group_since >= GROUP_S:
            self._end_group()

    def _end_group(self) -> None:
        if self._group_since is None:
            return
        self._group_since = None
        try:
            self._write_counts()
            self.db.execute("COMMIT")
        except sqlite3.Error:
            self._abandon_group()
            raise

    def _abandon_group(self) -> None:
        self._group_since = None
        try:
            self.db.execute("ROLLBACK")
        except sqlite3.Error:  # already undone: the error that undid it is the one to say
            pass
        self._undone()

    def _undone(self) -> None:
        """A transaction rolled back: its counts are gone with it, the rows read again."""
        self._counted.clear()
        self._load_rows()

    def _load_rows(self) -> None:
        self._rows = {i: [state, online, seen, None] for i, state, online, seen in
                      self.db.execute("SELECT id, state, online, last_seen FROM tables")}

    def _flushes(self) -> None:
        """Commit each group GROUP_S after it began, if no message did first."""
        while True:
            self._group_open.wait()
            since = self._group_since
            if self._stop.wait(max(0.0, since + GROUP_S - time.monotonic()) if since is not None else 0):
                return
            with self.lock:
                if self._closed:
                    return
                if self._group_since is None or time.monotonic() - self._group_since >= GROUP_S:
                    self._group_open.clear()  # (a younger group: its own time is waited for next)
                    try:
                        self._end_group()  # nothing if a message committed it first
                    except sqlite3.Error:  # states only: they come again with the next subscription
                        pass

    def _sync(self, mode: str) -> None:
        if mode != self._synchronous:  # a statement saved on each of a thousand tables' states a second
            self.db.execute(f"PRAGMA synchronous={mode}")
            self._synchronous = mode

    def _table(self, record: schema.Status | schema.State, now: float) -> Change | None:
        row = self._rows.get(record.table)
        state, online = (row[0], row[1]) if row else (None, None)
        if isinstance(record, schema.Status):
            if record.online is None:  # the table's retained status cleared: it was forgotten
                self.db.execute("DELETE FROM tables WHERE id=?", (record.table,))
                self._rows.pop(record.table, None)
                return Change("table", record.table) if row else None
            new_state, new_online = state, int(record.online)
        else:
            if record.state is None:
                self.db.execute("UPDATE tables SET state=NULL, changed=? WHERE id=?", (now, record.table))
                if row:
                    row[0] = row[3] = None
                return Change("table", record.table) if row and state is not None else None
            # a state is only sent by a table that is up
            new_state, new_online = _STATE_TEXT(record.state), 1
        changed = row is None or (new_state, new_online) != (state, online)
        self.db.execute("INSERT INTO tables (id, state, online, last_seen, changed) VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT(id) DO UPDATE SET state=excluded.state, online=excluded.online, "
                        "last_seen=excluded.last_seen, changed=CASE WHEN ? THEN excluded.changed ELSE changed END",
                        (record.table, new_state, new_online, now, now, changed))
        # the record's own state (what its text is made of), so a page never parses it back; a
        # status keeps the state parsed as it was, or parses it when read (``tables``)
        parsed = record.state if isinstance(record, schema.State) else row[3] if row and new_state == state else None
        self._rows[record.table] = [new_state, new_online, now, parsed]
        return Change("table", record.table) if changed else None

    def _event(self, e: schema.Event, now: float) -> Change | None:
        cur = self.db.execute("INSERT OR IGNORE INTO events (id, table_id, t, event, fields, received) "
                              "VALUES (?, ?, ?, ?, ?, ?)",
                              (e.id, e.table, e.t, e.event, json.dumps(e.fields, ensure_ascii=False), now))
        self._seen(e.table, now)
        return Change("event", e.id) if cur.rowcount else None

    def _play(self, p: schema.Play, now: float) -> Change | None:
        from venue.league import person

        if self.db.execute("SELECT 1 FROM plays WHERE id=?", (p.id,)).fetchone():
            return None
        # The league's order is the play's end, unless it would go before more than LATE_PLAYS
        # plays already kept: then it goes last, so no play re-rates more than that many.
        at = p.ended
        later = self.db.execute("SELECT COUNT(*) FROM (SELECT 1 FROM plays WHERE (at, table_id, seq) > (?, ?, ?) "
                                "LIMIT ?)", (at, p.table, p.seq, LATE_PLAYS + 1)).fetchone()[0]
        if later > LATE_PLAYS:
            at = float(self.db.execute("SELECT MAX(at) FROM plays").fetchone()[0])
        cur = self.db.execute("INSERT OR IGNORE INTO plays (id, table_id, seq, game, evening, ended, play, received, at) "
                              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                              (p.id, p.table, p.seq, p.game, p.evening, p.ended,
                               json.dumps(p.play, ensure_ascii=False), now, at))
        self._seen(p.table, now)
        if not cur.rowcount:
            return None
        for pos, pl in enumerate(p.players):
            key = person(pl.name, pl.seat)
            if key is not None:
                self.db.execute("INSERT OR IGNORE INTO people (key, name, first_seen) VALUES (?, ?, ?)",
                                (key, pl.name, now))
            self.db.execute("INSERT INTO play_players (play_id, pos, person, name, seat, score, winner, team, place) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (p.id, pos, key, pl.name, pl.seat, pl.score, int(pl.winner), pl.team, pl.place))
        return Change("play", p.id)

    def _seen(self, table: str, now: float) -> None:
        self.db.execute("UPDATE tables SET last_seen=? WHERE id=?", (now, table))
        if table in self._rows:
            self._rows[table][2] = now

    def _count(self, name: str) -> None:
        self._counted[name] = self._counted.get(name, 0) + 1

    def _write_counts(self) -> None:
        """The counts since the last commit, into ``meta`` with this one (a statement each, not one per message)."""
        for name, n in self._counted.items():
            self.db.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                            "ON CONFLICT(key) DO UPDATE SET value=CAST(value AS INTEGER) + ?", (name, str(n), n))
        self._counted.clear()

    def set_meta(self, key: str, value: str) -> None:
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def _tx(self) -> Any:
        return _Tx(self.db, self._undone)

    def _checkpoints(self) -> None:
        """The WAL into the database file, PASSIVE (it waits for no writer and
        no writer waits for it), on its own connection."""
        try:
            con = sqlite3.connect(self.path, timeout=0.1)
        except sqlite3.Error:
            return
        try:
            while not self._stop.wait(CHECKPOINT_S):
                try:
                    con.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:  # busy or failing: the WAL grows until the next one succeeds
                    pass
        finally:
            con.close()

    def close(self) -> None:
        self._stop.set()
        self._group_open.set()  # the flusher sees the stop
        self._checkpointer.join(5)
        self._flusher.join(5)
        with self.lock:
            try:
                self._end_group()
            except sqlite3.Error:
                pass
            self._closed = True
            self.db.close()


class _Tx:
    def __init__(self, db: sqlite3.Connection, undone: Any) -> None:
        self.db, self.undone = db, undone

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            try:
                self.db.execute("COMMIT")
                return
            except sqlite3.Error:  # not kept: undone, and the rows and counts in memory with it
                self.__exit__(sqlite3.Error, None, None)
                raise
        try:
            self.db.execute("ROLLBACK")
        except sqlite3.Error:  # SQLite undid it itself (a full disk): the error to say is the first
            pass
        self.undone()
