"""The venue's own SQLite (WAL, ``<state>/venue.sqlite``): every table's last
state and whether it is online, the events and the plays keyed by their ids
(a repeat is dropped: ``INSERT OR IGNORE``), the people who played.

Written on the MQTT thread, read by the pages' thread: one connection behind
a lock (a venue hears at most a few hundred messages a second).  A message
is acknowledged to the broker only once it is committed here (subscriber),
so a venue killed mid-write hears it again.
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
# A play rated later than this many plays already rated (a table that was away for days) is rated
# where it arrives: the league keeps this much history to rate a late play in its place (league.Tally).
LATE_PLAYS = 200
COUNTERS = ("refused", "duplicates", "messages")


@dataclass(frozen=True)
class Change:
    """What a message changed, for the pages: a table's row, a new event or a new play."""
    kind: str  # "table" | "event" | "play"
    id: str


class StoreError(Exception):
    """The state directory cannot hold the venue's database (one line)."""


class Store:
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
                    return self._apply(record, now)
            with self._grouped():
                return self._apply(record, now)

    def _apply(self, record: schema.Record, now: float) -> Change | None:
        self._count("messages")
        if isinstance(record, schema.Command):
            return None  # a button from Home Assistant: the table's business, not the board's
        if isinstance(record, (schema.Status, schema.State)):
            change = self._table(record, now)
        elif isinstance(record, schema.Event):
            change = self._event(record, now)
        else:
            change = self._play(record, now)
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
        """One message's changes inside the group's transaction (a savepoint:
        a message that fails undoes only its own); the group is committed once
        GROUP_S old, by the next message or by the flusher.  The pages read through
        this same connection, so they see a state before its commit."""
        if self._group_since is None:
            self._sync("NORMAL")
            self.db.execute("BEGIN IMMEDIATE")
            self._group_since = time.monotonic()
            self._group_open.set()
        self.db.execute("SAVEPOINT one")
        try:
            yield
        except BaseException:
            try:
                self.db.execute("ROLLBACK TO one")
                self.db.execute("RELEASE one")
            except sqlite3.Error:  # SQLite undid the whole transaction itself (a full disk)
                self._abandon_group()
            raise
        self.db.execute("RELEASE one")
        if time.monotonic() - self._group_since >= GROUP_S:
            self._end_group()

    def _end_group(self) -> None:
        if self._group_since is None:
            return
        self._group_since = None
        try:
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
        row = self.db.execute("SELECT state, online FROM tables WHERE id=?", (record.table,)).fetchone()
        state, online = (row if row else (None, None))
        if isinstance(record, schema.Status):
            if record.online is None:  # the table's retained status cleared: it was forgotten
                self.db.execute("DELETE FROM tables WHERE id=?", (record.table,))
                return Change("table", record.table) if row else None
            new_state, new_online = state, int(record.online)
        else:
            if record.state is None:
                self.db.execute("UPDATE tables SET state=NULL, changed=? WHERE id=?", (now, record.table))
                return Change("table", record.table) if row and state is not None else None
            # a state is only sent by a table that is up
            new_state, new_online = json.dumps(record.state, sort_keys=True), 1
        changed = row is None or (new_state, new_online) != (state, online)
        self.db.execute("INSERT INTO tables (id, state, online, last_seen, changed) VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT(id) DO UPDATE SET state=excluded.state, online=excluded.online, "
                        "last_seen=excluded.last_seen, changed=CASE WHEN ? THEN excluded.changed ELSE changed END",
                        (record.table, new_state, new_online, now, now, changed))
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

    def _count(self, name: str) -> None:
        self.db.execute("INSERT INTO meta (key, value) VALUES (?, '1') "
                        "ON CONFLICT(key) DO UPDATE SET value=CAST(value AS INTEGER) + 1", (name,))

    def set_meta(self, key: str, value: str) -> None:
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def _tx(self) -> Any:
        return _Tx(self.db)

    # ----------------------------------------------------------------- reads
    def meta(self, key: str) -> str | None:
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else None

    def counts(self) -> dict[str, int]:
        with self.lock:
            rows = dict(self.db.execute("SELECT key, value FROM meta WHERE key IN (?, ?, ?)", COUNTERS).fetchall())
            plays = self.db.execute("SELECT COUNT(*) FROM plays").fetchone()[0]
            events = self.db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        return {**{k: int(rows.get(k, 0)) for k in COUNTERS}, "plays": int(plays), "events": int(events)}

    def tables(self, table: str | None = None) -> list[dict[str, Any]]:
        """Every table (or one), by id: its last state, online or not, last heard."""
        q = "SELECT id, state, online, last_seen FROM tables" + (" WHERE id=?" if table else "") + " ORDER BY id"
        with self.lock:
            rows = self.db.execute(q, (table,) if table else ()).fetchall()
        out = []
        for ident, state, online, seen in rows:
            out.append({"id": ident, "online": bool(online) if online is not None else None, "last_seen": seen,
                        "state": json.loads(state) if state else None})
        return out

    def plays(self, after: tuple[float, str, int] | None = None, since: float | None = None,
              arrived_after: int | None = None) -> list[dict[str, Any]]:
        """The plays with their players, in the league's order (``at``: the play's
        end, or its arrival for one very late, then its table and its number there;
        so a restart rates the same); ``after``: only those after this key
        (league.key); ``since``: ended then or later; ``arrived_after``: only
        those kept after that arrival number (each play's ``arrival``)."""
        where, args = self._window(after, since, ">")
        if arrived_after is not None:
            where, args = (where + " AND" if where else " WHERE") + " plays.rowid > ?", (*args, arrived_after)
        with self.lock:
            plays = self.db.execute("SELECT id, table_id, seq, game, evening, ended, at, rowid FROM plays" + where +
                                    " ORDER BY at, table_id, seq", args).fetchall()
            players: dict[str, list[dict[str, Any]]] = {}
            ids = [row[0] for row in plays]
            for chunk in range(0, len(ids), 500):  # SQLite's limit on variables, with room to spare
                part = ids[chunk:chunk + 500]
                for row in self.db.execute(
                        "SELECT pp.play_id, pp.person, pp.name, pp.seat, pp.score, pp.winner, pp.team, pp.place, "
                        "people.name FROM play_players pp LEFT JOIN people ON people.key = pp.person "
                        f"WHERE pp.play_id IN ({','.join('?' * len(part))}) ORDER BY pp.play_id, pp.pos", part):
                    players.setdefault(row[0], []).append(
                        {"person": row[1], "name": row[2], "seat": row[3], "score": row[4], "winner": bool(row[5]),
                         "team": row[6], "place": row[7], "known_as": row[8]})
        return [{"id": i, "table": t, "game": g, "evening": e, "ended": end, "at": at, "arrival": arrival,
                 "players": players.get(i, [])} for i, t, _seq, g, e, end, at, arrival in plays]

    @staticmethod
    def _window(mark: tuple[float, str, int] | None, since: float | None, op: str) -> tuple[str, tuple[Any, ...]]:
        terms: list[str] = []
        args: list[Any] = []
        if mark is not None:
            terms.append(f"(plays.at, plays.table_id, plays.seq) {op} (?, ?, ?)")
            args.extend(mark)
        if since is not None:
            terms.append("plays.ended >= ?")
            args.append(since)
        return (" WHERE " + " AND ".join(terms) if terms else ""), tuple(args)

    def people(self) -> dict[str, str]:
        """A person's key → the name they were first seen by."""
        with self.lock:
            return dict(self.db.execute("SELECT key, name FROM people").fetchall())

    def last_heard(self) -> float | None:
        with self.lock:
            row = self.db.execute("SELECT MAX(last_seen) FROM tables").fetchone()
        return float(row[0]) if row and row[0] is not None else None

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
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.db.execute("COMMIT")
            return
        try:
            self.db.execute("ROLLBACK")
        except sqlite3.Error:  # SQLite undid it itself (a full disk): the error to say is the first
            pass
