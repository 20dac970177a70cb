"""The event log as a person reads it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.core.tags import printable


def _scores(d: Mapping[str, int]) -> str:
    return "  ".join(f"{p} {n}" for p, n in d.items())


def render(ev: Mapping[str, Any]) -> str:
    """One event as one line or a small block (empty string: nothing to show)."""
    ev = {k: printable(v) if isinstance(v, str) else v for k, v in ev.items()}  # tag text is anyone's
    t = f"{ev['t']:8.1f}s"
    kind = ev["event"]
    if kind == "say":
        return f"{t}  🔊 {ev['text']}"
    if kind == "accepted":
        return f"{t}  ✓ {ev['input']}"
    if kind == "rejected":
        return f"{t}  ✗ {ev['input']} — {ev['reason']}"
    if kind == "formation":
        tiles = " ".join(x.split("/", 1)[1] for x in ev["tiles"]) or "—"
        left = " ".join(x.split("/", 1)[1] for x in ev["excluded"]) or "—"
        return f"{t}  ═ formation: {tiles}   left out: {left}   → {ev['verdict'].upper()}"
    if kind == "round_scored":
        return (f"{t}  ═ round {ev['round']} points: {_scores(ev['points'])}\n"
                f"{'':10}  ═ totals:         {_scores(ev['totals'])}")
    if kind == "game_over":
        return f"{t}  ★ game over — winners: {', '.join(ev['winners'])}   ({_scores(ev['totals'])})"
    if kind == "onw_result":
        executed = ", ".join(ev["executed"]) or "nobody"
        return (f"{t}  ★ executed: {executed} — {ev['winning_team']} wins: "
                f"{', '.join(ev['winners']) or 'nobody'}")
    if kind == "mh_result":
        girl = "human" if ev["girl"] == "human" else "the evil god"
        return (f"{t}  ★ the Girl was {girl}, {'alive' if ev['girl_alive'] else 'dead'}; "
                f"dead: {', '.join(ev['dead']) or 'nobody'} — winners: {', '.join(ev['winners']) or 'nobody'}")
    if kind == "dt_box":
        voided = f", {ev['voided']} gems of treasure void" if ev.get("voided") else ""
        return f"{t}  ═ box {ev['box']}: {ev['content']} — {ev['player']} +{ev['gems']} gems{voided}"
    if kind == "dt_exit":
        return f"{t}  ★ {ev['player']} exits as a winner with {ev['vp']} VP — place {ev['place']}"
    if kind == "reader":
        return f"{t}  {'🔌' if ev['state'] == 'connected' else '⚠'} reader {ev['state']}"
    if kind == "error":
        return f"{t}  ⚠ {ev['message']}"
    if kind == "game_started":
        return f"{t}  ▶ {ev['game']} with {', '.join(ev['players'])}" + (
            f" ({', '.join(ev['rules'])})" if ev.get("rules") else "")
    if kind == "game_unstarted":
        return f"{t}  ◀ {ev['game']}: back to seating"
    return ""
