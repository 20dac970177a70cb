"""A spoken countdown (a discussion timer): the points at which it fires.

Pure arithmetic shared by the games that run a timed discussion, so a
restart can resume one from the time left the journal last recorded.
"""

from __future__ import annotations

from collections.abc import Sequence


def spoken(x: float) -> int | float:
    """Numbers go to the narrator as ints when they are whole."""
    return int(x) if float(x).is_integer() else x


def next_point(left: float, total: float, warnings: Sequence[float]) -> float:
    """The next time-left value at which the discussion timer fires: every whole
    minute (so a restart knows the time left to within a minute), every warning
    and 0 (past ``total`` too, where minutes were added)."""
    points = {float(m) for m in range(60, int(max(total, left)) + 1, 60)} | {float(w) for w in warnings} | {0.0}
    return max(p for p in points if p < left)
