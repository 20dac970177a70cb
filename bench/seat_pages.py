"""What the seats' pages cost the table loop (issue 12): after every input the
loop rebuilds the read side, and each seat's private page is now also its
lines, rendered in the table's language (``TableLoop._private``).  This times
that rebuild through whole games of Demagogos' Trap (10 players: the most
seats, the most lines) and Madness Hour, with the lines and without (the read
side as it was: view and legal only), in both languages, interleaved.

    python bench/seat_pages.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ("demagogos/10p.yaml", "demagogos/6p.yaml", "madness-hour.yaml")


def rebuild_times(script: str, lang: str, lines: bool) -> list[float]:
    """Seconds each read-side rebuild took, over one whole game."""
    from companion.app import config
    from companion.app.simulate import Simulation, load_script
    from companion.runtime import loop as loopmod

    s = load_script(ROOT / "examples" / script)
    cfg = config.load([ROOT / "config" / "companion.yaml"], {**s.overrides, "language": lang})
    with tempfile.TemporaryDirectory() as state:
        sim = Simulation(cfg, Path(state), lambda e: None, draws=s.draws)
        loop = sim.loop
        times: list[float] = []
        if not lines:  # the read side before the pages had lines
            def bare(seat: str) -> dict[str, Any]:
                return {**loop.table.private_view(seat), "legal": loopmod._legal_json(loop.table.legal(seat))}
            loop._private = bare  # type: ignore[method-assign]
        timed = loop._refresh_read_side

        def refresh() -> None:
            started = time.perf_counter()
            timed()
            times.append(time.perf_counter() - started)
        loop._refresh_read_side = refresh  # type: ignore[method-assign]
        for _, kind, value in s.steps:
            sim.step(kind, value)
        sim.close()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="whole games per row (default 5)")
    args = parser.parse_args(argv)
    print(f"read-side rebuild per input, µs (median of {args.runs} whole games; p99 over them)")
    print(f"{'game':<20} {'lang':<4} {'inputs':>6} {'without lines':>14} {'with lines':>11} {'p99 with':>9}")
    for script in SCRIPTS:
        for lang in ("en", "ja"):
            runs: dict[bool, list[float]] = {False: [], True: []}
            every: list[float] = []
            n = 0
            for _ in range(args.runs):
                for lines in (False, True):  # interleaved: the machine is shared
                    t = rebuild_times(script, lang, lines)
                    runs[lines].append(statistics.median(t))
                    if lines:
                        every += t
                        n = len(t)
            p99 = sorted(every)[int(len(every) * 0.99) - 1]
            print(f"{script:<20} {lang:<4} {n:>6} {statistics.median(runs[False]) * 1e6:>14.0f} "
                  f"{statistics.median(runs[True]) * 1e6:>11.0f} {p99 * 1e6:>9.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
