"""The event log as a person reads it: the table's own events here, each
game's through its engine's ``shows`` (companion/games/<game>/show.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import companion.games
from companion.core.engine import Engine
from companion.core.tags import printable


def _scores(d: Mapping[str, int]) -> str:
    return "  ".join(f"{p} {n}" for p, n in d.items())


Shows = Mapping[str, Callable[[Mapping[str, Any]], str]]


def game_shows(games: Iterable[type[Engine]] | None = None) -> dict[str, Callable[[Mapping[str, Any]], str]]:
    """Every game's event renderers, by event name (``games``: default ``GAMES`` as it is now)."""
    return {kind: show for g in (companion.games.GAMES if games is None else games) for kind, show in g.shows.items()}


def render(ev: Mapping[str, Any], shows: Shows | None = None, lang: str = "en") -> str:
    """One event as one line or a small block (empty string: nothing to show);
    a game's own event as its game shows it (``shows``: event → line; default
    every game's in ``GAMES``).  ``lang``: the table's; a refusal's English
    reason (the log's, for whoever reads the code) is shown at an English table only."""
    shows = game_shows() if shows is None else shows  # GAMES as it is now (a few dozen entries)
    ev = {k: printable(v) if isinstance(v, str) else v for k, v in ev.items()}  # tag text is anyone's
    t = f"{ev['t']:8.1f}s"
    kind = ev["event"]
    if kind == "say":
        return f"{t}  🔊 {ev['text']}"
    if kind == "accepted":
        return f"{t}  ✓ {ev['input']}"
    if kind == "rejected":
        if lang == "en":
            return f"{t}  ✗ {ev['input']} — {ev['reason']}"
        # elsewhere the refusal as its page showed it (``text``, in the table's language); one the
        # room heard is the next line (🔊), and one by night is silent, in the log as at the table
        return f"{t}  ✗ {ev['input']}" + (f" — {ev['text']}" if ev.get("text") else "")
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
