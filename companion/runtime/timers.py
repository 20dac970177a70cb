"""The loop's timers: what is armed, by name, and when it is due.  Arming a
name again replaces it, cancelling drops it; the heap keeps stale entries
until they reach the top (``next_due`` skips them)."""

from __future__ import annotations

import heapq
import itertools


class Timers:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, str]] = []  # (due, order, name)
        self._live: dict[str, tuple[float, int]] = {}  # name → the heap entry that counts
        self._order = itertools.count()

    def __bool__(self) -> bool:
        return bool(self._heap)

    def arm(self, name: str, due: float) -> None:
        entry = (due, next(self._order))
        self._live[name] = entry
        heapq.heappush(self._heap, (*entry, name))

    def cancel(self, name: str) -> None:
        self._live.pop(name, None)

    def next_due(self) -> float:
        while self._heap and self._live.get(self._heap[0][2]) != self._heap[0][:2]:
            heapq.heappop(self._heap)  # cancelled or replaced
        return self._heap[0][0] if self._heap else float("inf")

    def pop(self) -> tuple[float, str]:
        """The earliest timer (call after ``next_due``), disarmed: (due, name)."""
        due, _, name = heapq.heappop(self._heap)
        del self._live[name]
        return due, name

    def pending(self) -> dict[str, float]:
        self.next_due()
        return {name: due for name, (due, _) in self._live.items()}
