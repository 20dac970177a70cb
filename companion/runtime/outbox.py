"""The MQTT outbox (DESIGN.md, *MQTT*): what a table publishes beyond its
state — its TABLE-audience verdicts and scores, and each finished play — is
written into the journal in the same transaction as the input that produced
it (``letters``, handed to ``Journal.append``), and sent from there by the
link (mqtt/link.py) through an ``OutboxStore``, which deletes a row only once
the broker has acknowledged it.  So a broker outage, a SIGKILL or a power
cut delays a message and never loses it; each carries a stable id
(``<table_id>/e/<seq>.<n>``, ``<table_id>/p/<play id>``, docs/integrate/mqtt.md; with
``~<epoch>`` after them once the journal was put back, runtime.journal.EPOCH) by
which a receiver drops a message sent twice (sent, then cut off before the
acknowledgement came back)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.core.events import TABLE, Output, Report
from companion.core.wire import TABLE_EVENTS, topic
from companion.runtime.journal import Letters, _Tx

# The events the broker hears when no games' are handed in: the table's own
# (the app hands in every game's: companion.core.wire.published of the manifests).
TABLE_ONLY = frozenset(e.name for e in TABLE_EVENTS)


def league_players(finished: Any) -> list[dict[str, Any]]:
    """A finished play's players as a league sees them (docs/integrate/mqtt.md): name
    (the display name a player's page chose, as the play's record has it),
    seat, score, winner, the side each finished on and a finishing place,
    where the game has them (its ``Result``'s ``teams`` and ``places``)."""
    return [{"name": finished.record_name(name), "seat": seat, "score": finished.totals.get(name),
             "winner": name in finished.winners, "team": finished.teams.get(name), "place": finished.places.get(name)}
            for name, seat in zip(finished.players, finished.ids, strict=True)]


def letters(table_id: str, outputs: Iterable[Output], wall: float, finished: Any = None,
            play: tuple[int, str, Mapping[str, Any]] | None = None, epoch: str = "",
            published: frozenset[str] = TABLE_ONLY) -> Letters | None:
    """One input's messages for the outbox, or None when it publishes none:
    the TABLE-audience events of ``published`` (the games' manifests' and
    the table's own: companion.core.wire) among its ``outputs`` (their
    fields exactly as the event log has them) and the ``play`` it finished
    (the journal's record, with ``finished``, the table's result, for the
    league's view).  Their ids are made once the journal knows the input's
    seq and the play's id; they end in the journal's ``epoch`` if it has one."""
    events = [(o.event, dict(o.fields)) for o in outputs
              if isinstance(o, Report) and o.audience == TABLE and o.event in published]
    if not events and play is None:
        return None
    where = topic(table_id, "event")

    def rows(seq: int, play_id: int | None) -> list[tuple[str, str, str]]:
        out = []
        for n, (name, fields) in enumerate(events):
            mid = _in_epoch(f"{table_id}/e/{seq}.{n}", epoch)
            out.append((mid, where, _json({**fields, "id": mid, "table": table_id, "t": wall, "event": name})))
        if play is not None and play_id is not None:
            evening, game, record = play
            mid = play_message_id(table_id, play_id, epoch)
            out.append((mid, topic(table_id, "play"), _json({
                "id": mid, "table": table_id, "play": dict(record), "game": game, "evening": evening,
                "players": league_players(finished)})))
        return out
    return rows


def play_message_id(table_id: str, play_id: int, epoch: str = "") -> str:
    """The id a finished play is published with (the journal's play id, and epoch)."""
    return _in_epoch(f"{table_id}/p/{play_id}", epoch)


def _in_epoch(mid: str, epoch: str) -> str:
    """An id as published from a journal of ``epoch`` ("": never put back, the agreed id)."""
    return f"{mid}~{epoch}" if epoch else mid


def _json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


Place = tuple[int, int]  # a row's place in the outbox, (its input's seq, k): sent in this order


@dataclass(frozen=True)
class Letter:
    n: Place
    id: str
    topic: str
    payload: bytes


class OutboxStore:
    """The link's own connection to the journal's outbox, used from the
    link's thread only (never the loop's connection, whose transactions it
    must not interleave with).  A delete needs no fsync of its own: lost in
    a power cut, its row is sent again and the receiver drops it by id (the
    next input's commit makes it durable anyway)."""

    def __init__(self, path: Path | str, connect: Any = None) -> None:
        """``connect``: makes the connection (the journal's ``_connect``, so a
        crash-simulating VFS covers this one too); default: the stdlib's."""
        self._path, self._connect = path, connect
        self._db: sqlite3.Connection | None = None
        self.skipped: list[Place] = []  # rows that could not be read (left in place)

    @property
    def db(self) -> sqlite3.Connection:
        """Opened at the first read: a link that never reaches its broker never
        touches the journal (a journal opened exclusively, as the power-cut
        campaign's is, stays the loop's alone)."""
        if self._db is None:
            db = (self._connect() if self._connect is not None else
                  sqlite3.connect(str(self._path), isolation_level=None, check_same_thread=False))
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA busy_timeout=2000")
            self._db = db
        return self._db

    def pending(self, after: Place = (0, 0), limit: int = 100) -> list[Letter]:
        """Rows after the place ``after``, in order."""
        out = []
        for seq, k, mid, where, payload in self.db.execute(
                "SELECT seq, k, id, topic, payload FROM outbox WHERE (seq, k) > (?, ?) ORDER BY seq, k LIMIT ?",
                (*after, limit)):
            if isinstance(mid, str) and isinstance(where, str) and isinstance(payload, str):
                out.append(Letter((int(seq), int(k)), mid, where, payload.encode("utf-8")))
            else:
                self.skipped.append((int(seq), int(k)))
        return out

    def done(self, places: Iterable[Place], now: float | None = None) -> None:
        """The broker has these: they leave the outbox for ``outbox_sent``,
        where they wait to be ``confirmed`` by the link (mqtt/link.py,
        ``CONFIRM_S``), sent again at each new connection meanwhile (``unconfirmed``)."""
        places = list(places)
        acked = time.time() if now is None else now  # for a reader of the journal; nothing depends on it
        db = self.db
        # the journal's own transaction: on a full disk SQLite may have rolled back already, and
        # the error said is the disk's, never "cannot rollback - no transaction is active"
        with _Tx(db):
            db.executemany("INSERT OR REPLACE INTO outbox_sent (id, topic, payload, acked) "
                           "SELECT id, topic, payload, ? FROM outbox WHERE seq = ? AND k = ?",
                           [(acked, *p) for p in places])
            db.executemany("DELETE FROM outbox WHERE seq = ? AND k = ?", places)

    def unconfirmed(self) -> list[Letter]:
        """What a broker acknowledged and may not have kept: sent again at a
        new connection, oldest first (its ``n`` is (0, 0): not an outbox place)."""
        return [Letter((0, 0), str(mid), str(where), str(payload).encode("utf-8"))
                for mid, where, payload in self.db.execute(
                    "SELECT id, topic, payload FROM outbox_sent ORDER BY acked, id")]

    def confirm(self, ids: Iterable[str]) -> None:
        """The broker has kept these: forgotten for good."""
        self.db.executemany("DELETE FROM outbox_sent WHERE id = ?", [(i,) for i in ids])

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM outbox").fetchone()[0])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
