"""The table's state between games (JSON-ready: what the journal's checkpoint
holds), its phases and the record of a finished play."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from companion.core.contract import Legal
from companion.core.steps import Step

IDLE, GATHERING, PLAYING = "idle", "gathering", "playing"
PAIRING = "pairing"  # seated, ``next`` pressed: a game that needs pages waits for every phone
NAMED = "named"  # the housekeeping of a page choosing its player's display name
CONFIRM = "confirm"  # a long press of back waits for next (the phase of dispatch while ``confirm`` is set)
# Are the players' pages there (the ``pages`` setting)?  ``on``: the web is up and
# a game that needs pages waits until every seat is paired; ``off``: no web, such
# a game is refused at its card; ``assumed``: a table script, where every seat
# counts as paired and a ``submit`` step stands for the page (DESIGN).
PAGES_ON, PAGES_OFF, PAGES_ASSUMED = "on", "off", "assumed"
# Names journals and checkpoints written before the games night was called
# the evening used (it was the "session", a word the table and a device also had).
_OLD_KINDS = {"new-session": "new-evening"}
# By night every page shows the night screen: nobody named, nothing counted, no clock.
NIGHT_HEADLINE: dict[str, Any] = {"step": None, "waiting_for": [], "anyone": False, "count": None,
                                  "deadline": None, "night": True}
_OLD_FIELDS = {"session_no": "evening"}


@dataclass(frozen=True)
class Phase(Step):
    """One of the table's phases: a ``Step`` of the one driver's vocabulary,
    which may also say what is legal in it when that is not derived from
    what it takes alone (``legal(table, seat)``: while a game plays, the
    game's and the table's around it; a question waiting for its answer)."""

    legal: Callable[[Any, str | None], Legal] | None = None


@dataclass
class TableState:
    phase: str = IDLE
    lang: str = "en"
    game: str | None = None  # the game being gathered or played
    rules: list[str] = field(default_factory=list)
    seats: list[str] = field(default_factory=list)  # player ids, seat order
    cards: list[str] = field(default_factory=list)  # the game's components tapped before the start (a deck)
    games_started: int = 0
    last: dict[str, Any] | None = None  # the last game's set-up, for "next: play again"
    standings: dict[str, dict[str, int]] = field(default_factory=dict)  # per game: id → total tonight
    # The seats (ids) in the order they first finished a game tonight: the standings' order,
    # kept as a list because the checkpoint's JSON sorts a dict's keys (a restart would reorder them)
    standing_order: list[str] = field(default_factory=list)
    confirm: str | None = None  # "step" | "game" while a long-press of back waits for next
    # The game settings in force (per-game options, player names), as the
    # journal's configure inputs set them; None: the constructor's (tests).
    settings: dict[str, Any] | None = None
    pending: dict[str, Any] | None = None  # housekeeping waiting for the table to be between games
    evening: int = 1  # the games night (one evening at the table); standings are tonight's
    # Seats whose phone was paired tonight (journaled ``paired`` housekeeping: a
    # fact, no secret; the page's server keeps the secret). A new evening forgets them.
    paired: list[str] = field(default_factory=list)
    # The finished game's result until the next game starts; the pages show it
    # between games (``public_view``'s ``result``): only what was said at the table.  In the
    # checkpoint the journal takes when a game ends, so a restart keeps it.
    result: dict[str, Any] | None = None
    # The display name each seat's page chose tonight (journaled ``named``
    # housekeeping, core/display_names.py): a person's name for the play's
    # record and the pages, never the engines'. A new evening forgets them.
    called: dict[str, str] = field(default_factory=dict)
    # The game in progress's record names (seat id → name), fixed as it began:
    # a name chosen meanwhile is the next game's.
    record_names: dict[str, str] = field(default_factory=dict)


    def apply_pending(self) -> None:
        """Apply the housekeeping that waited for the table to be between games."""
        pending, self.pending = self.pending or {}, None
        if "configure" in pending:
            self.settings = pending["configure"]  # seats are ids: a rename keeps "play again"
        if "new-evening" in pending:
            self.evening += 1
            self.standings, self.standing_order = {}, []
            self.paired = []  # tonight's phones pair again
            self.called = {}  # and tonight's display names go with them (the pages choose again)


@dataclass(frozen=True)
class FinishedPlay:
    """What the journal records when a game ends."""

    game: str
    rules: tuple[str, ...]
    players: tuple[str, ...]  # names, seat order
    ids: tuple[str, ...]  # the same seats' ids
    totals: Mapping[str, int]  # by name
    winners: tuple[str, ...]  # names
    roles: Mapping[str, str] = field(default_factory=dict)  # name → final role, where a game has roles
    teams: Mapping[str, str] = field(default_factory=dict)  # name → the side finished on (engine.Result)
    places: Mapping[str, int] = field(default_factory=dict)  # name → finishing place (engine.Result)
    # name → the name the play's record (BG Stats, the venue's league) gives
    # that player: their display name where their page chose one
    shown: Mapping[str, str] = field(default_factory=dict)

    def record_name(self, name: str) -> str:
        """The person behind the engine's ``name``, as the record names them."""
        return self.shown.get(name, name)
