"""Seven Knights Bewitched: its state, and what the handlers and the read side
ask of it (the witch in front, whether the captain must be asked for)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.core.engine import Engine, Result, Setup
from companion.core.events import Output, Say
from companion.games.seven_knights.rules import (
    KNIGHTS,
    ROUNDS,
    RULE_SETS,
    WITCH,
    default_rule_set,
    formation_failure,
    options_from,
    tile_set,
)

GAME = "seven-knights"

# What a step takes is ``SevenKnights.STEPS`` (at the end of the class, where
# its handlers are defined).  Captain ready: the same words whatever was
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


def _rule_name(rules: Sequence[str]) -> str | None:
    """The one rule card's name (``rules/advanced`` or ``advanced``), if any."""
    return rules[0].removeprefix("rules/") if rules else None


class SevenKnightsBase(Engine):
    """The state and the queries on it."""

    state: KnightsState

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.check_setup(setup.players, setup.rules, setup.options)
        self.options = options_from(setup.options)  # checked by the config schema (settings)
        self.rule_name = _rule_name(setup.rules) or default_rule_set(len(self.players))
        self.rule = RULE_SETS[self.rule_name]
        self.tiles = tile_set(self.rule_name, len(self.players), self.options)
        # § Round 5 [ruling, revised]: the formation is made of every tile on
        # the table, the players' one each and the centre tiles.
        self.centre = self.rule.centre(len(self.players), len(self.tiles))
        self.on_table = len(self.players) + self.centre
        # Every tile dealt, none in the centre or set aside (basic at 6-8
        # players): the witch lies in front of a player from the deal on.
        self.witch_dealt_to_a_player = (self.rule.witch_dealt and WITCH in self.tiles
                                        and len(self.tiles) == len(self.players))
        self.state = KnightsState(totals={p: 0 for p in self.players})

    def _concede_hint(self) -> list[Output]:
        """How a bewitched captain concedes, said when it first becomes possible."""
        return [Say("skb.concede.hint")] if self.rule.witch_team else []

    def _witch_in_front(self) -> bool:
        """Must the witch tile have lain in front of a player?  It was the
        captain's, or it was on the table and there are no centre tiles, or
        every tile was dealt — whatever the round got to before a concession."""
        st = self.state
        return (st.captain_tile == WITCH or self.witch_dealt_to_a_player
                or (self.centre == 0 and WITCH in (*st.formation, *st.excluded)))

    def undo_scope(self, state: Any) -> Any:
        """DESIGN: ``back`` takes back the round's inputs one at a time, across
        its steps, until a verdict is given; a verdict (the witch revealed as
        the captain's tile, a concession, the formation judged) and a score
        are final, so from then on it reaches only within the step."""
        # the steps a score led to: the round's inputs before it are final
        if state.verdict is None and state.step not in SCORED:
            return state.round, "open"
        return state.round, state.step

    def _must_ask_for_the_captain(self) -> bool:
        """A bewitched captain hands the witch team the round whatever was
        laid (§4).  Without an election the captain is unknown; when it
        matters — a formation that holds and a witch team that is not empty —
        the captain taps their card (or the table presses next)."""
        st = self.state
        return (st.verdict is None and st.captain is None and not st.captain_checked
                and bool(st.witch_team) and formation_failure(st.formation, st.excluded) is None)

    def _witch_holder_missing(self) -> bool:
        """The witch tile lay in front of a player, and nobody who could hold
        it has tapped: a captain known to hold a knight cannot."""
        st = self.state
        if not (self.rule.witch_team and self._witch_in_front()):
            return False
        known_knight = st.captain if st.captain_tile in KNIGHTS else None
        return not [p for p in st.witch_team if p != known_knight]

    def _round_line(self) -> Say:
        st = self.state
        key = "skb.round.final" if st.round == ROUNDS else "skb.round.start"
        return Say(key, {"round": st.round, "player": self.players[st.start_seat]})

    # ---------------------------------------------------------------- result
    def result(self) -> Result:
        if not self.finished:
            raise RuntimeError("the game is not over yet")
        # the side each finished on: the last round's (a witch team is public once it has tapped)
        return Result(totals=dict(self.state.totals), winners=self.state.winners,
                      teams={p: "witch" if p in self.state.witch_team else "knights" for p in self.players})
