"""The loop's time and chance: the armed timers, firing each when it is due
(in order, at its own due time, so schedules don't drift), and the games'
secret draws, made after an input's other outputs, each an input of its own.
A timer or a draw whose journal write failed cannot be tapped again, so it is
tried again shortly (``retry``).  Runs on the loop's thread; ``take`` is the
loop's way in for an input (journal first, then its outputs)."""

from __future__ import annotations

from collections.abc import Callable

from companion.core import events as ev
from companion.core.table import Table
from companion.runtime.clock import Clock
from companion.runtime.draws import Drawer, DrawError
from companion.runtime.timers import Timers

TIMER_RETRY_S = 0.5  # a timer whose journal write failed fires again this much later


class Schedule:
    def __init__(self, table: Table, clock: Clock, drawer: Drawer,
                 take: Callable[[ev.Input, float], object], error: Callable[[str], None]) -> None:
        self.table, self.clock, self.drawer, self._take, self._error = table, clock, drawer, take, error
        self.timers = Timers()
        self._draw_retries: dict[str, ev.Draw] = {}  # a draw whose journal write failed, by retry timer
        self._last_draw: ev.Draw | None = None  # the request behind the Drawn being handled

    def pending(self) -> dict[str, float]:
        """The game's armed timers (not the retries), each with its due time."""
        return {name: due for name, due in self.timers.pending().items() if name not in self._draw_retries}

    def due_wall(self) -> dict[str, float]:
        """Each armed timer's wall-clock time: what a phone counts down to."""
        now, wall = self.clock.now(), self.clock.wall()
        return {name: wall + (due - now) for name, due in self.pending().items()}

    def fire_due(self, now: float) -> None:
        """Fire every timer due by ``now``, in order, each at its own due time."""
        while self.timers.next_due() <= now:
            due, name = self.timers.pop()
            if name in self._draw_retries:
                self.draw(self._draw_retries.pop(name), at=due)
            else:
                self._take(ev.TimerFired(name), due)

    def draw(self, request: ev.Draw, at: float) -> None:
        try:
            value = self.drawer.draw(request, self.table.state.games_started)
        except DrawError as e:
            return self._error(str(e))
        self._last_draw = request
        self._take(ev.Drawn(request.name, value), at)
        return None

    def retry(self, inp: ev.Input, now: float) -> str | None:
        """``inp`` was not journaled: a timer or a draw is tried again shortly
        (what to say about it); None for an input a person can simply repeat."""
        if isinstance(inp, ev.TimerFired):  # nobody can tap a timer again
            self.timers.arm(inp.name, now + TIMER_RETRY_S)
            return f"timer {inp.name} will be tried again"
        if isinstance(inp, ev.Drawn) and self._last_draw is not None:  # the engine still waits for it
            self._draw_retries[retry := f"draw-retry:{inp.name}"] = self._last_draw
            self.timers.arm(retry, now + TIMER_RETRY_S)
            return f"draw {inp.name} will be tried again"
        return None
