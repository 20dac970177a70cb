"""Demagogos' Trap: its state, the step it is in, and what the steps and the
views read of them (who is still in, whose turn, what is drawn now).

``DtState`` is everything the table's inputs change (the driver snapshots
it for ``back``); ``Game`` is what a handler or a view may read of the
engine beside it — the seats, the sealed bids, the step table — typed here
so that neither ``steps``, ``cave`` nor ``views`` imports the engine that
names them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from companion.core.contract import Legal
from companion.core.engine import Step
from companion.core.events import Draw, Output, Refusal
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


class Game(Protocol):
    """What the steps and the views read of the engine (``engine.Demagogos``)."""

    STEPS: ClassVar[Mapping[str, Round]]
    state: DtState
    players: tuple[str, ...]
    sealed: dict[str, Any]  # the sealed auction's bids (``role``, ``turn``) and the open one's (``vp``)

    def prompt(self) -> list[Output]: ...

    def waiting(self) -> list[str]: ...

    def legal(self, player: str | None = None) -> Legal: ...

    def _not_taken(self, kind: str, value: Any) -> Refusal: ...


def active(g: Game) -> list[str]:
    """The players still in the game, seat order."""
    return [p for p in g.players if p not in g.state.exited]


def needed(g: Game) -> int:
    return R.winners_needed(len(g.players))


def role_of(g: Game, player: str) -> str | None:
    die = g.state.dice.get(player)
    return R.role_of_die(die) if die is not None else None


def explorer(g: Game) -> str:
    st = g.state
    return st.finder or st.explorers[st.turn]


def sages(g: Game) -> list[str]:
    """This round's sages, seat order: the first is told the cave's own pair."""
    return [p for p in g.state.holders if role_of(g, p) == SAGE]


def treasures_left(g: Game) -> int:
    opened = {o["box"] for o in g.state.opened}
    return sum(1 for b, c in enumerate(g.state.contents, 1) if c == TREASURE and b not in opened)


def here(g: Game) -> Round:
    """The current step's entry."""
    return g.STEPS[g.state.step]


def draws(g: Game) -> list[Draw]:
    """The secret draws the current step waits for (asked again on resume)."""
    step = here(g)
    return step.draws(g) if step.draws is not None else []


def role_draws(g: Game) -> list[Draw]:
    st = g.state
    return [Draw(f"r{st.round}:role:{p}", *R.DIE) for p in st.holders if p not in st.dice]


def cave_draws(g: Game) -> list[Draw]:
    st = g.state
    treasure, _, _ = R.cave_contents(len(st.explorers))
    cave = [] if st.contents else [Draw(f"r{st.round}:cave", 1, R.KEY_HIGH, count=st.boxes)]
    # [ruling] each further sage draws their own pair: one key per treasure box, in box order
    return cave + [Draw(f"r{st.round}:sage:{p}", 1, R.KEY_HIGH, count=treasure)
                   for p in sages(g)[1:] if p not in st.sage_keys]


def bonus_draws(g: Game) -> list[Draw]:
    st = g.state
    return [Draw(f"r{st.round}:bonus:{st.pending}", *R.BONUS)] if st.pending is not None else []


def sealed_auction(g: Game) -> str | None:
    """The sealed auction open now (``role``, ``turn``), or None."""
    return here(g).auction if here(g).auction in SEALED else None


def bidding(g: Game) -> list[str]:
    """Who bids in the sealed auction open now: everyone still in for the
    roles, the explorers for the turn order."""
    return active(g) if here(g).auction == "role" else g.state.explorers


def over(g: Game) -> bool:
    """Have enough players exited to end the game?"""
    return len(g.state.exited) >= needed(g)
