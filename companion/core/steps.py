"""The step table every engine (and the table between games) dispatches on.

One dispatch style for every game and the table's own phases (core/driver.py drives both),
the one source of what is legal: a
class-level table ``STEPS``, step → ``Step(takes={input kind: Take(...)},
refuse=(key, reason))``.  ``kind_of`` names an input's kind (``next``,
``timer``, ``draw``, ``submit``, ``tap``; a game may split taps finer, as
Seven Knights does into ``tile`` and ``player``, and refuse there what none of
its steps could take); the base looks the kind up in the current step, asks
the entry's ``guard`` (the refusal, or None) and only then calls its
``handler`` with the value ``kind_of`` gave; a kind the step does not take
gets ``_not_taken``: the step's own refusal.  Each entry also says where it
leads (``to``), and the base moves the step there — the table is the one
place a step changes (h11's ``_state.py``): one target, and the base goes
there after the handler; several, and the handler may only *choose* one, by
returning a ``Goto``.  A handler that sets the step itself, or chooses a
target its entry does not declare, raises ``StepError`` in every build; the
class check at import makes sure every handler is a callable and every
target a step.  What a step is to the table is declared beside what it
takes: its prompt, its lines after a restart, whom it waits for, its
headline's countdown or count, closed eyes, the end.  ``legal()`` is derived
from the same table: a button or a tap is offered when its kind is taken now
and its guard lets it pass (``_offers``), a player's fields are the entries'
``asks``; so what a page offers and what ``handle`` accepts cannot drift
apart (tests/test_legal_perft.py walks every reachable state to check it).
Why a table rather than one method per step: what a step takes, and where
it leads, is then data read in one place (a diagram could be drawn from it),
answerable without running anything (``accepts``, ``legal``); the handlers
only do what they are for, and an input no step mentions is refused by one
rule instead of a fall-through at the end of every handler.  Games that must
refuse a stray input by what it is rather than by the step (a stale timer,
another game's card) say so once, in their ``_not_taken``, around the base's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.core.contract import Ask
from companion.core.events import Output, Refusal


@dataclass(frozen=True)
class Goto:
    """What a handler returns to choose where its input leads, among the
    targets its entry declares (``Take.to``): the step (None: the entry's
    one target — a handler shared by steps), the outputs, and whether the
    new step's prompt follows them (said once the step has moved, so it is
    the new step's)."""

    step: str | None = None
    outputs: Sequence[Output] = ()
    prompt: bool = False

    def after(self, *before: Output) -> Goto:
        """The same move, with ``before`` said first."""
        return Goto(self.step, (*before, *self.outputs), self.prompt)


class StepError(Exception):
    """A handler that moved the step by hand, or to a step its entry does
    not declare: a defect of the game, raised in every build."""


Handler = Callable[[Any, Any], list[Output] | Goto]  # (engine, the value kind_of gave) -> outputs
Guard = Callable[[Any, Any], Refusal | None]  # (engine, value) -> why it is refused now, or None


@dataclass(frozen=True)
class Take:
    """How a step takes one input kind.

    ``handler(engine, value)`` makes the outputs; ``guard(engine, value)``
    says why the input is refused now (a ``Refusal``, or None), asked by the
    base before the handler and by ``legal()`` — the one place of that
    check; ``to`` names where the input leads: one step, and the base moves
    there after the handler; several, and the handler chooses one by
    returning a ``Goto`` (plain outputs stay — an entry that may stay lists
    its own step among them); none, and it stays.  ``asks(engine, player)`` gives a submit kind's fields open to
    ``player`` now (``legal(player).submits``).  ``blind``: the guard reads a
    secret (a tile that may have slipped), so ``legal()`` offers the input
    whatever the guard would say — the public page must not depend on it."""

    handler: Handler
    to: tuple[str, ...] = ()
    guard: Guard | None = None
    asks: Callable[[Any, str], Mapping[str, Ask]] | None = None
    blind: bool = False


Lines = Callable[[Any], list[Output]]  # (engine) -> outputs


@dataclass(frozen=True)
class Step:
    """One step of a game: the input kinds it takes (each a ``Take``), and
    the refusal (key, reason) for the kinds it does not take — for every
    kind, or only for those in ``refuses``.  Beside them, what the step
    is to the table, each a function of the engine: ``prompt`` (what it
    waits for, said; default nothing), ``resume`` (said after a restart;
    default the prompt), ``waits`` (whom it waits for: the public view's
    ``whose_turn``; default nobody), ``headline`` (the headline's
    ``timer``/``count`` while in it); ``quiet``: eyes are closed
    (``eyes_closed``); ``final``: the game is over (``finished``).
    ``refusal(machine, kind, value)``: the refusal made from the input,
    for a step whose refusal names it (the table's pairing gate: who is
    missing), in place of ``refuse``."""

    takes: Mapping[str, Take] = field(default_factory=dict)
    refuse: tuple[str, str] | None = None
    refuses: tuple[str, ...] = ()
    prompt: Lines | None = None
    resume: Lines | None = None
    waits: Callable[[Any], list[str]] | None = None
    headline: Callable[[Any], Mapping[str, Any]] | None = None
    quiet: bool = False
    final: bool = False
    refusal: Callable[[Any, str, Any], Refusal] | None = None
