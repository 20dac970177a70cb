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


TIME_FORMS = ("", ".one", ".minutes", ".one_and", ".minutes_and")


def time_line(key: str, seconds: float) -> tuple[str, dict[str, int | float]]:
    """A line that says a time as the clocks show it (m:ss), and its params:
    under a minute ``key`` with ``seconds``; whole minutes ``key.one`` (1:00,
    "one minute", 1分) or ``key.minutes`` with ``minutes``; a minute and
    seconds ``key.one_and`` (1:30, "one minute 30", 1分30秒) or
    ``key.minutes_and`` with both.  ``TIME_FORMS``: the suffixes a game's
    lines hold for ``key``."""
    minutes, rest = int(seconds // 60), spoken(round(seconds % 60, 3))
    if minutes == 0:
        return key, {"seconds": spoken(seconds)}
    form = ("one" if minutes == 1 else "minutes") + ("_and" if rest else "")
    return f"{key}.{form}", {**({"minutes": minutes} if minutes > 1 else {}), **({"seconds": rest} if rest else {})}
