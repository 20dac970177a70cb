"""Madness Hour (マッドネスアワー): the engine (``engine``) and its pure rules (``rules``)."""

from companion.games.madness_hour.engine import MadnessHour

__all__ = ["MadnessHour"]
