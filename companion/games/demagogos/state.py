"""Demagogos' Trap: its state, the step it is in, and what the handlers and the
read side ask of them (who is still in, whose turn, what is drawn now)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from companion.core.engine import Engine, Result, Setup, Step
from companion.core.events import (
    Draw,
)
from companion.games.demagogos import rules as R
from companion.games.demagogos.rules import SAGE, TREASURE

GAME = "demagogos"
SEALED = ("role", "turn")  # the sealed ``bid`` auctions (the others' bids are open: ``vp``)
TRADE_FIELDS = ("gift", "exchange")  # submits whose very fact is private (public_label)


@dataclass
class DtState:
    step: str = "role_auction"
    round: int = 1
    gems: dict[str, int] = field(default_factory=dict)
    vp: dict[str, int] = field(default_factory=dict)
    vp_start: dict[str, int] = field(default_factory=dict)  # VP when the round began
    exited: list[str] = field(default_factory=list)  # winners, in place order
    holders: list[str] = field(default_factory=list)  # this round's role holders, seat order
    dice: dict[str, int] = field(default_factory=dict)  # holder → die (secret until the round's end)
    explorers: list[str] = field(default_factory=list)  # in turn order, once the turn auction closed
    turn: int = 0  # index into explorers: whose turn it is
    boxes: int = 0  # K: boxes dt/box/1 … K in play this round
    contents: list[str] = field(default_factory=list)  # by box, once drawn (secret until opened)
    sage_boxes: dict[str, list[int]] = field(default_factory=dict)  # sage → the 2 treasure boxes they were told
    sage_keys: dict[str, list[int]] = field(default_factory=dict)  # a further sage's own draw, until told
    opened: list[dict[str, Any]] = field(default_factory=list)  # {box, content, player, gems[, voided]}, in order
    found: dict[str, int] = field(default_factory=dict)  # treasure gems taken this round (void on disaster)
    pending: int | None = None  # the treasure box waiting for its bonus draw
    finder: str | None = None  # found a treasure: may open another box or pass
    disaster_by: str | None = None
    results: list[dict[str, Any]] = field(default_factory=list)  # the round's role results, once public
    bids: dict[str, dict[str, int]] = field(default_factory=dict)  # this round's closed sealed bids (secret)
    gifts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # per player: their own gifts
    vp_sale: dict[str, Any] | None = None  # the VP auction's outcome this round, once closed
    vp_gems: dict[str, int] = field(default_factory=dict)  # gems as the VP auction opened: its tie rule
    scored: list[dict[str, Any]] = field(default_factory=list)  # {round, points, totals} per round ended (public)


@dataclass(frozen=True)
class Round(Step):
    """A step of a round, with what this game's steps are besides: the
    auction open in it (``role``, ``turn``: sealed; ``vp``: open; its bids in
    ``sealed`` under that name), the secret draws it waits for (asked again
    on resume), the treasure a disaster may still void (the cave is open),
    and what the public view shows of it."""

    auction: str | None = None
    draws: Callable[[Any], list[Draw]] | None = None
    exploring: bool = False
    view: Callable[[Any], dict[str, Any]] | None = None


class DemagogosBase(Engine):
    """The state and the queries on it."""

    STEPS: ClassVar[Mapping[str, Round]]  # the step table (engine.py)
    state: DtState

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        st = self.state = DtState()
        st.gems = {p: R.START_GEMS for p in self.players}
        st.vp = {p: 0 for p in self.players}
        st.vp_start = dict(st.vp)
        st.gifts = {p: [] for p in self.players}
        self._given: tuple[str, str, int] = ("", "", 0)  # the last gift made: for ``handle``

    # ------------------------------------------------------------ queries
    @property
    def active(self) -> list[str]:
        """The players still in the game, seat order."""
        return [p for p in self.players if p not in self.state.exited]

    @property
    def needed(self) -> int:
        return R.winners_needed(len(self.players))

    def _role(self, player: str) -> str | None:
        die = self.state.dice.get(player)
        return R.role_of_die(die) if die is not None else None

    def _current(self) -> str:
        st = self.state
        return st.finder or st.explorers[st.turn]

    def _sages(self) -> list[str]:
        """This round's sages, seat order: the first is told the cave's own pair."""
        return [p for p in self.state.holders if self._role(p) == SAGE]

    def _treasures_left(self) -> int:
        opened = {o["box"] for o in self.state.opened}
        return sum(1 for b, c in enumerate(self.state.contents, 1) if c == TREASURE and b not in opened)

    @property
    def _here(self) -> Round:
        """The current step's entry."""
        return self.STEPS[self.state.step]

    def _draws(self) -> list[Draw]:
        """The secret draws the current step waits for (asked again on resume)."""
        return self._here.draws(self) if self._here.draws is not None else []

    def _role_draws(self) -> list[Draw]:
        st = self.state
        return [Draw(f"r{st.round}:role:{p}", *R.DIE) for p in st.holders if p not in st.dice]

    def _cave_draws(self) -> list[Draw]:
        st = self.state
        treasure, _, _ = R.cave_contents(len(st.explorers))
        cave = [] if st.contents else [Draw(f"r{st.round}:cave", 1, R.KEY_HIGH, count=st.boxes)]
        # [ruling] each further sage draws their own pair: one key per treasure box, in box order
        return cave + [Draw(f"r{st.round}:sage:{p}", 1, R.KEY_HIGH, count=treasure)
                       for p in self._sages()[1:] if p not in st.sage_keys]

    def _bonus_draws(self) -> list[Draw]:
        st = self.state
        return [Draw(f"r{st.round}:bonus:{st.pending}", *R.BONUS)] if st.pending is not None else []

    def _sealed(self) -> str | None:
        """The sealed auction open now (``role``, ``turn``), or None."""
        return self._here.auction if self._here.auction in SEALED else None

    def _bidders(self) -> list[str]:
        """Who bids in the sealed auction open now: everyone still in for the
        roles, the explorers for the turn order."""
        return self.active if self._here.auction == "role" else self.state.explorers

    @property
    def _over(self) -> bool:
        """Have enough players exited to end the game?"""
        return len(self.state.exited) >= self.needed

    def result(self) -> Result:
        exited = tuple(self.state.exited)
        return Result(dict(self.state.vp), exited, places={p: n for n, p in enumerate(exited, 1)})

    def undo_scope(self, state: Any) -> Any:
        """A box opened in front of the table is final; passing after a treasure
        (``next``) may be taken back until the next box is tapped."""
        return (state.step, state.round, len(state.opened))
