"""The games the companion hosts: one package each, listed here.

Adding a game is one package under ``companion/games/`` (its engine with its
steps and its ``components``, its pure rules, its lines, its ``show`` of its
own log events) and one line in ``GAMES``.  The core never imports a game:
whoever needs to know every game's tags or events gets them from here, by the
app (``companion/app``).
"""

from __future__ import annotations

from companion.core.engine import Engine
from companion.core.tags import TABLE_SETS
from companion.games.demagogos import Demagogos
from companion.games.madness_hour import MadnessHour
from companion.games.one_night import OneNight
from companion.games.seven_knights import SevenKnights

GAMES: tuple[type[Engine], ...] = (SevenKnights, OneNight, MadnessHour, Demagogos)
ENGINES: dict[str, type[Engine]] = {g.game: g for g in GAMES}


def component_sets(games: tuple[type[Engine], ...] = GAMES) -> dict[str, tuple[str, ...]]:
    """Every set of tags a table may hold, by name: each game's components,
    then the table's own (players, game cards, rule and language cards)."""
    return {g.game: g.components for g in games} | TABLE_SETS


def all_components(games: tuple[type[Engine], ...] = GAMES) -> tuple[str, ...]:
    """Every game's component identities (the tags the reader may see besides the table's)."""
    return tuple(i for g in games for i in g.components)
