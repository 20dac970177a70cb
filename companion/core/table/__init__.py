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

The table's phases (between games, gathering, pairing, playing, confirm)
are a step table of the same vocabulary as a game's (``phases``: ``Phase``,
a ``Step``), run by the same driver (core/driver.py): one ``Goto`` rule,
one legality, one rollback.  ``table`` holds the ``Table`` — the state the
phases share, who sits where, the journal's checkpoint and replay; its
handlers and views are functions of the table, a module per job:
``seating`` (before a game), ``pairing`` (the gate and a game's start),
``play`` (while it plays), ``housekeeping``, ``confirm`` (a long press of
back), ``views`` (the read side) and ``result`` (a finished game's view);
``state`` is the state, its phases and a finished play's record.
"""

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
from companion.core.table.table import Table

__all__ = ["CONFIRM", "GATHERING", "IDLE", "NAMED", "NIGHT_HEADLINE", "PAGES_ASSUMED", "PAGES_OFF", "PAGES_ON",
           "PAIRING", "PLAYING", "FinishedPlay", "Table", "TableState"]
