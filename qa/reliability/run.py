#!/usr/bin/env python3
"""The long reliability campaign.

    python qa/reliability/run.py [--runs N] [--seed S] [--jobs J] [--max-kills K] [--keep DIR] [--fuzz N]
                              [--power-cuts N] [--damages N] [--recovery-kills N]

Each run generates a random table script (Seven Knights in any rule set and
player count, One Night with a fast night, wrong taps mixed in), plays it on
the real daemon (``companion run --simulate --json``), SIGKILLs it at random
instants — mid-command, mid-night, mid-replay — restarts it on the same state
directory, finishes the script and compares with an uninterrupted run (see
``qa/reliability/crash.py`` for every check).  Prints one line per failing run
and a summary table; the exit code is 1 if anything was lost, doubled or
different.  Run ``i`` uses seed ``S + i``, so a failure is replayed with
``--runs 1 --seed <its seed>``.  ``--fuzz N`` then runs the fuzz invariants
(``qa/reliability/fuzz.py``, with liveness) over 2N seeded scripts in process.
``--power-cuts N``: N power cuts below SQLite through a crash-simulating VFS
(``qa/reliability/powercut.py``; needs APSW: ``pip install .[reliability]``).
``--damages N``: N random damages of the journal, its WAL and its backups
(``qa/reliability/corruption.py``).  ``--recovery-kills N``: N damages each
recovered by a start killed at every file step in turn
(``qa/reliability/recovery_kills.py``).  ``--sticks N``: N runs of each way the
journal mirror's USB stick goes (``qa/reliability/sticks.py``).  ``--runs 0`` skips the SIGKILL campaign.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The daemon and the reference runs need the project's packages: use the venv's python.
_VENV = ROOT / ".venv"
if (_VENV / "bin" / "python").exists() and Path(sys.prefix).resolve() != _VENV.resolve():
    os.execv(str(_VENV / "bin" / "python"), [str(_VENV / "bin" / "python"), *sys.argv])

from qa.reliability.crash import CrashResult, crash_run  # noqa: E402
from qa.reliability.fuzz import check, mutated_script, random_script  # noqa: E402
from qa.reliability.inproc import load_config  # noqa: E402


def table(rows: list[tuple[str, str]]) -> str:
    width = max(len(k) for k, _ in rows)
    vwidth = max(len(v) for _, v in rows)
    line = f"+-{'-' * width}-+-{'-' * vwidth}-+"
    out = [line] + [f"| {k:<{width}} | {v:>{vwidth}} |" for k, v in rows] + [line]
    return "\n".join(out)


def summary(results: list[CrashResult], seconds: float) -> list[tuple[str, str]]:
    return [
        ("runs", str(len(results))),
        ("kills", str(sum(r.kills for r in results))),
        ("inputs checked", str(sum(r.checked for r in results))),
        ("lost", str(sum(r.lost for r in results))),
        ("doubled", str(sum(r.doubled for r in results))),
        ("mismatches", str(sum(r.mismatches for r in results))),
        ("failed runs", str(sum(not r.ok for r in results))),
        ("games finished", str(sum(len(r.games) for r in results))),
        ("time", f"{seconds:.0f} s"),
    ]


def fuzz(n: int, seed: int) -> int:
    """``n`` random scripts and ``n`` mutated whole games through every
    invariant of ``qa.reliability.fuzz`` (liveness too); prints its own table."""
    cfg = load_config()
    t0 = time.monotonic()
    failures: dict[str, list[int]] = {}
    steps = 0
    for i in range(2 * n):
        s = seed + i // 2
        script = random_script(s) if i % 2 == 0 else mutated_script(s)
        steps += len(script)
        with tempfile.TemporaryDirectory(prefix="companion-fuzz-") as tmp:
            try:
                check(script, Path(tmp), cfg, liveness=True)
            except AssertionError as e:
                first = str(e).splitlines()[0]
                what = first.split(": ", 1)[1] if ": " in first else first
                failures.setdefault(f"{'random' if i % 2 == 0 else 'mutated'}: {what[:110]}", []).append(s)
    print(table([("fuzz scripts", str(2 * n)), ("steps", str(steps)),
                 ("failed scripts", str(sum(len(v) for v in failures.values()))),
                 ("time", f"{time.monotonic() - t0:.0f} s")]))
    for what, seeds in sorted(failures.items()):
        print(f"  {len(seeds):>3} × {what}  (seeds {', '.join(map(str, seeds[:5]))})")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=300)
    p.add_argument("--seed", type=int, default=None, help="first seed (default: from the clock)")
    p.add_argument("--jobs", type=int, default=4, help="runs at once (they mostly wait on the daemon)")
    p.add_argument("--max-kills", type=int, default=2, help="SIGKILLs per run: 1..K")
    p.add_argument("--keep", type=Path, default=None, help="write failing scripts here (default: a temp dir)")
    p.add_argument("--quiet", action="store_true", help="no progress line per run")
    p.add_argument("--fuzz", type=int, default=0, metavar="N",
                   help="then N random + N mutated scripts through the fuzz invariants (in process)")
    p.add_argument("--power-cuts", type=int, default=0, metavar="N",
                   help="then N power cuts below SQLite (crash-simulating VFS; needs apsw)")
    p.add_argument("--damages", type=int, default=0, metavar="N",
                   help="then N random damages of journal, WAL and backups")
    p.add_argument("--recovery-kills", type=int, default=0, metavar="N",
                   help="then N damages, each recovered by a start killed at every file step in turn")
    p.add_argument("--sticks", type=int, default=0, metavar="N",
                   help="then N runs of each way a mirror's USB stick goes (foreign, shared, torn, full, hung, …)")
    p.add_argument("--mqtt-runs", type=int, default=0, metavar="N",
                   help="then N scripts on a real mosquitto, broker and daemon SIGKILLed at random (needs mosquitto)")
    p.add_argument("--mqtt-cuts", type=int, default=0, metavar="N",
                   help="with --mqtt-runs: and N power cuts with the broker away, then every play delivered")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time()) % 100000
    failed = 0
    if args.runs:
        failed |= crash_campaign(args, seed)
    if args.fuzz:
        failed |= fuzz(args.fuzz, seed)
    if args.power_cuts:
        failed |= power_cuts(args.power_cuts, seed, args.quiet)
    if args.damages:
        failed |= damages(args.damages, seed, args.quiet)
    if args.recovery_kills:
        failed |= recovery_kills(args.recovery_kills, seed, args.quiet)
    if args.sticks:
        failed |= sticks(args.sticks, seed, args.quiet)
    if args.mqtt_runs or args.mqtt_cuts:
        failed |= mqtt(args.mqtt_runs, args.mqtt_cuts, seed, args.quiet)
    return failed


def sticks(n: int, seed: int, quiet: bool) -> int:
    from qa.reliability import sticks as stick_kinds

    print(f"stick campaign: {n} runs of each of {', '.join(stick_kinds.KINDS)} from seed {seed}", flush=True)
    results = _run(lambda show: stick_kinds.campaign(n, seed, progress=show), stick_kinds.summary,
                   lambda r: f"seed {r.seed:<6} {r.kind:<9} {r.line()}",
                   lambda r: f"seed {r.seed} {r.kind}: {r.line()}", quiet)
    return 1 if any(not r.ok for r in results) else 0


def mqtt(runs: int, cuts: int, seed: int, quiet: bool) -> int:
    from qa.reliability import mqtt_faults
    from qa.reliability.broker import MOSQUITTO

    if MOSQUITTO is None:
        print("mqtt: mosquitto is not installed (apt install mosquitto)")
        return 1
    print(f"MQTT fault campaign: {runs} runs with kills and {cuts} power cuts from seed {seed}", flush=True)
    results = _run(lambda show: mqtt_faults.campaign(runs, cuts, seed, progress=show), mqtt_faults.summary,
                   lambda r: f"seed {r.seed:<6} {'cut' if r.power_cut else 'kills'}: {r.finished} finished, "
                             f"{r.received} received, broker killed {r.broker_kills}, daemon {r.daemon_kills}, "
                             f"{r.repeats} repeats dropped",
                   lambda r: f"seed {r.seed} ({'cut' if r.power_cut else 'kills'})", quiet)
    return 1 if any(not r.ok for r in results) else 0


def _run(results_of: Any, summary: Any, ok_line: Any, fail_line: Any, quiet: bool) -> list[Any]:
    """One of the in-process campaigns: a line per run (failures always), then its table."""
    def show(r: Any) -> None:
        if not r.ok:
            print(f"FAIL {fail_line(r)}: " + "; ".join(r.problems[:3]), flush=True)
        elif not quiet:
            print(f"  {ok_line(r)}", flush=True)

    results, seconds = results_of(show)
    print(table(summary(results, seconds)))
    return list(results)


def power_cuts(n: int, seed: int, quiet: bool) -> int:
    from qa.reliability import powercut

    if not powercut.available():
        print("power cuts: APSW is not installed (pip install .[reliability])")
        return 1
    print(f"power-cut campaign: {n} cuts from seed {seed}", flush=True)
    results = _run(lambda show: powercut.campaign(n, seed, progress=show), powercut.summary,
                   lambda r: f"script {r.seed} cut at op {r.cut_after:>4}: {r.acknowledged:>3} acknowledged, "
                             f"torn {r.torn} B",
                   lambda r: f"script {r.seed} cut at op {r.cut_after}", quiet)
    return 1 if any(not r.ok for r in results) else 0


def damages(n: int, seed: int, quiet: bool) -> int:
    from qa.reliability import corruption

    print(f"corruption campaign: {n} damages from seed {seed}", flush=True)
    results = _run(lambda show: corruption.campaign(n, seed, progress=show), corruption.summary,
                   lambda r: f"seed {r.seed:<6} {r.target:<14} {r.kind:<13} {r.inputs:>3} inputs, "
                             f"{r.recovered:>3} after, {'reported' if r.reported else 'nothing to say'}",
                   lambda r: f"seed {r.seed} {r.target} / {r.kind}", quiet)
    kinds = Counter((r.target, r.kind) for r in results)
    print("  damages done: " + ", ".join(f"{t} / {k} {c}" for (t, k), c in sorted(kinds.items())))
    return 1 if any(not r.ok for r in results) else 0


def recovery_kills(n: int, seed: int, quiet: bool) -> int:
    from qa.reliability import recovery_kills as kills

    print(f"kill campaign during recovery: {n} damages from seed {seed}", flush=True)
    results = _run(lambda show: kills.campaign(n, seed, progress=show), kills.summary,
                   lambda r: f"seed {r.seed:<6} {r.target:<14} {r.kind:<13} "
                             + (f"{r.kills:>3} kills, {r.inputs:>3} inputs each time" if r.recovered
                                else "no recovery to kill"),
                   lambda r: f"seed {r.seed} {r.target} / {r.kind}", quiet)
    return 1 if any(not r.ok for r in results) else 0


def crash_campaign(args: argparse.Namespace, seed: int) -> int:
    keep = args.keep or Path(tempfile.mkdtemp(prefix="companion-reliability-"))
    print(f"crash campaign: {args.runs} runs from seed {seed}, {args.jobs} at a time", flush=True)
    t0 = time.monotonic()
    results: list[CrashResult] = []
    lock = threading.Lock()

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(crash_run, seed + i, max_kills=args.max_kills): seed + i for i in range(args.runs)}
        for fut in as_completed(futures):
            try:
                r = fut.result()
            except Exception as e:  # never lose the campaign to one run
                r = CrashResult(futures[fut], [], 0, problems=[f"{type(e).__name__}: {e}"])
            with lock:
                results.append(r)
                done = len(results)
            if not r.ok:
                keep.mkdir(parents=True, exist_ok=True)
                path = keep / f"seed-{r.seed}.yaml"
                path.write_text(r.script_yaml, encoding="utf-8")
                print(f"FAIL seed {r.seed} {'+'.join(r.games)}: lost {r.lost}, doubled {r.doubled}, "
                      f"mismatches {r.mismatches}; script {path}", flush=True)
                for prob in r.problems[:5]:
                    print(f"    {prob}", flush=True)
            elif not args.quiet:
                print(f"[{done:>4}/{args.runs}] seed {r.seed:<6} {'+'.join(r.games):<28} "
                      f"{r.steps:>3} steps, {r.kills} kills, {r.checked:>3} inputs ok ({r.seconds:.1f} s)",
                      flush=True)
    results.sort(key=lambda r: r.seed)
    print(table(summary(results, time.monotonic() - t0)))
    bad = [r for r in results if not r.ok]
    if bad:
        print(f"failing seeds: {', '.join(str(r.seed) for r in bad)} (scripts in {keep})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
