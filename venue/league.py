"""The league: players are people (the name a table gives them), ranked by
wins and by an openskill rating (Weng-Lin), tonight and over the season.

The model is openskill's Plackett-Luce, the library's default: it rates any
number of teams of any size from one ranking with ties, in time linear in the
teams (a Bradley-Terry model compares every pair), which is what a league of
hidden-role team games and 10-player free-for-alls needs.

How a play becomes teams and ranks (``sides``), as the game's manifest says
(its ``rating``; a game the venue does not know: as its players' fields say):
- a finishing place given (Demagogos): free-for-all, each player alone,
  ranked by place; whoever did not finish shares the place after the last;
- teams given (Seven Knights' knights vs the witch team, One Night's village
  vs werewolves with a tanner alone, Madness Hour's winners vs losers): one
  side per team (a player of no team is a side alone), the winning sides
  ranked 1st (tied), the others 2nd (tied).
  A team whose members did not all win (Seven Knights counts three rounds'
  points: a knight of the last round may win on points while another loses)
  is split into its winners and its losers;
- neither: each player alone, the winners first, then by score.
A play with one side (a cooperative game) or all sides tied moves no rating.
A player the table did not name (a colour seat called by its colour, "red") is no
person: they take part in the play with a fresh rating that is kept nowhere.

Deterministic: the plays are applied in a fixed order (by the play's end,
then its table and number), so the same plays always give the same ratings.
A play arriving late (it ended before plays already rated) is rated in its
place: the tally undoes the plays after it and rates them again, so a late
play costs the plays after its place, never the season's.  That history is
bounded: a play later than ``store.LATE_PLAYS`` plays is placed at its
arrival instead (its ``at``, kept with it, so a restart rates the same).
A rating is shown as its ordinal, mu - 3 sigma: a skill the player is very
likely above, which starts at 0 and grows as they win and as the venue
grows sure of them (a newcomer's lucky win does not top the season).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from openskill.models import PlackettLuce

from companion.core import display_names
from companion.core.tags import COLOURS
from venue import schema

MODEL = PlackettLuce()


def person(name: str, seat: str) -> str | None:
    """The person a player's name is (the same in any case, width or spacing),
    or None when the table did not name them: a colour seat called by its
    colour ("red").  A player of their own card (``players: extra:``, tagged
    ``player/aki``) is their seat and a person."""
    key = display_names.fold(name)  # the table's own test of one person, not a copy
    return None if key == seat.casefold() and key in COLOURS else key


def sides(players: Sequence[Mapping[str, Any]], rating: str | None = None) -> tuple[list[list[int]], list[int]]:
    """A play's players (their indexes) as sides, and each side's rank (1 = best).
    ``rating``: how the game's manifest says it is rated (places, teams or
    winners: venue/schema.rating); None (a game this venue does not know):
    read from the players (a place given, else a team given, else winners)."""
    idx = range(len(players))
    placed = any(p.get("place") is not None for p in players)
    teamed = any(p.get("team") is not None for p in players)
    if (rating == "places" and not placed) or (rating == "teams" and not teamed):
        rating = None  # a play without what its game ranks by (nobody placed): as for a game unknown
    if rating is None:
        rating = "places" if placed else "teams" if teamed else "winners"
    if rating == "places":
        last = max(int(p["place"]) for p in players if p.get("place") is not None) + 1
        return [[i] for i in idx], [int(players[i]["place"] or last) for i in idx]
    if rating == "teams":
        groups: dict[tuple[str, bool], list[int]] = {}
        for i in idx:  # a player of no team in a team game is a side alone
            side = players[i]["team"] if players[i].get("team") is not None else f"/{players[i]['seat']}"
            groups.setdefault((str(side), bool(players[i]["winner"])), []).append(i)
        keys = sorted(groups, key=lambda k: (not k[1], k[0]))  # winners first, then by team: a fixed order
        return [groups[k] for k in keys], [1 if k[1] else 2 for k in keys]
    order = sorted({(not p["winner"], -(p.get("score") or 0)) for p in players})
    return [[i] for i in idx], [order.index((not players[i]["winner"], -(players[i].get("score") or 0))) + 1
                                for i in idx]


@dataclass
class Standing:
    person: str
    name: str
    plays: int = 0
    wins: int = 0
    mu: float = MODEL.mu
    sigma: float = MODEL.sigma

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma

    def view(self) -> dict[str, Any]:
        return {"person": self.person, "name": self.name, "plays": self.plays, "wins": self.wins,
                "rating": round(self.ordinal, 1), "mu": round(self.mu, 3), "sigma": round(self.sigma, 3)}


class Tally:
    """The league kept up to date play by play: ``apply`` the plays that come
    after the last one applied; a play arriving late (it comes before it) is
    rated in its place: ``rewind`` to just before it, then apply again from
    there.  Each play applied keeps what it changed (``undo``, the last
    ``HISTORY`` plays), so a rewind costs the plays undone, not the season."""

    HISTORY = 256  # more than store.LATE_PLAYS: a play is never placed further back than that

    def __init__(self, names: Mapping[str, str] | None = None) -> None:
        self.names: dict[str, str] = dict(names or {})
        self.reset()

    def reset(self) -> None:
        self.table: dict[str, Standing] = {}
        self.last: tuple[float, str, int] | None = None  # the league's order key of the last play applied
        self.count = 0
        self.arrived = 0  # the store's arrival number of the last play taken (store.plays(arrived_after=))
        # per play applied: its key, the key before it, and its people as they were (None: new)
        self.undo: deque[tuple[tuple[float, str, int], tuple[float, str, int] | None,
                               list[tuple[str, Standing | None]]]] = deque(maxlen=self.HISTORY)

    def apply(self, plays: Iterable[Mapping[str, Any]]) -> None:
        for play in plays:
            people = {p["person"] for p in play["players"] if p["person"] is not None}
            before = [(k, replace(s) if (s := self.table.get(k)) is not None else None) for k in people]
            self._rate(play["players"], schema.rating(str(play.get("game"))))
            self.undo.append((key(play), self.last, before))
            self.last = key(play)
            self.count += 1
            self.arrived = max(self.arrived, int(play.get("arrival") or 0))

    def rewind(self, to: tuple[float, str, int]) -> bool:
        """Undo every play at or after ``to``; False where the history kept does
        not reach back that far (then only a ``reset`` rates them all again)."""
        while self.last is not None and self.last >= to:
            if not self.undo:
                return False
            done, self.last, before = self.undo.pop()
            for person_key, standing in before:
                if standing is None:
                    del self.table[person_key]
                else:
                    self.table[person_key] = standing
            self.count -= 1
        return True

    def _rate(self, players: Sequence[Mapping[str, Any]], rating: str | None = None) -> None:
        groups, ranks = sides(players, rating)
        ratings = []
        for group in groups:
            team = []
            for i in group:
                person_key = players[i]["person"]
                if person_key is None:
                    team.append(MODEL.rating())  # nobody's: fresh, and forgotten after
                    continue
                s = self.table.get(person_key)
                if s is None:  # shown by the name the venue first heard them by
                    known = players[i].get("known_as") or self.names.get(person_key) or players[i]["name"]
                    s = self.table[person_key] = Standing(person_key, known)
                team.append(MODEL.rating(mu=s.mu, sigma=s.sigma))
            ratings.append(team)
        # one side only (a cooperative game), or all tied: nobody beat anybody, so no rating moves
        rated = MODEL.rate(ratings, ranks=[float(r) for r in ranks]) if len(set(ranks)) > 1 else ratings
        for group, team in zip(groups, rated, strict=True):
            for i, r in zip(group, team, strict=True):
                person_key = players[i]["person"]
                if person_key is None:
                    continue
                s = self.table[person_key]
                s.mu, s.sigma = r.mu, r.sigma
                s.plays += 1
                s.wins += bool(players[i]["winner"])

    def standings(self, by: str = "rating") -> list[Standing]:
        """``by``: "rating" (the season) or "wins" (tonight), the other breaking ties."""
        return sorted(self.table.values(), key=lambda s: (-s.ordinal, -s.wins, s.name) if by == "rating"
                      else (-s.wins, -s.ordinal, s.name))


def key(play: Mapping[str, Any]) -> tuple[float, str, int]:
    """The league's order: by the play's place (its end, or its arrival for one
    very late: store), then its table and its number there."""
    return (float(play.get("at", play["ended"])), str(play["table"]), int(str(play["id"]).rpartition("/")[2]))


def standings(plays: Iterable[Mapping[str, Any]], names: Mapping[str, str] | None = None,
              since: float | None = None, by: str = "rating") -> list[Standing]:
    """The league over ``plays`` (in the league's order) ended at or after ``since``;
    ``names``: a person's name as first seen."""
    tally = Tally(names)
    tally.apply(p for p in plays if since is None or p["ended"] >= since)
    return tally.standings(by)
