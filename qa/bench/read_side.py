"""What the pages cost the table loop per input: the read side
(the public board and the seats' pages) rebuilt after each accepted input,
with no page connected and with every seat's page connected, through whole
games of Demagogos' Trap for ten players (the most seats, the most lines),
in-process on virtual time, until ``--inputs`` inputs have been handled.

The read side's own time is the loop's ``read_side`` observer stage (its
info: the seconds the rebuild took); per input is the whole input, from the
``input`` stage to ``done``.  Seats' pages are "connected" the way the web
server tells the read side (``WatchedReadSide.watching``).

    python qa/bench/read_side.py [--inputs N] [--lang en|ja]
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
sys.path.insert(0, str(ROOT))
SCRIPT = ROOT / "companion" / "games" / "demagogos" / "examples" / "demagogos" / "10p.yaml"


def measure(inputs: int, lang: str, connected: bool) -> dict[str, Any]:
    from companion.app import config
    from companion.app.simulate import load_script

    s = load_script(SCRIPT)
    cfg = config.load([ROOT / "config" / "companion.yaml"], {**s.overrides, "language": lang})
    m: dict[str, Any] = {"rebuilds": [], "per_input": [], "pages": []}
    while len(m["per_input"]) < inputs:
        _one_game(s, cfg, connected, inputs, m)
    m["per_input"] = m["per_input"][:inputs]
    return m


def _one_game(s: Any, cfg: dict[str, Any], connected: bool, inputs: int, m: dict[str, Any]) -> None:
    from companion.app.simulate import Simulation
    from web.live import WatchedReadSide

    with tempfile.TemporaryDirectory() as state:
        read_side = WatchedReadSide()
        sim = Simulation(cfg, Path(state), lambda e: None, draws=s.draws, read_side=read_side)
        loop = sim.loop
        if connected:  # every seat's phone paired: the web server watches them all
            read_side.watching = lambda: set(loop.table.state.seats)
        began: list[float] = []

        def observe(stage: str, item: Any, info: Any) -> None:
            if stage == "input":
                began.append(time.perf_counter())
            elif stage == "read_side":
                m["rebuilds"].append(float(info))
                m["pages"].append(len(read_side._snapshot[2]))
            elif stage == "done" and began:
                m["per_input"].append(time.perf_counter() - began.pop())
        loop.observers.append(observe)
        for _, kind, value in s.steps:
            sim.step(kind, value)
            if len(m["per_input"]) >= inputs:
                break
        sim.close()


def _us(xs: list[float], q: float | None = None) -> str:
    if not xs:
        return "-"
    if q is None:
        return f"{statistics.median(xs) * 1e6:.0f}"
    return f"{sorted(xs)[max(0, int(len(xs) * q) - 1)] * 1e6:.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=2_000, help="inputs per row (default 2000)")
    parser.add_argument("--lang", choices=("en", "ja"), default="en")
    args = parser.parse_args(argv)
    print(f"Demagogos' Trap, 10 players, {args.lang}: {args.inputs} inputs per row, µs")
    print(f"{'pages connected':<16} {'rebuild med':>11} {'rebuild p99':>11} {'pages/rebuild':>13} "
          f"{'input med':>9} {'input p99':>9}")
    for connected in (False, True):
        m = measure(args.inputs, args.lang, connected)
        mean_pages = statistics.mean(m["pages"]) if m["pages"] else 0.0
        print(f"{'all (10)' if connected else 'none':<16} {_us(m['rebuilds']):>11} {_us(m['rebuilds'], 0.99):>11} "
              f"{mean_pages:>13.1f} {_us(m['per_input']):>9} {_us(m['per_input'], 0.99):>9}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
