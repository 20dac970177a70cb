"""Madness Hour as the rest of the system knows it (core.manifest): its result
published; the winners against the losers at a venue."""

from companion.core.manifest import Event, choice, describe, flag, names
from companion.games.madness_hour.engine import MadnessHour
from companion.games.madness_hour.rules import GIRLS

MANIFEST = describe(MadnessHour, events=(
    Event("mh_result", {"girl": choice(*GIRLS), "girl_alive": flag(), "dead": names(), "winners": names()}),
), rating="teams")
