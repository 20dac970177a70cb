"""The interface every rule engine implements, and the undo mechanism they share.

An engine is a pure state machine in the manner of h11: ``handle(input)``
returns the outputs for one input or raises ``Refusal`` and leaves the state
exactly as it was.  Everything an engine knows lives in ``self.state`` (a
deep-copyable value), which is what makes undo a snapshot restore and lets
the journal rebuild any game by replaying its inputs.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from companion.events import Input, Output, Press, Refusal, Say, TimerFired


@dataclass(frozen=True)
class Setup:
    """What the table decided before the game started."""

    players: tuple[str, ...]  # names in seat order, start player first
    rules: tuple[str, ...] = ()  # rule cards tapped (``rules/advanced`` → "advanced")
    options: Mapping[str, Any] = field(default_factory=dict)  # this game's config section
    seed: int = 0


@dataclass(frozen=True)
class Result:
    """A finished game, as the score history keeps it."""

    totals: Mapping[str, int]  # every player, in seat order
    winners: tuple[str, ...]


class Engine:
    """Base class of the rule engines.

    Subclasses set the class attributes, keep all their state in
    ``self.state`` (which must have a ``step`` attribute naming the current
    step), and implement ``start``, ``_handle`` and ``prompt``.
    """

    game: ClassVar[str]  # the game card's suffix: ``game/<game>``
    tag_prefixes: ClassVar[tuple[str, ...]]  # identities this game's components carry
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    state: Any

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self._undo: list[Any] = []
        self._sealed = False  # an input has been made final: the start is out of reach

    # ------------------------------------------------------- for subclasses
    @classmethod
    def check_setup(cls, players: Sequence[str], rules: Sequence[str],
                    options: Mapping[str, Any]) -> None:
        """Raise ``Refusal`` if the game cannot start with these players and
        rule cards.  The default checks the player count."""
        n = len(players)
        if not cls.min_players <= n <= cls.max_players:
            raise Refusal("refuse.player_count",
                          f"{cls.game} needs {cls.min_players} to {cls.max_players} players, not {n}",
                          count=n, low=cls.min_players, high=cls.max_players)

    @classmethod
    def known_rules(cls) -> tuple[str, ...]:
        """Rule-card names this game understands (``rules/<name>``)."""
        return ()

    def start(self) -> list[Output]:
        """Outputs when the game begins: what to deal, then the first prompt."""
        raise NotImplementedError

    def _handle(self, inp: Input) -> list[Output]:
        """Handle one input (never ``back``); raise ``Refusal`` to refuse.
        May mutate ``self.state`` before raising: the caller restores it."""
        raise NotImplementedError

    def prompt(self) -> list[Output]:
        """Lines that say what the current step is waiting for."""
        raise NotImplementedError

    def resume(self) -> list[Output]:
        """After a restart (the journal replayed): say where we are and re-arm
        whatever timers the current step needs.  Default: re-prompt."""
        return self.prompt()

    @property
    def finished(self) -> bool:
        return False

    def result(self) -> Result:
        """The final totals and winners; only once ``finished``."""
        raise NotImplementedError

    @property
    def quiet(self) -> bool:
        """True while the table must hear nothing but the script (the One
        Night night): ``repeat`` and ``back`` are then refused."""
        return False

    def undo_scope(self, state: Any) -> Any:
        """How far ``back`` reaches (DESIGN, Buttons: per game): ``back`` takes
        inputs back one at a time while the scope of the state stays the same;
        an input that changes it is final.  Default: the step, so ``back``
        never reaches into a finished step.  A game whose table may take back
        inputs across steps (until something public — a verdict, a score —
        happens) returns a wider scope."""
        return state.step

    @property
    def at_start(self) -> bool:
        """Is the game as it started, with no input made final since?  Then
        ``back`` may leave it (the table returns to seating)."""
        return not self._undo and not self._sealed

    @property
    def can_undo(self) -> bool:
        """Has the current step taken any input (that a restart would drop)?"""
        return any(s.step == self.state.step for s in self._undo)

    def restart_step(self) -> list[Output]:
        """Drop every input of the current step (a long press of ``back``),
        keeping what came before it (an undoable jump into the step stays
        undoable)."""
        for i, snapshot in enumerate(self._undo):
            if snapshot.step == self.state.step:
                self.state, self._undo = snapshot, self._undo[:i]
                break
        return self.prompt()

    # ----------------------------------------------------------- the driver
    def handle(self, inp: Input) -> list[Output]:
        """One input in, its outputs out; ``Refusal`` leaves no trace.

        ``back`` restores the state from before the last accepted input of
        the current undo scope (``undo_scope``); an input that changes the
        scope, or time passing, clears the undo stack.
        """
        if isinstance(inp, Press) and inp.button == "back":
            if self.quiet:
                raise Refusal("refuse.quiet", "not during the night")
            if not self._undo:
                raise Refusal("refuse.nothing_to_undo", "nothing to undo in this step")
            self.state = self._undo.pop()
            return [Say("undo.done"), *self.prompt()]
        before = copy.deepcopy(self.state)
        try:
            outputs = self._handle(inp)
        except Refusal:
            self.state = before
            raise
        if not isinstance(inp, TimerFired) and self.undo_scope(before) == self.undo_scope(self.state):
            self._undo.append(before)
        else:  # time has passed, or the input was final: nothing before it can be taken back
            self._undo.clear()
            self._sealed = True
        return outputs
