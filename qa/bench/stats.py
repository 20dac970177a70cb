"""Small statistics and shared plumbing for the benchmarks (stdlib only)."""

from __future__ import annotations

import math
import os
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYTHON = Path(sys.executable)
# The console script systemd starts (ExecStart=…/.venv/bin/companion run); next
# to the interpreter running the benchmarks, so it is the same venv.
COMPANION = PYTHON.parent / "companion"


def percentile(values: Sequence[float], p: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        raise ValueError("no values")
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


@dataclass(frozen=True)
class Figure:
    """One row of the table: the median of several runs, with their range."""

    key: str
    runs: tuple[float, ...]
    unit: str
    goal: float | None = None  # the figure must be at most this
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def met(self) -> bool | None:
        return None if self.goal is None else self.median <= self.goal


def figure(key: str, runs: Sequence[float], unit: str, goal: float | None = None, note: str = "") -> Figure:
    return Figure(key, tuple(float(r) for r in runs), unit, goal, note)


def config(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The shipped config (never /etc's), as ``companion simulate`` loads it."""
    from companion.app import config as configmod

    return configmod.load(configmod.default_paths()[:1], overrides or {})


def daemon_env(**extra: str) -> dict[str, str]:
    """The environment for a daemon child: the shipped config only, so a file
    in /etc/companion on the bench machine changes nothing."""
    env = dict(os.environ)
    env.pop("NOTIFY_SOCKET", None)
    env.pop("WATCHDOG_USEC", None)
    env["COMPANION_CONFIG"] = str(ROOT / "config" / "companion.yaml")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # start-up must find the .pyc files, as installed
    env.update(extra)
    return env
