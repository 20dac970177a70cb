"""Time, injected.  Every timer and timestamp goes through a clock object, so
the simulation replays an hour-long game in milliseconds and tests never sleep."""

from __future__ import annotations

import time
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
    """Time moves only when told to."""

    def __init__(self, start: float = 0.0) -> None:
        self.t = start

    def now(self) -> float:
        return self.t

    def wall(self) -> float:
        return VIRTUAL_EPOCH + self.t

    def set(self, t: float) -> None:
        if t < self.t:
            raise ValueError("virtual time does not go backwards")
        self.t = t
