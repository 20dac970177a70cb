"""One Night Werewolf as the rest of the system knows it (core.manifest): its
result published (a field added here is one a venue checks and keeps); the
winning team against the others at a venue."""

from companion.core.manifest import Event, choice, describe, names
from companion.games.one_night.engine import OneNight
from companion.games.one_night.rules import WINNING_TEAMS

MANIFEST = describe(OneNight, events=(
    Event("onw_result", {
        "executed": names(),
        "winning_team": choice(*WINNING_TEAMS),
        "winners": names(),
    }),
), rating="teams")
