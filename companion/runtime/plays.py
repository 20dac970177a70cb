"""A finished game as the journal keeps it (the score history): a pure
function of the table's result and the table's times.

The journal's record is its own (``journal.play_problem`` and
``journal_check`` hold it to this shape); BG Stats' push format — its
source, ids, game object and local dates — is made from it at export
(``web.bgstats.record``), not here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from companion.core.events import Output, Report
from companion.runtime.clock import utc


def play_record(play: Any, started: float | None, t: float, wall: float) -> dict[str, Any]:
    """``play``: the table's ``finished`` result; ``started``/``t``: table
    time (the journal's t) the game began and ended; ``wall``: the wall of
    record at the end.  Its length is table time (monotonic, clock.Record),
    never a difference of wall clocks that may have been set in between; its
    date is the start as best known: the wall at the end less that length (a
    Pi's clock is set right mid-game far more often than it is set wrong)."""
    duration = max(0.0, t - (started if started is not None else t))
    players = []
    for i, (name, seat) in enumerate(zip(play.players, play.ids, strict=True)):
        # the person's display name where their page chose one (the league ranks people); the seat's id beside it
        player = {"name": play.record_name(name), "score": play.totals.get(name, 0), "winner": name in play.winners,
                  "startPlayer": i == 0, "sourcePlayerId": seat}
        if name in play.roles:
            player["role"] = play.roles[name]
        players.append(player)
    return {
        "rules": list(play.rules),
        "playDate": utc(wall - duration, "%Y-%m-%d %H:%M:%S"),
        "durationMin": round(duration / 60),
        "players": players,
    }


def game_started(outputs: Iterable[Output]) -> bool:
    """Did these outputs begin a game (its length is counted from here)?"""
    return any(isinstance(o, Report) and o.event == "game_started" for o in outputs)
