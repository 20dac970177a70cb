"""Bounded noise: whatever a broker floods the table with — junk or pressed
commands, Home Assistant's births — costs it a bounded number of log lines
and of presses, at a bounded rate (a token bucket), and what was left out is
said in one line rather than dropped without a word."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

LINES_BURST, LINES_PER_S = 5, 0.1  # a kind of line: 5 at once, then one every 10 s
COMMANDS_BURST, COMMANDS_PER_S = 5, 1.0  # presses from the broker: 5 at once, then one a second


class Bucket:
    """A token bucket: ``burst`` at once, then ``per_s`` a second. Not
    thread-safe: its owner holds a lock."""

    def __init__(self, burst: int, per_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.burst, self.per_s, self.clock = burst, per_s, clock
        self.tokens, self.at = float(burst), clock()
        self.refused = 0  # refused since the owner last told it

    def ready(self) -> bool:
        now = self.clock()
        self.tokens, self.at = min(float(self.burst), self.tokens + (now - self.at) * self.per_s), now
        return self.tokens >= 1.0

    def take(self) -> bool:
        if self.ready():
            self.tokens -= 1.0
            return True
        self.refused += 1
        return False


class Lines:
    """Log lines by kind (``"ignored commands"``): each kind through a bucket
    of its own, so a flood of one never hides another; ``flush`` (called
    often, e.g. by the link's worker) says how many of a kind were left out,
    in one line, once that kind may speak again."""

    def __init__(self, report: Callable[[str], None], burst: int = LINES_BURST, per_s: float = LINES_PER_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.report, self.burst, self.per_s, self.clock = report, burst, per_s, clock
        self._lock = threading.Lock()
        self._kinds: dict[str, Bucket] = {}

    def note(self, kind: str, message: str) -> None:
        with self._lock:
            bucket = self._kinds.setdefault(kind, Bucket(self.burst, self.per_s, self.clock))
            ok = bucket.take()
        if ok:
            self.report(message)

    def flush(self) -> None:
        owed = []
        with self._lock:
            for kind, bucket in self._kinds.items():
                if bucket.refused and bucket.ready():  # the summary takes a token like any line
                    bucket.tokens -= 1.0
                    owed.append((kind, bucket.refused))
                    bucket.refused = 0
        for kind, n in owed:
            self.report(f"mqtt: {n} more {kind} not logged (at most {self.burst} at once, "
                        f"then one every {1 / self.per_s:g} s)")
