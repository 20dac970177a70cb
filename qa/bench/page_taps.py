"""A tap until the phones show it: a live table (real clock, simulated reader)
with N phones paired by their pages (Playwright driving Debian's chromium at
360×740), each page timing the moment its ``render()`` of the tap's snapshot is
done and laid out (the layout forced, as the next frame would), against the
moment the tap was posted from one of them (the virtual reader, as the page
posts it).  Two kinds, apart:

- ``ingame``: a Seven Knights formation tile laid (one line of the board, the
  headline, the log), each taken back with ``back`` before the next (untimed);
- ``lang``: a language card, which redraws the whole page in the other language.

Every phone's time counts: p50 / p99 over taps × phones.  ``--before DIR`` runs
another checkout (main's) too, in the same run, each tree in its own process,
interleaved round by round, so the two stand side by side in the same minutes.

    python qa/bench/page_taps.py [--taps N] [--phones N] [--rounds N] [--before DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
PHONE = {"width": 360, "height": 740}
SEATS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")
KINDS = ("ingame", "lang")
PARTS = ("script", "layout")  # the page's own share of a tap's time
WARM = 3  # the first taps load each language's lines and warm the page: not timed

# Each phone notes, after the page's own listener has drawn a snapshot, when it was laid out.
# Also what the page's own script took to draw it (``render``) and the layout after it.
HOOK = """() => { window.benchSeen = []; let drew = 0; const draw = render;
  render = function () { const t = performance.now(); draw(); drew += performance.now() - t; };
  source.addEventListener('table', () => { const t = performance.now(); document.body.offsetHeight;
    const now = performance.now();
    window.benchSeen.push([state.version, performance.timeOrigin + now, drew, now - t]); drew = 0; }); }"""
TAP = """async (identity) => { const t0 = performance.timeOrigin + performance.now();
  await fetch('/api/virtual/tap', { method: 'POST', headers: { 'Content-Type': 'application/json',
    'X-CSRF-Token': CSRF }, body: JSON.stringify({ identity }) });
  return t0; }"""
SEEN = "(v) => window.benchSeen.some(([x]) => x > v)"
WHEN = "(v) => window.benchSeen.find(([x]) => x > v).slice(1)"


def missing() -> str | None:
    """What this bench needs and this machine lacks, said; None: nothing."""
    if not Path(CHROMIUM).exists():
        return f"no chromium at {CHROMIUM} (apt install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed: pip install '.[test]'"
    return None


def _p(xs: list[float], q: float) -> float:
    return sorted(xs)[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def summary(times: dict[str, list[float]]) -> dict[str, float]:
    return {f"{kind}_{name}": f(times[kind]) for kind in (*KINDS, *(f"{k}_{part}" for k in KINDS for part in PARTS))
            if kind in times for name, f in (("p50", statistics.median), ("p99", lambda xs: _p(xs, 0.99)))}


def play(taps: int, phones: int) -> dict[str, list[float]]:
    """ms from each tap to each phone's page drawn, per kind (this process's checkout)."""
    from playwright.sync_api import sync_playwright

    from companion.app.live_table import LiveTable

    seats = SEATS[:max(phones, 5)]  # Seven Knights seats five or more
    with tempfile.TemporaryDirectory(prefix="bench-taps-") as tmp, sync_playwright() as p:
        live = LiveTable(Path(tmp), web={"pair_window_s": 10})
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            live.tap("game/seven-knights", *(f"player/{s}" for s in seats))
            pages = []
            for seat in seats[:phones]:
                page = browser.new_context(viewport=PHONE).new_page()
                page.goto(live.url + "/")
                page.wait_for_selector(f"#seats button[data-seat={seat}]")
                page.click(f"#seats button[data-seat={seat}]")
                live.await_pairing(seat)
                live.tap(f"player/{seat}")
                page.wait_for_selector("#me:not([hidden])")
                page.evaluate(HOOK)
                pages.append(page)
            live.press("next", "next", "next", "next")  # the quest, the questions, no election: the command
            live.tap("skb/knight/2")  # the captain's tile: the formation is laid next

            def settled() -> int:  # every page holds the table's latest snapshot
                time.sleep(0.05)
                live.settle()
                v = live.web.public_version
                for page in pages:
                    page.wait_for_function(f"() => window.benchSeen.length === 0 || state.version >= {v}")
                return v

            def timed(identity: str) -> list[float]:
                v = settled()
                t0 = pages[0].evaluate(TAP, identity)
                out = []
                for page in pages:
                    page.wait_for_function(SEEN, arg=v, timeout=5000)
                    done, drew, laid = page.evaluate(WHEN, v)
                    out.append(done - t0)
                    parts[identity[:4]][0].append(drew)
                    parts[identity[:4]][1].append(laid)
                return out

            times: dict[str, list[float]] = {k: [] for k in KINDS}
            parts: dict[str, tuple[list[float], list[float]]] = {"skb/": ([], []), "lang": ([], [])}
            langs = ("lang/ja", "lang/en")
            for i in range(-WARM, taps):
                tile = timed("skb/knight/1")
                live.press("back")  # the tile taken back: the next tap lays it again
                lang = timed(langs[(i + WARM) % 2])  # ja first: the table starts in English
                if i >= 0:
                    times["ingame"] += tile
                    times["lang"] += lang
            # the page's own share: its script drawing the snapshot, and the layout after it
            for kind, prefix in zip(KINDS, parts, strict=True):
                n = WARM * len(pages)
                times[f"{kind}_script"], times[f"{kind}_layout"] = (xs[n:] for xs in parts[prefix])
            return times
        finally:
            browser.close()
            live.close()


def run_tree(tree: Path, taps: int, phones: int) -> dict[str, list[float]]:
    """``play`` in a process of its own, its code from ``tree`` (this script's own)."""
    done = subprocess.run([sys.executable, __file__, "--worker", str(tree), "--taps", str(taps),
                           "--phones", str(phones)], capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(f"page taps in {tree}: {done.stderr[-2000:]}")
    result: dict[str, list[float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(taps: int, phones: int, rounds: int, before: Path | None = None) -> dict[str, Any]:
    """Per tree ("after": this one, "before": ``before``), the rounds' summaries, interleaved."""
    trees = {"after": ROOT, **({"before": before} if before else {})}
    load = [os.getloadavg()[0]]
    out: dict[str, Any] = {name: [] for name in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            out[name].append(summary(run_tree(tree, taps, phones)))
    load.append(os.getloadavg()[0])
    return {**out, "load": load, "taps": taps, "phones": phones}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taps", type=int, default=100, help="taps of each kind a round (default 100)")
    parser.add_argument("--phones", type=int, default=5, help="phones paired, 1–8 (default 5)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, each tree once a round (default 2)")
    parser.add_argument("--before", type=Path, help="another checkout, timed in the same run")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)  # one tree's run, JSON out
    args = parser.parse_args(argv)
    if args.worker:
        sys.path.insert(0, str(args.worker.resolve()))  # its companion and web, ahead of this one's
        print(json.dumps(play(args.taps, args.phones)))
        return 0
    r = measure(args.taps, args.phones, args.rounds, args.before)
    print(f"tap → page drawn, ms: {args.phones} phones × {args.taps} taps of each kind a round, "
          f"load average {r['load'][0]:.1f} → {r['load'][1]:.1f}")
    for name in ("before", "after"):
        for i, s in enumerate(r.get(name, [])):
            print(f"{name:6} round {i + 1}: " + "  ".join(
                f"{kind} p50 {s[kind + '_p50']:.1f} p99 {s[kind + '_p99']:.1f}"
                for kind in (*KINDS, *(f"{k}_{part}" for k in KINDS for part in PARTS)) if kind + "_p50" in s))
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
