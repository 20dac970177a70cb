"""One Night's night: a fixed script made from the deck, the options and the
night's secret jitter draw only — which is what keeps the night from telling
anything (a turn that is shorter because its card lies in the centre, or that
reacts to a tap, would be a tell).  Two deals of one deck give the same night.

The turns: every role of the deck that wakes in the edition, in its order
(``roles``' ``wake``); [ruling] a role in the deck always has its turn, even if
its card may lie in the centre.  With the doppelganger in the deck, its
sub-steps: a copied role that acts "after" it wakes right after its turn, one
that acts at the "end" right after that role's own turn, and the roles it
wakes "with" say so in their wake line.  A role that wakes in another's turn
(Daybreak's wolves, the werewolves': its ``pack``) calls that turn too, and
says its ``.with`` line in it (the dream wolf's thumb).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from companion.core.events import Draw, Output, Say, Sound
from companion.games.one_night.roles import EDITIONS, ROLES, Role, key_of, spoken
from companion.games.one_night.rules import Options

AMBIENCE = "table-tapping"
JITTER_DRAW = "jitter"  # the night's secret draw: one jitter in ms per turn
DOPPELGANGER = "doppelganger"
SUB_STEP = 0.1  # a doppelganger's sub-step's place after the turn it follows (below the 0.2 between fractions)


@dataclass(frozen=True)
class Segment:
    """One beat of the night: ``outputs`` happen when timer ``name`` fires (the
    first one on ``next``), and the next beat follows ``delay`` seconds later."""

    name: str
    outputs: tuple[Output, ...]
    delay: float
    turn: str  # the turn this beat belongs to ("" before the first)


@dataclass(frozen=True)
class Turn:
    name: str  # the role, or ``doppelganger-<role>`` for a sub-step
    role: str  # whose window it is (``Options.windows``)
    wake: tuple[Output, ...]
    sleep: tuple[Output, ...]


def turns(deck: Mapping[str, int], edition: str) -> tuple[Turn, ...]:
    """The night's turns for this deck, in order."""
    p, doppel = EDITIONS[edition].prefix, bool(deck.get(DOPPELGANGER))
    placed: list[tuple[float, Turn]] = []
    for role in (r for r in ROLES.values() if _called(r, deck) and edition in r.wake):
        wake: list[Output] = [Say(f"{p}.{key_of(role.id)}.wake")]
        wake += [Say(f"{p}.{key_of(role.id)}.{more}") for more in role.wake_more.get(edition, ())]
        pack = [r for r in ROLES.values() if r.pack == role.id and deck.get(r.id)]
        wake += [Say(f"{p}.{key_of(r.id)}.with") for r in pack]  # Daybreak's wolves, the dream wolf's thumb
        if doppel:
            # a doppelganger who copied this role, or a role that wakes in its turn (and acts), wakes too
            wake += [Say(f"{p}.doppelganger.with", {"role": spoken(r.id, edition)}) for r in (role, *pack)
                     if deck.get(r.id) and r.doppel == ("with" if r is role else "end")]
            if role.id == DOPPELGANGER:  # another box's roles it acts as at once: its own line names its box's
                wake += [Say(f"{p}.doppelganger.now", {"role": spoken(r.id, edition)})
                         for r in ROLES.values() if r.doppel == "now" and r.box and deck.get(r.id)]
        placed.append((role.wake[edition], Turn(role.id, role.id, tuple(wake), (Say(f"{p}.{key_of(role.id)}.sleep"),))))
        if doppel and role.doppel in ("after", "end") and deck.get(role.id):
            at = ROLES[DOPPELGANGER].wake[edition] if role.doppel == "after" else role.wake[edition]
            sub = f"{p}.{key_of(role.id)}.doppelganger"
            # right after: before any role whose place is the next fraction (2B's copy before 2C)
            placed.append((at + SUB_STEP, Turn(f"{DOPPELGANGER}-{role.id}", DOPPELGANGER, (Say(f"{sub}.wake"),),
                                               (Say(f"{sub}.sleep"),))))
    return tuple(t for _, t in sorted(placed, key=lambda x: x[0]))


def _called(role: Role, deck: Mapping[str, int]) -> bool:
    """[ruling] A role in the deck has its turn; so has a role another one wakes with."""
    return bool(deck.get(role.id)) or any(r.pack == role.id and deck.get(r.id) for r in ROLES.values())


def called_roles(deck: Mapping[str, int], edition: str = "jinrou") -> tuple[str, ...]:
    """The turns' names, in order."""
    return tuple(t.name for t in turns(deck, edition))


def jitter_draw(deck: Mapping[str, int], opts: Options) -> Draw:
    """The secret draw a night starts with: each turn's extra window, in ms."""
    low, high = opts.jitter_s
    return Draw(JITTER_DRAW, round(low * 1000), round(high * 1000), count=len(turns(deck, opts.edition)))


def window(opts: Options, jitter_ms: int, role: str = "") -> float:
    """A turn's window: its role's window (``windows``, else ``window_s``) × pace
    plus its drawn jitter; the draw is journaled, so a replay (or a resumed
    night) gives the same length."""
    return round(opts.windows.get(role, opts.window_s) * opts.pace + jitter_ms / 1000, 3)


def night_script(deck: Mapping[str, int], opts: Options, jitter_ms: Sequence[int]) -> tuple[Segment, ...]:
    """The whole night, fixed before it starts (``jitter_ms``: the drawn
    jitter of each turn, in order)."""
    pause = round(opts.pause_s * opts.pace, 3)
    start: list[Output] = [Say("onw.night.start")]
    if opts.masking:
        start.append(Sound(AMBIENCE, True))
    script = [Segment("night:start", tuple(start), pause, "")]
    for turn, extra in zip(turns(deck, opts.edition), jitter_ms, strict=True):
        script.append(Segment(f"night:{turn.name}:wake", turn.wake, window(opts, extra, turn.role), turn.name))
        script.append(Segment(f"night:{turn.name}:sleep", turn.sleep, pause, turn.name))
    morning: list[Output] = []
    if opts.masking:
        morning.append(Sound(AMBIENCE, False))
    morning.append(Say("onw.night.morning"))
    script.append(Segment("night:morning", tuple(morning), 0.0, "morning"))
    return tuple(script)


def turn_start(script: Sequence[Segment], at: int) -> int:
    """Where the turn that beat ``at`` belongs to begins: a resumed night restarts
    it from its wake line (the pause after a sleep line still belongs to that
    turn, since the sleep line may not have been heard before the cut)."""
    turn = script[at].turn
    return next(i for i, seg in enumerate(script) if seg.turn == turn)
