"""The venue store's reads (``store.Store`` is a ``Reads``): what the pages and
the league ask of it, through the same connection and lock as its writes, and
the tables' rows from the copy it keeps in memory."""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

COUNTERS = ("refused", "duplicates", "messages")


class Reads:
    db: sqlite3.Connection
    lock: threading.Lock
    _rows: dict[str, list[Any]]  # id → [state text, online, last seen, state parsed or None]
    _counted: dict[str, int]  # counts not yet written to ``meta``

    def meta(self, key: str) -> str | None:
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else None

    def counts(self) -> dict[str, int]:
        with self.lock:
            rows = dict(self.db.execute("SELECT key, value FROM meta WHERE key IN (?, ?, ?)", COUNTERS).fetchall())
            plays = self.db.execute("SELECT COUNT(*) FROM plays").fetchone()[0]
            events = self.db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
            counted = dict(self._counted)
        return {**{k: int(rows.get(k, 0)) + counted.get(k, 0) for k in COUNTERS}, "plays": int(plays),
                "events": int(events)}

    def tables(self, table: str | None = None) -> list[dict[str, Any]]:
        """Every table (or one), by id: its last state (parsed once per change; not
        to be changed by the caller), online or not, last heard."""
        out = []
        with self.lock:
            for ident in ((table,) if table in self._rows else ()) if table else sorted(self._rows):
                row = self._rows[ident]
                if row[3] is None and row[0]:
                    row[3] = json.loads(row[0])
                out.append({"id": ident, "online": bool(row[1]) if row[1] is not None else None,
                            "last_seen": row[2], "state": row[3]})
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
