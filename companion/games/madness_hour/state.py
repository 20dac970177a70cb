"""Madness Hour: its state, and what the handlers and the read side ask of it
(the Girl, the investigators, who lives; the timers a step arms)."""

from __future__ import annotations

from dataclasses import dataclass, field

from companion.core.countdown import next_point
from companion.core.engine import Engine, Result, Setup
from companion.core.events import (
    CancelTimer,
    Output,
    SetTimer,
)
from companion.games.madness_hour.rules import (
    GIRLS,
    options_from,
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


class MadnessHourBase(Engine):
    """The state and the queries on it."""

    state: MadnessState

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.opts = options_from(setup.options)  # checked by the config schema (settings)
        self.state = MadnessState()

    def result(self) -> Result:
        s = self.state
        if not self.finished:
            raise RuntimeError("the game is not finished")
        roles = {p: ("dead" if p in s.dead else s.states[p]) for p in self.investigators}
        roles[self._girl] = f"girl/{s.card}"
        return Result({p: int(p in s.winners) for p in self.players}, s.winners,
                      {p: roles[p] for p in self.players},
                      teams={p: "winners" if p in s.winners else "losers" for p in self.players})

    @property
    def _girl(self) -> str:
        assert self.state.girl is not None
        return self.state.girl

    @property
    def investigators(self) -> tuple[str, ...]:
        return tuple(p for p in self.players if p != self.state.girl)

    @property
    def living(self) -> tuple[str, ...]:
        return tuple(p for p in self.investigators if p not in self.state.dead)

    def _turn_timer(self) -> list[Output]:
        o, n = self.opts, self.state.turns
        if not o.turn_s:
            return []
        if o.turn_warning_s and o.turn_warning_s < o.turn_s:
            return [SetTimer(f"turn:{n}:warn", o.turn_s - o.turn_warning_s)]
        return [SetTimer(f"turn:{n}:up", o.turn_s)]

    def _cancel_turn(self) -> list[Output]:
        n = self.state.turns
        return [CancelTimer(f"turn:{n}:warn"), CancelTimer(f"turn:{n}:up")] if self.opts.turn_s and n else []

    def _discussion_timer(self) -> SetTimer:
        left = self.state.left_s
        return SetTimer("discussion", left - next_point(left, self.opts.discussion_s, self.opts.warnings_s))

    def _ending_missing(self) -> list[str]:
        return [p for p in self.living if p not in self.state.states and p not in self.state.revealed]
