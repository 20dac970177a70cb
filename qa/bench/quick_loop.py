"""The fast test loop (``bash test.sh --quick``: pytest with ``--quick``, ``-n auto``'s
workers and conftest.py's selection) timed in this checkout and, with ``--before DIR``, in
another (``git archive main | tar -x -C DIR``) in the same run, one after the other:
the wall seconds, and the CPU seconds of pytest and its workers (user + system,
``RUSAGE_CHILDREN``), which a machine shared with other work blurs less.

    python -m qa.bench.quick_loop [--before DIR] [--durations N]

The other checkout runs on this one's interpreter with its own modules first on
the path (``PYTHONPATH``), so only the code and the tests differ.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from qa.bench.stats import ROOT


def run(root: Path, durations: int) -> dict[str, Any]:
    compileall.compile_dir(str(root), quiet=2, workers=1)  # each checkout's bytecode made before, not timed
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    if root != ROOT:
        env["PYTHONPATH"] = str(root)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", os.environ.get("TEST_WORKERS", "auto"),
                           "--dist", "loadfile", "--quick", "-q", "-p", "no:cacheprovider",
                           f"--durations={durations}"], cwd=root, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = done.stdout.splitlines()
    return {"checkout": str(root), "rc": done.returncode, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "slowest": [line for line in tail if line[:1].isdigit() and "s " in line][:durations],
            "summary": next((line for line in reversed(tail) if "passed" in line or "failed" in line), "")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout, run first")
    parser.add_argument("--durations", type=int, default=30)
    args = parser.parse_args()
    runs = ([run(args.before.resolve(), args.durations)] if args.before else []) + [run(ROOT, args.durations)]
    print(f"{'checkout':40} {'wall s':>8} {'CPU s':>8}  rc")
    for r in runs:
        print(f"{r['checkout']:40} {r['wall_s']:8.1f} {r['cpu_s']:8.1f}  {r['rc']}  {r['summary']}")
    for r in runs:
        print(f"\nslowest in {r['checkout']}:")
        print("\n".join(r["slowest"]))
    return max(r["rc"] for r in runs)


if __name__ == "__main__":
    sys.exit(main())
