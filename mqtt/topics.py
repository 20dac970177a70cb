"""What the table publishes, as topics and payloads (docs/integrate/mqtt.md): pure
functions of the table's public view, so the venue, Home Assistant and the
tests can read what they mean without a broker."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from companion.core.wire import MAX_PAYLOAD as MAX_PAYLOAD  # the wire's, written once
from companion.core.wire import topic as topic

QOS = 1
ONLINE, OFFLINE = b"online", b"offline"
COMMANDS = frozenset({"next", "back", "repeat"})


def state(view: Mapping[str, Any], table_id: str, night: bool = False) -> dict[str, Any]:
    """The retained ``state`` from the table's public view (``Table.public_view``,
    as ``GET /api/table`` has it): the game, the step, whom it waits for (by
    name, as the public page shows them), the round, the totals, the running
    timer's deadline.  By night the same message for any deal: the step is
    "night", nobody is waited for, no deadline, the totals as they were."""
    play = view.get("play") or {}
    headline = view.get("headline") or {}
    night = bool(headline.get("night", night))
    names = {s["id"]: s["name"] for s in view.get("seats", ())}
    if headline:
        step = headline.get("step")
        waiting = [names.get(s, s) for s in headline.get("waiting_for") or ()]
        deadline = headline.get("deadline")
    else:  # a table without a headline: the engine's step and whose turn, else the table's phase
        step = play.get("step") if view.get("play") is not None else view.get("phase")
        waiting = list(play.get("whose_turn") or ())
        deadline = None
    game = view.get("game")
    totals = play.get("totals")
    if totals is None and game is not None:
        totals = (view.get("tonight") or {}).get(game)
    out = {"table": table_id, "game": game, "step": step, "waiting_for": waiting,
           "round": play.get("round") if isinstance(play.get("round"), int) else None,
           "totals": {str(k): int(v) for k, v in (totals or {}).items()},
           "deadline": float(deadline) if isinstance(deadline, (int, float)) else None,
           "night": night, "lang": view.get("lang", "en"), "online": True}
    if night:  # nothing by night may differ between two deals
        out.update(step="night", waiting_for=[], deadline=None)
    return out


def encode(data: Mapping[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def command(payload: bytes) -> str | None:
    """A ``command`` payload as the button it names, or None (ignored)."""
    try:
        text = payload.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    return text if text in COMMANDS else None
