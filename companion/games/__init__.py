"""The games the companion hosts: one package each, listed here.

Adding a game is one package under ``companion/games/`` (its engine, its
pure rules, its lines) and one line in ``GAMES``.
"""

from __future__ import annotations

from companion.core.engine import Engine
from companion.games.demagogos import Demagogos
from companion.games.madness_hour import MadnessHour
from companion.games.one_night import OneNight
from companion.games.seven_knights import SevenKnights

GAMES: tuple[type[Engine], ...] = (SevenKnights, OneNight, MadnessHour, Demagogos)
ENGINES: dict[str, type[Engine]] = {g.game: g for g in GAMES}
