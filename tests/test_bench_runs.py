"""The benchmark suite runs (``qa/bench/run.py --smoke --json``: every section at its
smallest) and ends with one JSON object holding every figure docs/develop/benchmarks.md
names.  Nothing here is about how fast anything is: timings never fail a test."""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KEYS = (
    "tap_feedback_p50_ms", "tap_feedback_p99_ms",
    "cue_audio_cached_ms", "cue_audio_live_ms", "cue_audio_ratio",
    "start_ready_s", "peak_rss_mb", "idle_cpu_pct",
    "resume_10k_s", "journal_bytes_per_game",
    "night_drift_p99_ms",
    "render_s_per_line_espeak", "worker_peak_rss_mb_espeak", "cache_mb_espeak", "cue_audio_live_ms_espeak",
    "night_drift_loaded_p99_ms",
    *(("tap_feedback_sd_p99_ms", "tap_feedback_sd_sync_ratio", "tap_feedback_sd_mirror_p99_ms")
      if importlib.util.find_spec("apsw") else ()),  # the modeled SD card
)

pytestmark = [
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)"),
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="the cue-audio figures need espeak-ng"),
]


def test_smoke_benchmarks_end_with_every_figure_as_json() -> None:
    # every section's code at its smallest counts and windows (--quick took 90–350 s); the
    # real-clock nights and the voice workers' start-ups are most of what is left; the
    # bound is for a hang, not a figure
    done = subprocess.run([sys.executable, str(ROOT / "qa" / "bench" / "run.py"), "--smoke", "--json"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    result = json.loads(lines[-1])
    assert isinstance(result, dict)
    for key in KEYS:
        value = result[key]
        assert isinstance(value, (int, float)) and not isinstance(value, bool), (key, value)
        assert math.isfinite(value) and value >= 0, (key, value)
    assert len(lines) > 1, "the table comes before the JSON line"


HIDE_HTTPX = """
import runpy, sys
sys.modules["httpx"] = None  # as after a plain `pip install .`: import httpx fails
sys.argv = ["run.py", "--quick", "--json", "--only", "web"]
runpy.run_path({run!r}, run_name="__main__")
"""


def test_the_bench_without_httpx_says_what_to_install_and_skips_the_web_part() -> None:
    """Before: the web part died in the live table's feed with a bare AssertionError."""
    done = subprocess.run([sys.executable, "-c", HIDE_HTTPX.format(run=str(ROOT / "qa" / "bench" / "run.py"))],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    why = "the pages are read with httpx, which is not installed: pip install '.[bench]'"
    assert f"[bench] the web pages: skipped ({why})" in done.stderr.splitlines()
    assert f"skipped: web ({why})" in done.stdout.splitlines()
    assert json.loads(done.stdout.strip().splitlines()[-1])["skipped"] == {"web": why}
