"""Time, injected.  Every timer and timestamp goes through a clock object, so
the simulation replays an hour-long game in milliseconds and tests never sleep.

A Pi has no real-time clock: its wall clock is wrong at boot (1970, or the
last time it saved) and jumps when the network sets it.  Timers and durations
therefore run on the monotonic ``now``; the wall only dates things, through
``Record``, which never lets a date go back before the journal's.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

# The virtual clock's wall time starts here, so simulated logs and exports are
# the same on every run (2026-01-01T19:00:00Z: a games night).
VIRTUAL_EPOCH = 1767294000.0


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds, for scheduling."""

    def wall(self) -> float:
        """Seconds since the Unix epoch, for dates in the score history."""


class RealClock:
    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()


class VirtualClock:
    """Time moves only when told to.  Its wall runs with it from
    ``VIRTUAL_EPOCH`` unless ``jump_wall`` sets it (a network setting the
    clock of a Pi without a real-time clock)."""

    def __init__(self, start: float = 0.0) -> None:
        self.t = start
        self.wall_offset = 0.0

    def now(self) -> float:
        return self.t

    def wall(self) -> float:
        return VIRTUAL_EPOCH + self.wall_offset + self.t

    def jump_wall(self, seconds: float) -> None:
        """The wall clock alone moves by ``seconds`` (either way); ``now`` does not."""
        self.wall_offset += seconds

    def set(self, t: float) -> None:
        if t < self.t:
            raise ValueError("virtual time does not go backwards")
        self.t = t


BEHIND_S = 60.0  # a wall clock this far behind the journal is wrong, not merely slewed


class Record:
    """The two times the journal keeps with each input, from a clock whose
    wall may be wrong (set back or forward while the table runs, or at boot).

    ``t(now)``: the table's running time, monotonic, continued from the
    journal's last ``t``: a game lasts ``t(end) - t(start)``, even across a
    restart.  The time the table was off counts nothing (at boot the wall
    cannot say how long that was).  Journals from before kept ``t`` from 0 in
    each run; continuing from their last one is as good.

    ``wall(now)``: the wall of record — the wall clock, but never behind the
    last wall of record plus the monotonic time since.  A clock behind the
    journal (1970 at boot) dates inputs from the journal instead, so plays
    stay in order; once the clock is set forward past that, it is used again.
    A clock set wrongly *forward* cannot be told from a right one and is
    taken at its word: every later date stays at or after it.
    """

    def __init__(self, clock: Clock, last: tuple[float, float] | None) -> None:
        """``last``: the journal's last (t, wall), None for an empty journal."""
        self.clock = clock
        self.start = clock.now()
        self.last_wall = last[1] if last is not None else None  # the journal's, when this run began
        self._t0 = self.start - (last[0] if last is not None else 0.0)
        self._floor = (last[1], self.start) if last is not None else None  # (wall of record, at now)

    def t(self, now: float) -> float:
        return now - self._t0

    def clock_wall(self, now: float) -> float:
        """What the wall clock reads for the moment ``now`` (a timer's due time may be past)."""
        return self.clock.wall() - (self.clock.now() - now)

    def behind(self, now: float) -> float:
        """How many seconds the wall clock reads behind the wall of record (0: not)."""
        if self._floor is None:
            return 0.0
        behind = self._floor[0] + (now - self._floor[1]) - self.clock_wall(now)
        return behind if behind > 1e-3 else 0.0  # not the rounding of two sums that should be equal

    def wall(self, now: float) -> float:
        return self.clock_wall(now) + self.behind(now)

    def recorded(self, now: float, wall: float) -> None:
        """``wall`` was journaled for ``now``: later walls of record are not before it."""
        if self._floor is None or wall - now > self._floor[0] - self._floor[1]:
            self._floor = (wall, now)


SESSION_GAP_S = 6 * 3600  # a start this long after the last input begins a new games night


def utc(wall: float, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A wall time as UTC text; a clock so wrong that no date fits reads as the epoch."""
    try:
        return datetime.fromtimestamp(wall, UTC).strftime(fmt)
    except (OverflowError, OSError, ValueError):
        return datetime.fromtimestamp(0, UTC).strftime(fmt)


class EveningWatch:
    """Is this a new games night, and is the wall clock behind the journal?
    A clock behind the journal (a Pi at boot) says nothing of how long the
    table was off: then whether the start was a new evening is not known
    until the clock is set; the first input after that decides it as the
    start would have, unless a game has ended since (tonight is shared by then)."""

    def __init__(self, times: Record) -> None:
        self.times = times
        self.played = False  # a game ended in this run
        self._said = False  # "the clock is behind the saved games", once a run
        self._unknown = False  # the clock was behind at start: was that a new evening?

    def begin(self, now: float) -> None:
        self._unknown = self.times.behind(now) > 0

    def new_at_start(self, wall: float) -> bool:
        last = self.times.last_wall
        return last is not None and not self._unknown and wall - last > SESSION_GAP_S

    def check(self, now: float) -> tuple[str | None, bool]:
        """(what to log, whether a new evening begins now)."""
        behind = self.times.behind(now)
        if behind > BEHIND_S and not self._said:
            self._said = True
            return (f"the clock is behind the saved games: it reads {utc(self.times.clock_wall(now))} UTC, "
                    f"the journal is at {utc(self.times.wall(now))} UTC; until the clock is set "
                    "(the network sets it), games are dated from the journal"), False
        if behind == 0 and self._unknown:
            self._unknown = False
            began = self.times.clock_wall(self.times.start)  # the start, by the clock now set
            last = self.times.last_wall
            return None, not self.played and last is not None and began - last > SESSION_GAP_S
        return None, False
