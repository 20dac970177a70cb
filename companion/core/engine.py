"""The interface every rule engine implements, and the undo mechanism they share.

An engine is a pure state machine in the manner of h11: ``handle(input)``
returns the outputs for one input or raises ``Refusal`` and leaves the state
exactly as it was.  Everything an engine knows lives in ``self.state`` (a
deep-copyable value), which is what makes undo a snapshot restore and lets
the journal rebuild any game by replaying its inputs — and in
``self.sealed``: the players' own submits (sealed bids…), which the table's
``back`` never touches (DESIGN.md, *Audiences*).

The read side is one function, as boardgame.io's ``playerView``:
``view(seat)`` is what an audience may see now — the table (``None``: every
page and the TV) or that seat alone — and ``public_view``/``board``,
``private_view``/``page`` and the ``headline`` are derived from it;
``legal(player)``, what the table or that player may do now, from ``STEPS``.

The step table it dispatches on (``STEPS``) is core/steps.py, the driver
that runs it core/driver.py (the table's phases run on the same); the values
it is given and gives back are core/contract.py (re-exported here, where the
games import them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from companion.core import driver
from companion.core.contract import Ask, Legal, Outcome, Result, Setup, View
from companion.core.events import BUTTONS, Drawn, Input, Output, Press, Refusal, Say, Submit, Tap, TimerFired
from companion.core.steps import Goto, Step, StepError, Take

__all__ = ["Ask", "Engine", "Goto", "Legal", "Outcome", "Result", "Setup", "Step", "StepError", "Take", "View"]


class Engine:
    """Base class of the rule engines.

    Subclasses set the class attributes (``STEPS`` among them), keep all
    their state in ``self.state`` (which must have a ``step`` attribute
    naming the current step, which only the driver moves), and implement
    ``start``; each step's prompt, resume lines, waiting and headline are its
    ``Step``'s, unless a game overrides the method.
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
    # How its events tell who won (``Outcome``): the game's knowledge, declared here so
    # that the shell (the MQTT link's Home Assistant entity) names no game.
    outcomes: ClassVar[tuple[Outcome, ...]] = ()
    STEPS: ClassVar[Mapping[str, Step]] = {}  # step -> what it takes (see the module's docstring)
    # The lines telling the time left ("One minute left."): a page shows its countdown instead (one clock).
    clock_lines: ClassVar[tuple[str, ...]] = ()
    not_now: ClassVar[str] = "refuse.not_now"  # the key where a step has no refusal of its own
    unknown_player: ClassVar[str] = "refuse.unknown_player"  # a player card of someone not in this game
    state: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A step table whose entry is no ``Take`` of a callable, or leads to
        a step it does not have, fails when the game is imported, not when a
        table first reaches that step."""
        super().__init_subclass__(**kwargs)
        driver.check_steps(cls.__name__, cls.STEPS)

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.players: tuple[str, ...] = tuple(setup.players)
        self.sealed: dict[str, Any] = {}  # the players' submits: never undone by back
        self._undo: list[Any] = []
        self._final = False  # an input has been made final: the start is out of reach

    # ------------------------------------------------------- for subclasses
    @classmethod
    def more_lines(cls) -> tuple[Any, ...]:
        """Folders of lines (``pathlib.Path``, each with ``<lang>.yaml``) that parts of the
        game added from outside its folder bring (One Night's roles); its own
        ``lines/`` is found beside its engine."""
        return ()

    @classmethod
    def known_rules(cls) -> tuple[str, ...]:
        """Rule-card names this game understands (``rules/<name>``)."""
        return ()

    # ------------------------------------- asked of the class before a game exists
    # The table may tap this game's components before the start (One Night's deck): each is
    # ``setup_card``'s to take or refuse, the lot ``check_cards``' at ``next``; then ``Setup.cards``.
    setup_cards: ClassVar[bool] = False

    @classmethod
    def check_setup(cls, players: Sequence[str], rules: Sequence[str], options: Mapping[str, Any]) -> None:
        """Raise ``Refusal`` if the game cannot start with these players and rule cards (default: the count)."""
        n = len(players)
        if not cls.min_players <= n <= cls.max_players:
            raise Refusal("refuse.player_count",
                          f"{cls.game} needs {cls.min_players} to {cls.max_players} players, not {n}",
                          count=n, low=cls.min_players, high=cls.max_players)

    @classmethod
    def pairing_lines(cls, players: Sequence[str], rules: Sequence[str],
                      options: Mapping[str, Any]) -> list[Output]:
        """What the table can set out while the phones pair (a game that needs pages). Default: nothing."""
        return []

    @classmethod
    def setup_card(cls, rules: Sequence[str], options: Mapping[str, Any], cards: Sequence[str],
                   card: str) -> list[Output]:
        """What is said when ``card`` is tapped before the start (``cards``: so far); ``Refusal`` refuses it."""
        raise Refusal("refuse.not_before_start", "seat the players first, then press next")

    @classmethod
    def setup_board(cls, rules: Sequence[str], options: Mapping[str, Any],
                    cards: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
        """The cards tapped before the start as the board's lines (public: each tap was said aloud)."""
        return []

    @classmethod
    def check_cards(cls, players: Sequence[str], rules: Sequence[str], options: Mapping[str, Any],
                    cards: Sequence[str]) -> None:
        """Raise ``Refusal`` if the cards tapped before the start cannot be played by these players (at ``next``)."""

    def start(self) -> list[Output]:
        """Outputs when the game begins: what to deal, then the first prompt."""
        raise NotImplementedError

    def _handle(self, inp: Input) -> list[Output]:
        """Handle one input (never ``back``); raise ``Refusal`` to refuse.
        May mutate ``self.state`` before raising: the caller restores it.
        Default: the current step's entry for the input's kind (``STEPS``),
        run by the one driver (core/driver.py): its guard, then its handler;
        then the step moves where the entry leads (``Take``) — the one place
        a step changes."""
        kind, value = self.kind_of(inp)
        return driver.drive(self, self.STEPS, kind, value)

    @property
    def where(self) -> str:
        """The step ``STEPS`` dispatches on (the driver's)."""
        return str(self.state.step)

    def _go_to(self, step: str) -> None:
        """Where the driver moves the step, and nothing else does."""
        self.state.step = step

    def kind_of(self, inp: Input) -> tuple[str, Any]:
        """The kind of ``inp`` as the step table names it, and the value its
        handler gets.  Default: a button's name (``next``), ``timer``,
        ``draw``, ``submit`` or ``tap``, with the input itself.  A game may
        refuse here what none of its steps could take."""
        return driver.input_kind(inp), inp

    def accepts(self) -> tuple[str, ...]:
        """The input kinds the current step takes."""
        return tuple(self.STEPS[self.state.step].takes)

    def _not_taken(self, kind: str, value: Any) -> Refusal:
        """The refusal for an input of ``kind`` the current step does not take
        (or a handler finds it is not for it): the step's own (``Step.refuse``)."""
        return driver.not_taken(self, self.STEPS[self.state.step], kind, value)

    def _player_of(self, inp: Any) -> str | None:
        """The player a ``player/<name>`` tap names (None for any other
        input); refused (``unknown_player``) if they are not in this game."""
        if not (isinstance(inp, Tap) and inp.identity.startswith("player/")):
            return None
        player = inp.identity.removeprefix("player/")
        if player not in self.players:
            raise Refusal(self.unknown_player, f"{player} is not playing this game", player=player)
        return player

    @property
    def _step(self) -> Step:
        """The current step's entry (an empty one for a step the table lacks: a test's engine)."""
        return self.STEPS.get(self.state.step) or Step()

    def prompt(self) -> list[Output]:
        """Lines that say what the current step is waiting for: its ``prompt``."""
        return self._step.prompt(self) if self._step.prompt is not None else []

    def resume(self) -> list[Output]:
        """After a restart (the journal replayed): say where we are, re-arm
        whatever timers the current step needs and ask again for a ``Draw``
        that was asked for and not answered yet.  Default: the step's
        ``resume``, or its prompt."""
        return self._step.resume(self) if self._step.resume is not None else self.prompt()

    def waiting(self) -> list[str]:
        """Whom the current step waits for (its ``waits``; nobody by default)."""
        return self._step.waits(self) if self._step.waits is not None else []

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

    def view(self, seat: str | None = None) -> View:
        """The one read function: what ``seat`` alone may see now (their
        page), or with ``None`` what the table may — every page and the TV,
        so nothing there may be hidden information.  A game reads its state
        here (never arming or changing anything); everything else on the
        read side is derived from it.  Default: the step, for the table."""
        return View({"step": self.state.step}) if seat is None else View()

    def public_view(self) -> dict[str, Any]:
        """The table's ``view``'s facts (the public page's game part)."""
        return dict(self.view().facts)

    def headline(self) -> dict[str, Any]:
        """What the table waits for now, from public facts only (the pages'
        headline, DESIGN "Web"): ``waiting_for`` (names), ``anyone`` (any
        player may go on: a discussion, the table as a whole), ``count``
        (``{"done", "of", "what"}`` for inputs that fill up — counts only,
        never whose value) and ``timer``: ``(name, left)`` when the step ends
        on a countdown — ``left`` seconds remain when the timer ``name``
        fires (the runtime knows when that is; the engine keeps no clock),
        or a list of such pairs, of which the first armed counts.
        Default: the public view's ``whose_turn``; nobody named, or
        everyone, is anyone."""
        waiting = list(self.public_view().get("whose_turn", []))
        anyone = not waiting or set(waiting) == set(self.players)
        head = {"waiting_for": [] if anyone else waiting, "anyone": anyone, "count": None, "timer": None}
        return {**head, **self._step.headline(self)} if self._step.headline is not None else head

    def private_view(self, player: str) -> dict[str, Any]:
        """``player``'s ``view``'s facts (their page's game part)."""
        return dict(self.view(player).facts)

    def page(self, player: str) -> list[tuple[str, dict[str, Any]]]:
        """``player``'s ``view`` as lines (``dt.page.gems``) for their page."""
        return list(self.view(player).lines)

    def board(self) -> list[tuple[str, dict[str, Any]]]:
        """The table's ``view`` as lines (``dt.board.vp``): every page's board and the TV's."""
        return list(self.view().lines)

    def legal(self, player: str | None = None) -> Legal:
        """What the table (``None``) or ``player`` may do now, derived from
        ``STEPS``: the table's buttons and taps that the current step takes
        and its guards let pass (``_offers``; the taps of this game's
        ``components`` and its players' cards, each as ``public_label`` names
        it — a pattern for one whose identity is a secret), ``repeat``
        and ``back`` (the loop's and the base's, both refused while eyes are
        closed); a player's fields from the step's ``asks``.  Timers and
        draws are the runtime's, not listed.  A game with no step table
        (a test's) gets the buttons alone."""
        step = self.STEPS.get(self.state.step)
        if player is not None:
            submits: dict[str, Ask] = {}
            for take in step.takes.values() if step is not None else ():
                if take.asks is not None:
                    submits.update(take.asks(self, player))
            return Legal(submits=submits)
        if step is None:
            return Legal(buttons=("next", "repeat") + (("back",) if self._undo else ()))
        quiet = self.eyes_closed
        buttons = tuple(b for b in BUTTONS if b not in ("back", "repeat") and self._offers(Press(b)))
        buttons += (() if quiet else ("repeat",)) + (("back",) if self._undo and not quiet else ())
        taps = (Tap(i) for i in (*self.components, *(f"player/{p}" for p in self.players)))
        # named as in public: a tap whose identity is a secret is its pattern (``mh/girl/*``)
        named = dict.fromkeys(self.public_label(tap) for tap in taps if self._offers(tap))
        return Legal(buttons=buttons, taps=tuple(named))

    def _offers(self, inp: Input) -> bool:
        """Would the current step take ``inp``, as far as its table says: its
        kind is taken and its guard lets it pass (or reads a secret)."""
        try:
            kind, value = self.kind_of(inp)
        except Refusal:
            return False
        return driver.offers(self, self.STEPS[self.state.step].takes.get(kind), value)

    @property
    def finished(self) -> bool:
        """Is the game over: its step ``final``?"""
        return self._step.final

    def result(self) -> Result:
        """The final totals and winners; only once ``finished``."""
        raise NotImplementedError

    @property
    def eyes_closed(self) -> bool:
        """True while players make hidden moves with everyone's eyes closed
        (the One Night night): the table must then hear nothing but the
        script — ``repeat`` and ``back`` are refused, a refusal is neither
        heard nor seen, news of the reader waits for the morning.  The
        step's ``quiet``."""
        return self._step.quiet

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
        with driver.all_or_nothing(self, ("state", "sealed")) as (before, _):  # a defect of the game leaves no trace either
            outputs = self._handle(inp)
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
