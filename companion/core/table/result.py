"""A finished game as the pages show it until the next one starts."""

from __future__ import annotations

import copy
import json
from typing import Any

from companion.core.engine import Engine
from companion.core.events import (
    Output,
    Say,
)
from companion.core.table.state import (
    FinishedPlay,
)


def result_view(game: str, engine: Engine, play: FinishedPlay, said: list[Output]) -> dict[str, Any]:
    """A finished game as the pages show it: each player's place (winners first,
    in the game's order where its winners have one, then by total), total and
    final role; the game's last public view (its rounds); and the verdict's
    lines (keys and params) as the table said them — nothing that was not said."""
    winners = list(play.winners)
    sign = -1 if engine.highest_wins else 1

    def rank(name: str) -> tuple[int, int, int]:
        won = name in winners
        order = winners.index(name) if won and engine.ordered_winners else 0
        return (0 if won else 1, order, sign * int(play.totals.get(name, 0)))

    ranked = sorted(play.players, key=rank)
    players: list[dict[str, Any]] = []
    for n, name in enumerate(ranked):
        tied = n and rank(ranked[n - 1]) == rank(name)
        place = players[-1]["place"] if tied else n + 1
        players.append({"name": name, "place": place, "total": int(play.totals.get(name, 0)),
                        "winner": name in winners, "role": play.roles.get(name)})
    says = [{"key": o.key, "params": copy.deepcopy(dict(o.params))} for o in said if isinstance(o, Say)]
    # as the journal's checkpoint gives it back (tuples are lists): a restart shows the same
    return json.loads(json.dumps({"game": game, "players": players, "play": engine.public_view(), "says": says}))
