"""Pure rule engines, one module per game, registered by game-card name."""

from __future__ import annotations

from companion.games.base import Engine, Result, Setup

ENGINES: dict[str, type[Engine]] = {}


def register(cls: type[Engine]) -> type[Engine]:
    ENGINES[cls.game] = cls
    return cls


# Each game registers itself on import (after ``register`` exists).
from companion.games import one_night, seven_knights  # noqa: E402,F401

__all__ = ["ENGINES", "Engine", "Result", "Setup", "register"]
