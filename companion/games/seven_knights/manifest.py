"""Seven Knights Bewitched as the rest of the system knows it (core.manifest):
each round's formation and its verdict published; knights against the witch's team at a venue."""

from companion.core.manifest import Event, choice, describe, tags
from companion.games.seven_knights.engine import SevenKnights
from companion.games.seven_knights.rules import WINNERS

MANIFEST = describe(SevenKnights, events=(
    Event("formation", {"tiles": tags(), "excluded": tags(), "verdict": choice(*WINNERS)}),
), rating="teams")
