"""How the readable log (``companion/app/pretty.py``) shows Madness Hour's own events."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def _result(ev: Mapping[str, Any]) -> str:
    girl = "human" if ev["girl"] == "human" else "the evil god"
    return (f"★ the Girl was {girl}, {'alive' if ev['girl_alive'] else 'dead'}; "
            f"dead: {', '.join(ev['dead']) or 'nobody'} — winners: {', '.join(ev['winners']) or 'nobody'}")


SHOWS: dict[str, Callable[[Mapping[str, Any]], str]] = {"mh_result": _result}
