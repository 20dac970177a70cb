"""The venue's cost per late play: ``SEASON`` plays kept, then plays that
"ended earlier" (a table back from a break sends what it finished) arriving
one by one, each followed by one answer of the board's league — what a page
asks after every play.  Prints the ms per late play (the league's answer) and
per play in order, so the two can be compared in one run.

    python -m qa.bench.venue_league [--season=3000] [--late=20]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from qa.bench.stats import percentile

SEASON, LATE = 3000, 20


def _play(n: int, minute: int) -> Any:
    from venue import schema

    names = [f"p{(n * 7 + k) % 97}" for k in range(4)]
    players = [{"name": name, "seat": seat, "score": 0, "winner": k < 2, "team": "a" if k < 2 else "b", "place": None}
               for k, (name, seat) in enumerate(zip(names, ("red", "blue", "green", "yellow"), strict=True))]
    record = {"rules": [], "playDate": "2026-01-01 19:00:00", "durationMin": minute, "players": [
        {"name": p["name"], "score": 0, "winner": p["winner"], "startPlayer": False, "sourcePlayerId": p["seat"]}
        for p in players]}
    checked = schema.check(f"companion/t{n % 9}/play", json.dumps(
        {"id": f"t{n % 9}/p/{n}", "table": f"t{n % 9}", "game": "one-night", "evening": 1, "play": record,
         "players": players}).encode())
    assert isinstance(checked, schema.Play), checked
    return checked


def measure(season: int = SEASON, late: int = LATE) -> dict[str, Any]:
    from venue.app import Venue

    with tempfile.TemporaryDirectory(prefix="bench-venue-league-") as d:
        v = Venue(Path(d), ("127.0.0.1", 1), None, since=0.0, report=lambda line: None)
        try:
            for n in range(season):
                v.store.apply(_play(n, 10 + 2 * n), 1.0)
            t0 = time.perf_counter()
            v.league()
            first = (time.perf_counter() - t0) * 1000
            in_order, late_ms = [], []
            for i in range(late):
                v.store.apply(_play(season + i, 10 + 2 * (season + i)), 1.0)  # ended last: in order
                t0 = time.perf_counter()
                v.league()
                in_order.append((time.perf_counter() - t0) * 1000)
            for i in range(late):  # ended a few plays before the last: late
                v.store.apply(_play(season + late + i, 10 + 2 * (season + late) - 9), 1.0)
                t0 = time.perf_counter()
                v.league()
                late_ms.append((time.perf_counter() - t0) * 1000)
        finally:
            v.store.close()
    return {"season": season, "late": late, "league_first_ms": round(first, 1),
            "league_after_play_in_order_p50_ms": round(percentile(in_order, 50), 2),
            "league_after_late_play_p50_ms": round(percentile(late_ms, 50), 2),
            "league_after_late_play_max_ms": round(max(late_ms), 2)}


if __name__ == "__main__":
    args = dict(a[2:].split("=") for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    r = measure(int(args.get("season", SEASON)), int(args.get("late", LATE)))
    width = max(len(k) for k in r)
    for k, val in r.items():
        print(f"{k:<{width}}  {val}")
