"""The interface every rule engine implements, and the undo mechanism they share.

An engine is a pure state machine in the manner of h11: ``handle(input)``
returns the outputs for one input or raises ``Refusal`` and leaves the state
exactly as it was.  Everything an engine knows lives in ``self.state`` (a
deep-copyable value), which is what makes undo a snapshot restore and lets
the journal rebuild any game by replaying its inputs — and in
``self.sealed``: the players' own submits (sealed bids…), which the table's
``back`` never touches (DESIGN.md, *Audiences*).

The read side: ``public_view()`` is what everyone may see now (the public
page), ``private_view(player)`` what that player alone may see, and
``legal(player)`` what the table (``None``) or that player may do now.

One dispatch style for every game: a class-level table ``STEPS``, step →
``Step(takes={input kind: handler}, refuse=(key, reason))``.  ``kind_of``
names an input's kind (``next``, ``timer``, ``draw``, ``submit``, ``tap``;
a game may split taps finer, as Seven Knights does into ``tile`` and
``player``, and refuse there what none of its steps could take); the base
looks the kind up in the current step and calls the handler with the value
``kind_of`` gave, or raises ``_not_taken``: the step's own refusal.  Why a
table of kinds rather than one method per step: what a step takes is then
data, read in one place (the README's promise: "each game's steps and what
they accept are a table"), checked when the class is made (every handler a
real method), and answerable without running anything (``accepts``); the
handlers stay small and take only what they are for, and an input no step
mentions is refused by one rule instead of a fall-through at the end of
every handler.  Games that must refuse a stray input by what it is rather
than by the step (a stale timer, another game's card) say so once, in their
``_not_taken``, around the base's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from companion.core.events import Drawn, Input, Output, Press, Refusal, Say, Submit, Tap, TimerFired


@dataclass(frozen=True)
class Setup:
    """What the table decided before the game started."""

    players: tuple[str, ...]  # names in seat order, start player first
    rules: tuple[str, ...] = ()  # rule cards tapped (``rules/advanced`` → "advanced")
    options: Mapping[str, Any] = field(default_factory=dict)  # this game's config section


@dataclass(frozen=True)
class Ask:
    """What a submit field takes: a whole number from ``low`` to ``high``, or
    one of ``choices``; ``label`` is a narration key naming the field."""

    label: str
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()

    def check(self, value: Any) -> str | None:
        """Why ``value`` does not fit, or None."""
        if self.choices:
            return None if value in self.choices else f"must be one of {', '.join(self.choices)}"
        if isinstance(value, bool) or not isinstance(value, int):
            return "must be a whole number"
        return None if self.low <= value <= self.high else f"must be from {self.low} to {self.high}"


@dataclass(frozen=True)
class Legal:
    """What an audience may do now: the buttons that do something, the tag
    identities a tap may carry (``player/*``-style patterns allowed), and
    the fields a player may submit."""

    buttons: tuple[str, ...] = ()
    taps: tuple[str, ...] = ()
    submits: Mapping[str, Ask] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """One step of a game: the input kinds it takes, each with the name of
    the method that handles it (called with ``kind_of``'s value), and the
    refusal (key, reason) for the kinds it does not take — for every kind,
    or only for those in ``refuses``."""

    takes: Mapping[str, str] = field(default_factory=dict)
    refuse: tuple[str, str] | None = None
    refuses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Result:
    """A finished game, as the score history keeps it."""

    totals: Mapping[str, int]  # every player, in seat order
    winners: tuple[str, ...]
    roles: Mapping[str, str] = field(default_factory=dict)  # player → role at the end, where a game has roles


class Engine:
    """Base class of the rule engines.

    Subclasses set the class attributes (``STEPS`` among them), keep all
    their state in ``self.state`` (which must have a ``step`` attribute
    naming the current step), and implement ``start`` and ``prompt``.
    """

    game: ClassVar[str]  # the game card's suffix: ``game/<game>``
    tag_prefixes: ClassVar[tuple[str, ...]]  # identities this game's components carry
    components: ClassVar[tuple[str, ...]] = ()  # every component identity (tags the reader may see)
    # How the readable log shows this game's own events: event name → its line after the time
    # (the game's show.py; the app's pretty.py renders the table's events and asks the games for theirs).
    shows: ClassVar[Mapping[str, Callable[[Mapping[str, Any]], str]]] = {}
    # This game's part of the config schema (``games.<game>``, companion.core.settings);
    # the loader checks it, so ``setup.options`` arrive checked.
    settings: ClassVar[Mapping[str, Any]] = {}
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    # The game cannot be played without every player's private page (a paired
    # phone): the table starts it only once every seat is paired, and refuses
    # its game card when the pages are off (DESIGN, Demagogos' Trap).
    needs_pages: ClassVar[bool] = False
    # How the export (a BG Stats play, web/bgstats.py) scores this game: the
    # highest total wins; ``no_points``: a side wins, and the totals are only
    # 1 for a winner, 0 for the others.  Its name there is its English name line.
    highest_wins: ClassVar[bool] = True
    no_points: ClassVar[bool] = False
    # ``result().winners`` is in place order (the first to leave first): the pages rank them so
    ordered_winners: ClassVar[bool] = False
    STEPS: ClassVar[Mapping[str, Step]] = {}  # step -> what it takes (see the module's docstring)
    not_now: ClassVar[str] = "refuse.not_now"  # the key where a step has no refusal of its own
    unknown_player: ClassVar[str] = "refuse.unknown_player"  # a player card of someone not in this game
    state: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A step table naming a handler that is no method fails when the
        game is imported, not when a table first reaches that step."""
        super().__init_subclass__(**kwargs)
        for name, step in cls.STEPS.items():
            for kind, handler in step.takes.items():
                if not callable(getattr(cls, handler, None)):
                    raise TypeError(f"{cls.__name__}: step {name!r} takes {kind!r} with {handler!r}, no method")

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.players: tuple[str, ...] = tuple(setup.players)
        self.sealed: dict[str, Any] = {}  # the players' submits: never undone by back
        self._undo: list[Any] = []
        self._final = False  # an input has been made final: the start is out of reach

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
    def pairing_lines(cls, players: Sequence[str], rules: Sequence[str],
                      options: Mapping[str, Any]) -> list[Output]:
        """Lines said with the pairing prompt of a game that needs pages: what
        the table can set out while the phones pair.  Default: none."""
        return []

    @classmethod
    def known_rules(cls) -> tuple[str, ...]:
        """Rule-card names this game understands (``rules/<name>``)."""
        return ()

    def start(self) -> list[Output]:
        """Outputs when the game begins: what to deal, then the first prompt."""
        raise NotImplementedError

    def _handle(self, inp: Input) -> list[Output]:
        """Handle one input (never ``back``); raise ``Refusal`` to refuse.
        May mutate ``self.state`` before raising: the caller restores it.
        Default: the current step's handler for the input's kind (``STEPS``)."""
        kind, value = self.kind_of(inp)
        handler = self.STEPS[self.state.step].takes.get(kind)
        if handler is None:
            raise self._not_taken(kind, value)
        out: list[Output] = getattr(self, handler)(value)
        return out

    def kind_of(self, inp: Input) -> tuple[str, Any]:
        """The kind of ``inp`` as the step table names it, and the value its
        handler gets.  Default: a button's name (``next``), ``timer``,
        ``draw``, ``submit`` or ``tap``, with the input itself.  A game may
        refuse here what none of its steps could take."""
        if isinstance(inp, Press):
            return inp.button, inp
        if isinstance(inp, TimerFired):
            return "timer", inp
        if isinstance(inp, Drawn):
            return "draw", inp
        if isinstance(inp, Submit):
            return "submit", inp
        if isinstance(inp, Tap):
            return "tap", inp
        return "other", inp

    def accepts(self) -> tuple[str, ...]:
        """The input kinds the current step takes."""
        return tuple(self.STEPS[self.state.step].takes)

    def _not_taken(self, kind: str, value: Any) -> Refusal:
        """The refusal for an input of ``kind`` the current step does not take
        (or a handler finds it is not for it): the step's own (``Step.refuse``)."""
        step = self.STEPS[self.state.step]
        if step.refuse is not None and (not step.refuses or kind in step.refuses):
            return Refusal(*step.refuse)
        return Refusal(self.not_now, f"not in the {self.state.step} step")

    def _player_of(self, inp: Any) -> str | None:
        """The player a ``player/<name>`` tap names (None for any other
        input); refused (``unknown_player``) if they are not in this game."""
        if not (isinstance(inp, Tap) and inp.identity.startswith("player/")):
            return None
        player = inp.identity.removeprefix("player/")
        if player not in self.players:
            raise Refusal(self.unknown_player, f"{player} is not playing this game", player=player)
        return player

    def prompt(self) -> list[Output]:
        """Lines that say what the current step is waiting for."""
        raise NotImplementedError

    def resume(self) -> list[Output]:
        """After a restart (the journal replayed): say where we are, re-arm
        whatever timers the current step needs and ask again for a ``Draw``
        that was asked for and not answered yet.  Default: re-prompt."""
        return self.prompt()

    # ------------------------------------------------------------ read side
    def public_label(self, inp: Input) -> str:
        """How the public log and page name ``inp`` once accepted, asked before
        it is handled.  Default: as it is (``skb/knight/3``, ``next``); a game
        whose tap may carry a secret (a tile that slipped, a card laid face
        down) names it without the secret, as a pattern the identity fits:
        ``skb/*`` — one of the skb/ components.  A submit named ``""`` is one
        whose very fact is private (a gift): its acceptance goes to the
        submitting player's page only."""
        return inp.label

    def public_view(self) -> dict[str, Any]:
        """What everyone may see now, JSON-ready (the public page's game part).
        Nothing here may be hidden information."""
        return {"step": self.state.step}

    def private_view(self, player: str) -> dict[str, Any]:
        """What ``player`` alone may see now (their page), JSON-ready."""
        return {}

    def page(self, player: str) -> list[tuple[str, dict[str, Any]]]:
        """``private_view`` as labelled lines for ``player``'s page: narration
        keys (``dt.page.gems``) with their params, rendered in the table's
        language by the runtime.  Only what ``private_view`` holds."""
        return []

    def board(self) -> list[tuple[str, dict[str, Any]]]:
        """``public_view`` as labelled lines for the public page (the table's
        board: ``dt.board.vp``), rendered like ``page``.  Only what
        ``public_view`` holds: anyone may read it."""
        return []

    def legal(self, player: str | None = None) -> Legal:
        """What the table (``None``) or ``player`` may do now.  The default
        knows only the buttons; games say more."""
        if player is not None:
            return Legal()
        return Legal(buttons=("next", "repeat") + (("back",) if self._undo else ()))

    @property
    def finished(self) -> bool:
        return False

    def result(self) -> Result:
        """The final totals and winners; only once ``finished``."""
        raise NotImplementedError

    @property
    def eyes_closed(self) -> bool:
        """True while players make hidden moves with everyone's eyes closed
        (the One Night night): the table must then hear nothing but the
        script — ``repeat`` and ``back`` are refused, a refusal is neither
        heard nor seen, news of the reader waits for the morning."""
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
        return not self._undo and not self._final and not self.sealed

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
            if self.eyes_closed:
                raise Refusal("refuse.quiet", "not during the night")
            if not self._undo:
                raise Refusal("refuse.nothing_to_undo", "nothing to undo in this step")
            self.state = self._undo.pop()
            return [Say("undo.done"), *self.prompt()]
        before, sealed = copy.deepcopy(self.state), copy.deepcopy(self.sealed)
        try:
            outputs = self._handle(inp)
        except Refusal:
            self.state, self.sealed = before, sealed
            raise
        if isinstance(inp, Submit):
            # A submit lives in ``sealed``, which no snapshot holds, so back can
            # never take it away; if it moved the table on too, back stops here.
            if self.state != before:
                self._undo.clear()
                self._final = True
        elif not isinstance(inp, TimerFired | Drawn) and self.undo_scope(before) == self.undo_scope(self.state):
            self._undo.append(before)
        else:  # time has passed, a secret was drawn, or the input was final: nothing before it comes back
            self._undo.clear()
            self._final = True
        return outputs
