"""Madness Hour: its state, and what the steps and the views read of it.

``MadnessState`` is everything the table's inputs change (the driver
snapshots it for ``back``); ``Game`` is what a handler or a view may read of
the engine beside it — the seats, the options, the sealed battle numbers,
who is an investigator and who lives — typed here so that neither ``steps``
nor ``views`` imports the engine that names them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from companion.core.contract import Legal
from companion.core.events import Output, Refusal
from companion.games.madness_hour.rules import (
    GIRLS,
    Options,
)

GIRL_CARDS = tuple(f"mh/girl/{g}" for g in GIRLS)
SIDE_CARDS = ("mh/side/keep", "mh/side/kill")
STATE_CARDS = ("mh/state/sane", "mh/state/mad", "mh/state/dead")
CLIMAX = "mh/climax"
CLEARED_BY_0 = ("items", "mystic")  # battle entries a 0 takes back (strength is always needed)


@dataclass
class MadnessState:
    step: str = "girl"  # girl | card | explore | discussion | vote | battle | ending | done
    girl: str | None = None  # who plays the Girl (public)
    card: str | None = None  # human | evil-god: the secret, once known to the companion
    held: bool = False  # the companion holds her card (public: everyone saw the tap)
    turns: int = 0  # turns called so far (names the turn timers)
    turn_of: str | None = None  # whose turn was called last
    round: int = 0
    left_s: float = 0.0  # discussion time left at the last discussion timer
    pending: str | None = None  # the player card awaiting its side or state card
    votes: dict[str, str] = field(default_factory=dict)  # investigator → keep | kill
    dead: list[str] = field(default_factory=list)  # in the order they died
    totals: dict[str, int] = field(default_factory=dict)  # the battle's side totals, if counted
    revealed: list[str] = field(default_factory=list)  # mad investigators who revealed in battle
    girl_alive: bool | None = None
    states: dict[str, str] = field(default_factory=dict)  # investigator → sane | mad, at the ending
    winners: tuple[str, ...] = ()


class Game(Protocol):
    """What the steps and the views read of the engine (``engine.MadnessHour``)."""

    state: MadnessState
    players: tuple[str, ...]
    sealed: dict[str, Any]  # each voter's battle numbers, sent from their page
    opts: Options

    @property
    def investigators(self) -> tuple[str, ...]: ...

    @property
    def living(self) -> tuple[str, ...]: ...

    @property
    def finished(self) -> bool: ...

    def prompt(self) -> list[Output]: ...

    def waiting(self) -> list[str]: ...

    def legal(self, player: str | None = None) -> Legal: ...

    def _player_of(self, inp: Any) -> str | None: ...

    def _not_taken(self, kind: str, value: Any) -> Refusal: ...


def girl(g: Game) -> str:
    """Who plays the Girl (asked once she has tapped her card)."""
    assert g.state.girl is not None
    return g.state.girl


def ending_missing(g: Game) -> list[str]:
    return [p for p in g.living if p not in g.state.states and p not in g.state.revealed]
