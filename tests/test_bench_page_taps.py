"""The phones' tap → page bench runs (``qa/bench/page_taps.py``): a live table,
phones paired by their pages in chromium, tiles laid and language cards, and
with ``--before`` a second tree timed in the same run, side by side.  Nothing
here is about how fast anything is: timings never fail a test."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from qa.bench import page_taps  # noqa: E402

pytestmark = pytest.mark.skipif(page_taps.missing() is not None, reason=str(page_taps.missing()))


def test_the_page_taps_bench_times_both_kinds_for_both_trees_in_one_run() -> None:
    # this tree as its own "before": the second tree's path, in its own process, is what is run
    done = subprocess.run([sys.executable, str(ROOT / "qa" / "bench" / "page_taps.py"), "--taps", "2",
                           "--phones", "2", "--rounds", "1", "--before", str(ROOT)],
                          capture_output=True, text=True, timeout=400, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    result = json.loads(lines[-1])
    for tree in ("before", "after"):
        (run,) = result[tree]
        for kind in ("ingame", "lang", "ingame_script", "ingame_layout", "lang_script", "lang_layout"):
            for q in ("p50", "p99"):
                value = run[f"{kind}_{q}"]
                assert isinstance(value, (int, float)) and math.isfinite(value) and value >= 0, (tree, kind, q, value)
        assert any(line.startswith(f"{tree:6} round 1: ingame p50 ") for line in lines), lines
    assert result["phones"] == 2 and result["taps"] == 2 and len(result["load"]) == 2
