"""The table's pages, measured:

- ``tap_to_page_p99_ms``: a tap (the virtual reader's, posted from the page)
  until the browser's EventSource holds the new public snapshot — journal
  fsync, loop, router, SSE and the browser included.  Debian's chromium
  through Playwright when installed; else an HTTP client stands in (said so).
- ``web_rss_delta_mb`` / ``web_start_delta_s``: the daemon's peak RSS and start
  → READY=1 with ``--web`` against without, interleaved starts.
- ``page_weight_kb``: the HTML, JS and CSS a phone loads.
- ``tv_first_paint_ms``: the TV board (``/tv``) opened in a fresh chromium
  context at 1920×1080 on a table pairing six phones for Demagogos, from
  navigation start to the first paint that holds the table's state (the first
  contentful paint, and not before tv.js's ``tv-drawn`` mark of its first
  drawn frame) — not a blank skeleton's paint.
- ``sse_clients_held``: 20 SSE clients on loopback while the table plays; how
  many received every snapshot, each within ``SSE_BOUND_S``.
Loopback only.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
INSTALL = "pip install '.[bench]'"  # httpx: the pages' feeds and files are read over HTTP


def missing() -> str | None:
    """What this part needs and this install lacks, said with how to get it; None: nothing."""
    try:
        import httpx  # noqa: F401
    except ImportError:
        return f"the pages are read with httpx, which is not installed: {INSTALL}"
    return None

CHROMIUM = "/usr/bin/chromium"
SSE_CLIENTS = 20
SSE_BOUND_S = 2.0
LANGS = ("lang/ja", "lang/en")  # accepted at any time, and each changes the public snapshot

WARM = 4
LOST_MS = 2000
TAPS_JS = """
async ([n, langs]) => {
  const token = document.querySelector('meta[name="csrf"]').content;
  const es = new EventSource('/api/events');
  await new Promise((r) => es.addEventListener('table', r, { once: true }));
  const times = [];
  for (let i = -WARM; i < n; i++) {  // the first taps load each language's lines: not what a table waits for
    // The page is pushed a snapshot only when the public side changed: each tap
    // switches the language, and its snapshot is the one in that language.
    // A snapshot lost would hang the run: after LOST_MS the tap counts as that late (and is counted).
    const identity = langs[(i + 2 * WARM) % 2];  // (a negative index is no element in JS)
    const want = identity.split('/')[1];
    const got = new Promise((r) => {
      const seen = (e) => { if (JSON.parse(e.data).lang === want) { es.removeEventListener('table', seen);
                                                                   r(performance.now()); } };
      es.addEventListener('table', seen);
      setTimeout(() => { es.removeEventListener('table', seen); r(null); }, LOST_MS);
    });
    const t0 = performance.now();
    await fetch('/api/virtual/tap', { method: 'POST', headers: { 'Content-Type': 'application/json',
      'X-CSRF-Token': token }, body: JSON.stringify({ identity }) });
    const t1 = await got;
    if (i >= 0) times.push(t1 === null ? -1 : t1 - t0);
  }
  es.close();
  return times;
}
"""


def _p99(xs: list[float]) -> float:
    return sorted(xs)[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]


def tap_to_page(taps: int) -> tuple[list[float], str]:
    """Latencies (ms) of ``taps`` taps, and what received them."""
    from companion.app.live_table import LiveTable

    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        live = LiveTable(Path(tmp))
        try:
            if shutil.which(CHROMIUM):
                try:
                    from playwright.sync_api import sync_playwright
                except ImportError:
                    pass
                else:
                    with sync_playwright() as p:
                        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                        page = browser.new_page()
                        page.goto(live.url + "/")
                        js = TAPS_JS.replace("WARM", str(WARM)).replace("LOST_MS", str(LOST_MS))
                        times = page.evaluate(js, [taps, list(LANGS)])
                        browser.close()
                        lost = sum(t < 0 for t in times)
                        return [float(LOST_MS) if t < 0 else float(t) for t in times], \
                            "chromium" + (f" ({lost} snapshots never arrived)" if lost else "")
            return _tap_to_client(live, taps), "an HTTP client (no chromium)"
        finally:
            live.close()


def _tap_to_client(live: Any, taps: int) -> list[float]:
    from companion.app.live_table import Feed

    feed = Feed(live.url + "/api/events")
    times = []
    for i in range(-WARM, taps):
        version = live.web.public_version  # the pages count public changes only
        t0 = time.perf_counter()
        live.reader.present(text=LANGS[i % 2])
        feed.wait_for(lambda k, d, v=version: k == "table" and d["version"] > v)
        if i >= 0:
            times.append((time.perf_counter() - t0) * 1000)
    feed.close()
    return times


def page_weight_kb() -> float:
    import httpx

    from companion.app.live_table import LiveTable

    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        live = LiveTable(Path(tmp))
        try:
            with httpx.Client(base_url=live.url) as c:
                return sum(len(c.get(p).content) for p in ("/", "/static/app.js", "/static/app.css")) / 1024
        finally:
            live.close()


TV_SIZE = {"width": 1920, "height": 1080}
TV_WARM = 1  # the first load makes the daemon read the games' names (/api/games): once a table's evening
# The first paint that holds the table: the browser's first contentful paint (the board has no
# text before tv.js draws the state) and never before tv.js's mark of its first drawn frame
PAINTED = """() => { const fcp = performance.getEntriesByName('first-contentful-paint')[0];
                     const drawn = performance.getEntriesByName('tv-drawn')[0];
                     return fcp && drawn ? Math.max(fcp.startTime, drawn.startTime) : 0; }"""


def tv_first_paint(loads: int) -> list[float] | None:
    """ms to the board's first drawn frame, one fresh browser context (no cache)
    a load; None without chromium and Playwright."""
    if not shutil.which(CHROMIUM):
        return None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    from companion.app.live_table import LiveTable

    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        live = LiveTable(Path(tmp))
        try:
            live.tap("game/demagogos", *(f"player/{c}" for c in ("red", "blue", "green", "yellow", "purple", "orange")))
            live.press("next")  # waiting for the phones: the board shows the seats to pair and the QR code
            times = []
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                for i in range(TV_WARM + loads):
                    context = browser.new_context(viewport=TV_SIZE)
                    page = context.new_page()
                    page.goto(live.url + "/tv")
                    page.wait_for_function(PAINTED, timeout=5000)
                    if i >= TV_WARM:
                        times.append(float(page.evaluate(PAINTED)))
                    context.close()
                browser.close()
            return times
        finally:
            live.close()


def sse_clients_held(taps: int) -> tuple[int, float]:
    """(clients that got every snapshot within the bound, worst lag in ms)."""
    from companion.app.live_table import Feed, LiveTable

    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        live = LiveTable(Path(tmp))
        feeds = [Feed(live.url + "/api/events") for _ in range(SSE_CLIENTS)]
        try:
            held = [True] * SSE_CLIENTS
            worst = 0.0
            for i in range(taps):
                version = live.web.public_version  # the pages count public changes only
                t0 = time.perf_counter()
                live.reader.present(text=LANGS[i % 2])
                for n, feed in enumerate(feeds):
                    try:
                        feed.wait_for(lambda k, d, v=version: k == "table" and d["version"] > v,
                                      timeout=max(0.001, SSE_BOUND_S - (time.perf_counter() - t0)))
                    except AssertionError:
                        held[n] = False
                worst = max(worst, (time.perf_counter() - t0) * 1000)
            return sum(held), worst
        finally:
            for f in feeds:
                f.close()
            live.close()


def start_with_and_without(tmp: Path, starts: int) -> tuple[list[float], list[float]]:
    """Per interleaved pair: (start delta s, RSS delta MiB) of --web over none."""
    from qa.bench import startup

    start_delta, rss_delta = [], []
    for i in range(starts):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        off_s, off_mb = startup.start_ready(tmp / f"web-off-{i}", ["--web", "off"])
        on_s, on_mb = startup.start_ready(tmp / f"web-on-{i}", ["--web", f"127.0.0.1:{port}"])
        start_delta.append(on_s - off_s)
        rss_delta.append(on_mb - off_mb)
    return start_delta, rss_delta


@dataclass(frozen=True)
class Sizes:
    """The full run's counts; qa/bench/run.py's ``Plan`` holds --quick's and --smoke's."""

    taps: int = 500  # language cards per run, tap → feed
    runs: int = 3
    sse_taps: int = 50  # snapshots each SSE client must get in time
    starts: int = 7  # start pairs, --web on and off
    tv_loads: int = 20


def measure(tmp: Path, size: Sizes) -> dict[str, Any]:
    taps = size.taps
    load = [os.getloadavg()[0]]  # the machine is shared: how busy it was is part of the figure
    lat_runs = [tap_to_page(taps) for _ in range(size.runs)]
    load.append(os.getloadavg()[0])
    held, worst = sse_clients_held(size.sse_taps)
    start_delta, rss_delta = start_with_and_without(tmp, size.starts)
    return {"tap_to_page_p99_ms": [_p99(t) for t, _ in lat_runs],
            "tap_to_page_p50_ms": [statistics.median(t) for t, _ in lat_runs],
            "receiver": lat_runs[0][1], "taps": taps, "load": load,
            "web_start_delta_s": start_delta, "web_rss_delta_mb": rss_delta,
            "page_weight_kb": [page_weight_kb()], "sse_clients_held": [float(held)], "sse_worst_ms": worst,
            "tv_first_paint_ms": tv_first_paint(size.tv_loads)}
