"""One Night Werewolf (ワンナイト人狼): the engine (``engine``) and its pure rules (``rules``)."""

from companion.games.one_night.engine import OneNight

__all__ = ["OneNight"]
