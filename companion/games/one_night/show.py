"""How the readable log (``companion/app/pretty.py``) shows One Night's own events."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def _result(ev: Mapping[str, Any]) -> str:
    executed = ", ".join(ev["executed"]) or "nobody"
    return f"★ executed: {executed} — {ev['winning_team']} wins: {', '.join(ev['winners']) or 'nobody'}"


SHOWS: dict[str, Callable[[Mapping[str, Any]], str]] = {"onw_result": _result}
