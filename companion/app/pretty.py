"""The event log as a person reads it: the table's own events here, each
game's through its engine's ``shows`` (companion/games/<game>/show.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from companion.core.engine import Engine
from companion.core.tags import printable
from companion.games import GAMES


def _scores(d: Mapping[str, int]) -> str:
    return "  ".join(f"{p} {n}" for p, n in d.items())


def game_shows(games: Iterable[type[Engine]] = GAMES) -> dict[str, Callable[[Mapping[str, Any]], str]]:
    """Every game's event renderers, by event name."""
    return {kind: show for g in games for kind, show in g.shows.items()}


_GAME_SHOWS = game_shows()


def render(ev: Mapping[str, Any], shows: Mapping[str, Callable[[Mapping[str, Any]], str]] = _GAME_SHOWS) -> str:
    """One event as one line or a small block (empty string: nothing to show);
    a game's own event as its game shows it (``shows``: event → line)."""
    ev = {k: printable(v) if isinstance(v, str) else v for k, v in ev.items()}  # tag text is anyone's
    t = f"{ev['t']:8.1f}s"
    kind = ev["event"]
    if kind == "say":
        return f"{t}  🔊 {ev['text']}"
    if kind == "accepted":
        return f"{t}  ✓ {ev['input']}"
    if kind == "rejected":
        return f"{t}  ✗ {ev['input']} — {ev['reason']}"
    if kind in shows:
        return f"{t}  {shows[kind](ev)}"
    if kind == "round_scored":
        return (f"{t}  ═ round {ev['round']} points: {_scores(ev['points'])}\n"
                f"{'':10}  ═ totals:         {_scores(ev['totals'])}")
    if kind == "game_over":
        return f"{t}  ★ game over — winners: {', '.join(ev['winners'])}   ({_scores(ev['totals'])})"
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
