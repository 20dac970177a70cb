"""The venue, wired: the store, the ear on the broker, the league and the
board.  ``Venue(...).start()`` runs it in-process (the bench, the tests);
``companion venue`` (venue/cli.py) runs it until Ctrl-C.

The evening ("tonight"): from the venue's start, or from ``since``; a venue
restarted within ``EVENING_GAP_S`` of the last message it heard goes on with
the same evening (a restart mid-evening does not empty tonight's league).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from venue import league
from venue.server import VenueServer
from venue.store import Change, Store
from venue.subscriber import Subscriber

LEAGUE_ROWS = 30  # the top of each league: what a TV shows, and what each new play pushes to it
EVENING_GAP_S = 6 * 3600  # as the table's: a new games night after 6 h without a sound


class Venue:
    def __init__(self, state: Path, broker: tuple[str, int], web: tuple[str, int] | None = ("0.0.0.0", 8090), *,
                 ident: str | None = None, username: str | None = None, password: str | None = None,
                 ca_file: str | None = None, since: float | None = None, hosts: tuple[str, ...] = (),
                 games: Mapping[str, Any] | None = None, report: Callable[[str], None] = print,
                 now: Callable[[], float] = time.time) -> None:
        self.now, self.report = now, report
        self.store = Store(state)
        if self.store.recovered:  # it was damaged: kept aside, what it held recovered
            report(self.store.recovered)
        self.games = dict(games or {})  # by language: each game's name and its steps' labels (catalogue)
        self.since = self._evening(since)
        self._league: tuple[int, dict[str, Any]] | None = None
        self._league_lock = threading.Lock()
        self._tallies = {"tonight": (league.Tally(), self.since), "season": (league.Tally(), None)}
        self.listeners: list[Callable[[Change], None]] = []  # in-process: told of each change (paho's thread)
        try:
            self.ear = Subscriber(self.store, broker[0], broker[1], ident=ident, username=username,
                                  password=password, ca_file=ca_file, notify=self._changed, report=report, now=now)
        except ValueError:  # a bad --ca-file: said by the command
            self.store.close()
            raise
        self.server = (VenueServer(self.board, self.table, self.league, web[0], web[1], hosts=hosts, report=report)
                       if web is not None else None)

    def _evening(self, since: float | None) -> float:
        if since is not None:
            start = since
        else:
            kept, last = self.store.meta("evening"), self.store.last_heard()
            now = self.now()
            start = float(kept) if kept and last is not None and now - last < EVENING_GAP_S else now
        self.store.set_meta("evening", repr(start))
        return start

    # ------------------------------------------------------------- running
    def start(self) -> Venue:
        if self.server is not None:
            self.server.start()
        self.ear.start()
        return self

    def stop(self) -> None:
        self.ear.stop()
        if self.server is not None:
            self.server.stop()
        from companion import threads

        server = self.server
        if server is not None and server.serving.thread is not None:  # this venue's pages, not another's here
            threads.shutdown(only=lambda w: w.thread is server.serving.thread)
        self.store.close()

    @property
    def url(self) -> str | None:
        return self.server.url if self.server is not None else None

    def _changed(self, change: Change) -> None:
        if self.server is not None:
            self.server.changed(change.kind, change.id)
        for listener in list(self.listeners):
            listener(change)

    # -------------------------------------------------------------- views
    def table(self, ident: str) -> dict[str, Any] | None:
        rows = self.store.tables(ident)
        return _table_view(rows[0]) if rows else None

    def league(self) -> dict[str, Any]:
        """Tonight's standings (most wins first) and the season's (by rating),
        recomputed only when a play arrived."""
        version = self.store.plays_version
        with self._league_lock:
            if self._league is None or self._league[0] != version:
                view: dict[str, Any] = {"since": self.since}
                for which, (tally, since) in self._tallies.items():
                    new = self.store.plays(arrived_after=tally.arrived, since=since)
                    if new and tally.last is not None and league.key(new[0]) < tally.last:
                        # a late play: rated in its place, the plays after it again (a bounded few)
                        if not tally.rewind(league.key(new[0])):
                            tally.reset()
                        new = self.store.plays(after=tally.last, since=since)
                    tally.apply(new)
                    rows = tally.standings("wins" if which == "tonight" else "rating")
                    view[which] = [s.view() for s in rows[:LEAGUE_ROWS]]
                self._league = (version, view)
            return {**self._league[1], "counts": self.store.counts()}

    def board(self) -> dict[str, Any]:
        return {"now": self.now(), "tables": [_table_view(r) for r in self.store.tables()],
                "games": self.games, **self.league()}


def _table_view(row: dict[str, Any]) -> dict[str, Any]:
    state = row["state"] or {}
    keys = ("game", "step", "waiting_for", "round", "totals", "deadline", "night", "lang")
    return {"id": row["id"], "online": bool(row["online"]), "last_seen": row["last_seen"],
            **{k: state.get(k) for k in keys}}
