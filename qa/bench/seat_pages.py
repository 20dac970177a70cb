"""What the seats' pages cost the table loop: after every input the
loop rebuilds the read side, and each seat's private page is now also its
lines, rendered in the table's language (``runtime.pages``, for the seats whose
pages are watched: in a simulation every seat).  This times
that rebuild through whole games of Demagogos' Trap (10 players: the most
seats, the most lines) and Madness Hour, in both languages: as the loop
reports it (its ``read_side`` observer stage), and, for comparison, the
views and forms alone (no lines), built by the observer from the same table
after each rebuild.  The bench watches the loop; it changes nothing in it.

    python qa/bench/seat_pages.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ("demagogos/10p.yaml", "demagogos/6p.yaml", "madness-hour.yaml")


def rebuild_times(script: str, lang: str) -> tuple[list[float], list[float]]:
    """Seconds each read-side rebuild took over one whole game, and seconds
    the same snapshots without lines (views and forms only) take."""
    from companion.app import config
    from companion.app.simulate import Simulation, load_script
    from companion.runtime.pages import legal_json

    (path,) = ROOT.glob(f"companion/games/*/examples/{script}")  # a game's scripts are in its folder
    s = load_script(path)
    cfg = config.load([ROOT / "config" / "companion.yaml"], {**s.overrides, "language": lang})
    with tempfile.TemporaryDirectory() as state:
        sim = Simulation(cfg, Path(state), lambda e: None, draws=s.draws)
        table = sim.loop.table
        lines: list[float] = []
        bare: list[float] = []

        def observe(stage: str, item: Any, seconds: Any) -> None:
            if stage != "read_side":
                return
            lines.append(seconds)
            started = time.perf_counter()  # the read side before the pages had lines
            {**table.public_view(), "legal": legal_json(table.legal(None))}  # noqa: B018
            {seat: {**table.private_view(seat), "legal": legal_json(table.legal(seat))}  # noqa: B018
             for seat in table.state.seats}
            bare.append(time.perf_counter() - started)

        sim.loop.observers.append(observe)
        for _, kind, value in s.steps:
            sim.step(kind, value)
        sim.close()
    return lines, bare


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
                with_lines, without = rebuild_times(script, lang)  # one game, both: the machine is shared
                runs[True].append(statistics.median(with_lines))
                runs[False].append(statistics.median(without))
                every += with_lines
                n = len(with_lines)
            p99 = sorted(every)[int(len(every) * 0.99) - 1]
            print(f"{script:<20} {lang:<4} {n:>6} {statistics.median(runs[False]) * 1e6:>14.0f} "
                  f"{statistics.median(runs[True]) * 1e6:>11.0f} {p99 * 1e6:>9.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
