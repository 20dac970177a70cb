"""How the readable log (``companion/app/pretty.py``) shows Demagogos' own events."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def _box(ev: Mapping[str, Any]) -> str:
    voided = f", {ev['voided']} gems of treasure void" if ev.get("voided") else ""
    return f"═ box {ev['box']}: {ev['content']} — {ev['player']} +{ev['gems']} gems{voided}"


def _exit(ev: Mapping[str, Any]) -> str:
    return f"★ {ev['player']} exits as a winner with {ev['vp']} VP — place {ev['place']}"


SHOWS: dict[str, Callable[[Mapping[str, Any]], str]] = {"dt_box": _box, "dt_exit": _exit}
