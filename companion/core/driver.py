"""The one driver of every step table: a game's ``STEPS`` and the table's own
phases (core/table/phases.py) alike.

A *machine* is the object whose handlers run — an ``Engine``, or the
``Table`` between games.  It says where it stands (``where``: the step its
table dispatches on), moves there when told (``_go_to``; nothing else moves
it), names an input's kind (``kind_of``), refuses what the current step does
not take (``_not_taken``) and says the current step's prompt (``prompt``).
On that the driver does, for both, the same four things:

- ``drive``: the current step's entry for the input's kind, its guard, its
  handler, then the one ``Goto`` rule (core/steps.py) — the only place a
  step changes;
- ``offers``: would an entry take a value now, as far as its table says —
  the one legality both ``legal()``s are derived from;
- ``all_or_nothing``: a refusal (or a defect, ``StepError``) puts back what
  the input changed — the one rollback;
- ``check_steps``: a table whose entry is no ``Take`` of a callable, or leads
  to a step it lacks, fails when it is made, not when a table first reaches it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from companion.core.events import Drawn, Input, Output, Press, Refusal, Submit, Tap, TimerFired
from companion.core.steps import Goto, Step, StepError, Take


def drive(machine: Any, steps: Mapping[str, Step], kind: str, value: Any) -> list[Output]:
    """Handle one input of ``kind`` (with the ``value`` the handler gets) on
    ``machine``: raise ``Refusal`` to refuse (the caller's ``all_or_nothing``
    puts the state back).  The entry's guard, then its handler; then the
    step moves where the entry leads: its one target, or the one the handler
    chooses among several by returning a ``Goto`` (plain outputs stay; an
    entry that may stay lists its own step).  A handler that returned to a
    snapshot taken before (the table's ``back``) stands where the snapshot
    stood.  A step set by hand, or led where its entry does not declare,
    raises ``StepError``."""
    step, name = machine.where, type(machine).__name__
    take = steps[step].takes.get(kind)
    if take is None:
        raise machine._not_taken(kind, value)
    if take.guard is not None and (refusal := take.guard(machine, value)) is not None:
        raise refusal
    state = machine.state
    done = take.handler(machine, value)
    if machine.state is state and machine.where != step:
        raise StepError(f"{name}: the {kind} handler of {step} set the step to {machine.where} "
                        f"by hand; return a Goto from its entry's (to={take.to})")
    if isinstance(done, Goto) and done.step is None and len(take.to) != 1:
        raise StepError(f"{name}: the {kind} handler of {step} names no step, "
                        f"and its entry has no one target (to={take.to})")
    if isinstance(done, Goto):
        target, out = done.step or take.to[0], list(done.outputs)
    elif machine.state is not state:  # back to a snapshot: its step came with it
        target, out = machine.where, done
    else:
        target, out = (take.to[0] if len(take.to) == 1 else step), done
    if target not in take.to and (target != step or take.to):  # an entry of no targets stays
        raise StepError(f"{name}: {step} --{kind}--> {target}, "
                        f"which its entry does not declare (to={take.to})")
    machine._go_to(target)
    return [*out, *machine.prompt()] if isinstance(done, Goto) and done.prompt else out


_KINDS = ((TimerFired, "timer"), (Drawn, "draw"), (Submit, "submit"), (Tap, "tap"))


def input_kind(inp: Input) -> str:
    """The kind a step table names ``inp`` by, unless its machine splits it
    finer: a button's name (``next``), ``timer``, ``draw``, ``submit``,
    ``tap``; anything else is ``other``."""
    if isinstance(inp, Press):
        return inp.button
    return next((name for cls, name in _KINDS if isinstance(inp, cls)), "other")


def not_taken(machine: Any, step: Step, kind: str, value: Any) -> Refusal:
    """The refusal for an input of ``kind`` that ``step`` does not take: its
    own (``Step.refusal``, made from the input; or ``Step.refuse``, for
    every kind or those in ``refuses``), else the machine's ``not_now``."""
    if step.refusal is not None:
        return step.refusal(machine, kind, value)
    if step.refuse is not None and (not step.refuses or kind in step.refuses):
        return Refusal(*step.refuse)
    return Refusal(machine.not_now, f"not in the {machine.where} step")


def offers(machine: Any, take: Take | None, value: Any) -> bool:
    """Would ``take`` accept ``value`` now, as far as the table says: there is
    an entry, and its guard lets the value pass (or reads a secret: ``blind``,
    offered whatever the guard would say)."""
    try:
        return take is not None and (take.blind or take.guard is None or take.guard(machine, value) is None)
    except Refusal:
        return False


@contextmanager
def all_or_nothing(machine: Any, copied: tuple[str, ...],
                   kept: tuple[str, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Run the body; if it refuses (or a handler's defect raises ``StepError``)
    put back every attribute in ``copied`` (deep copies taken before, given
    to the body: the engine's undo keeps them) and in ``kept`` (the same
    objects: an engine rolls itself back), then re-raise: a refusal leaves
    no trace."""
    saved = copy.deepcopy(tuple(getattr(machine, name) for name in copied))
    same = tuple(getattr(machine, name) for name in kept)
    try:
        yield saved
    except (Refusal, StepError):
        for name, was in zip((*copied, *kept), (*saved, *same), strict=True):
            setattr(machine, name, was)
        raise


def check_steps(owner: str, steps: Mapping[str, Step]) -> None:
    """Raise ``TypeError`` for an entry that is no ``Take`` of a callable or
    leads to a step the table does not have."""
    for name, step in steps.items():
        for kind, take in step.takes.items():
            if not isinstance(take, Take) or not callable(take.handler):
                raise TypeError(f"{owner}: step {name!r} takes {kind!r} with {take!r}, "
                                "not a Take of a callable")
            if missing := [t for t in take.to if t not in steps]:
                raise TypeError(f"{owner}: step {name!r} takes {kind!r} to {missing}, no step")
