"""How the readable log (``companion/app/pretty.py``) shows Seven Knights' own events."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def _formation(ev: Mapping[str, Any]) -> str:
    tiles = " ".join(x.split("/", 1)[1] for x in ev["tiles"]) or "—"
    left = " ".join(x.split("/", 1)[1] for x in ev["excluded"]) or "—"
    return f"═ formation: {tiles}   left out: {left}   → {ev['verdict'].upper()}"


SHOWS: dict[str, Callable[[Mapping[str, Any]], str]] = {"formation": _formation}
