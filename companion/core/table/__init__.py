"""The table between games: which game, which rule cards, who sits where, and
the language — then it hands every input to the active game's engine.

Pure like the engines: inputs in, outputs out, ``Refusal`` changes nothing.
Its state outside a game is small and JSON-ready (``checkpoint()``), which
is what the journal stores when a game ends.

Seats hold each player's stable id — the suffix of their player card,
``player/red`` → ``red`` — and the settings give each id a display name.
Engines know players by name (it is what they say and report, DESIGN.md:
"players appear in events by name"); the table translates at its edges,
so a renamed player keeps their standings, history and page.  That needs
one seat per name: the config refuses two seats with one name, the table
never seats a second player answering to a seated one's name, and a name
that two seats share anyway (settings forced past both) maps to no seat —
its lines reach nobody and its page shows nothing, rather than a guess.

The table's jobs, one module each, layered so that each reads only those
below it: ``state`` (the state, its phases, a finished play's record),
``seats`` (seats and names), ``views`` (the read side), ``pairing`` (the
gate and a game's start), ``seating`` (before a game), ``play`` (while it
plays), ``housekeeping``, ``confirm`` (a long press of back), ``result`` (a
finished game's view) and ``hub``: the phase table and its driver.
"""

from companion.core.table.hub import Table
from companion.core.table.state import (
    CONFIRM,
    GATHERING,
    IDLE,
    NAMED,
    NIGHT_HEADLINE,
    PAGES_ASSUMED,
    PAGES_OFF,
    PAGES_ON,
    PAIRING,
    PLAYING,
    FinishedPlay,
    TableState,
)

__all__ = ["CONFIRM", "GATHERING", "IDLE", "NAMED", "NIGHT_HEADLINE", "PAGES_ASSUMED", "PAGES_OFF", "PAGES_ON",
           "PAIRING", "PLAYING", "FinishedPlay", "Table", "TableState"]
