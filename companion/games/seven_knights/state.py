"""Seven Knights Bewitched: its state, and what the steps and the views read
of it (the witch in front, whether the captain must be asked for).

``KnightsState`` is everything the table's inputs change (the driver
snapshots it for ``back``); ``Game`` is what a handler or a view may read of
the engine beside it — the seats and the rule set, fixed at the start —
typed here so that neither ``steps`` nor ``views`` imports the engine that
names them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from companion.core.events import Output, Say
from companion.games.seven_knights.rules import (
    KNIGHTS,
    ROUNDS,
    WITCH,
    Options,
    RuleSet,
    formation_failure,
)

GAME = "seven-knights"

# What a step takes is ``SevenKnights.STEPS`` (engine).  Captain ready: the same words whatever was
# tapped, so a second tile says nothing about the first.
_READY = ("skb.refuse.captain_ready", "press next to reveal the captain's tile, or back")
EARLY_TILE = "skb/*"  # how a tile tapped before the command phase is named in public: one of the skb/ tiles
SCORED = ("round_over", "game_over")  # where scoring leads


@dataclass
class KnightsState:
    """Everything the engine knows; deep-copied for undo."""

    step: str = "quest"
    round: int = 1
    start_seat: int = 0  # who holds the start marker (index into Setup.players)
    totals: dict[str, int] = field(default_factory=dict)
    votes: dict[str, str] = field(default_factory=dict)  # voter -> recommended
    election: dict[str, str] = field(default_factory=dict)  # the counted election's votes, for conduct
    voter: str | None = None  # tapped their own card, recommendation to follow
    captain: str | None = None  # known only through the election or a concession
    captain_tile: str | None = None
    early_tile: str | None = None  # tapped before the command phase, not named until next confirms it
    formation: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    conceding: str | None = None  # tapped once; a second tap concedes
    witch_team: list[str] = field(default_factory=list)
    verdict: str | None = None  # decided before scoring (captain witch / concession)
    captain_checked: bool = False  # the table said whether the unknown captain is on the witch team
    reason: str | None = None
    reported: bool = False  # the round's ``formation`` event is logged
    winners: tuple[str, ...] = ()
    scored: list[dict[str, Any]] = field(default_factory=list)  # {round, points, totals} per round scored


def rule_name(rules: Sequence[str]) -> str | None:
    """The one rule card's name (``rules/advanced`` or ``advanced``), if any."""
    return rules[0].removeprefix("rules/") if rules else None


class Game(Protocol):
    """What the steps and the views read of the engine (``engine.SevenKnights``)."""

    state: KnightsState
    players: tuple[str, ...]
    rule_name: str
    rule: RuleSet
    options: Options
    tiles: tuple[str, ...]
    centre: int  # tiles in the centre
    on_table: int  # the players' tiles and the centre's: the formation's
    witch_dealt_to_a_player: bool

    @property
    def finished(self) -> bool: ...

    def prompt(self) -> list[Output]: ...

    def waiting(self) -> list[str]: ...


def concede_hint(g: Game) -> list[Output]:
    """How a bewitched captain concedes, said when it first becomes possible."""
    return [Say("skb.concede.hint")] if g.rule.witch_team else []


def witch_in_front(g: Game) -> bool:
    """Must the witch tile have lain in front of a player?  It was the
    captain's, or it was on the table and there are no centre tiles, or
    every tile was dealt — whatever the round got to before a concession."""
    st = g.state
    return (st.captain_tile == WITCH or g.witch_dealt_to_a_player
            or (g.centre == 0 and WITCH in (*st.formation, *st.excluded)))


def must_ask_for_the_captain(g: Game) -> bool:
    """A bewitched captain hands the witch team the round whatever was
    laid (§4).  Without an election the captain is unknown; when it
    matters — a formation that holds and a witch team that is not empty —
    the captain taps their card (or the table presses next)."""
    st = g.state
    return (st.verdict is None and st.captain is None and not st.captain_checked
            and bool(st.witch_team) and formation_failure(st.formation, st.excluded) is None)


def witch_holder_missing(g: Game) -> bool:
    """The witch tile lay in front of a player, and nobody who could hold
    it has tapped: a captain known to hold a knight cannot."""
    st = g.state
    if not (g.rule.witch_team and witch_in_front(g)):
        return False
    known_knight = st.captain if st.captain_tile in KNIGHTS else None
    return not [p for p in st.witch_team if p != known_knight]


def round_line(g: Game) -> Say:
    st = g.state
    key = "skb.round.final" if st.round == ROUNDS else "skb.round.start"
    return Say(key, {"round": st.round, "player": g.players[st.start_seat]})
