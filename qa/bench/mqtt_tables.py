"""MQTT at venue scale, on one real mosquitto (loopback):

- ``mqtt_tap_to_venue_p99_ms``: a tap at a table → the venue page's SSE
  saying that table changed.  ``TABLES`` simulated tables (the real loop,
  journal and MQTT link each; a few processes host them), each tapping a
  language card once a second — the tap changes the table's public state,
  so its retained ``state`` goes to the broker, the venue (``companion
  venue``, its own process) stores it and its page streams it.  The time is
  the wall clock, which the processes share.
- ``venue_rss_mb``: the venue process's RSS with every table heard;
  ``venue_cpu_pct``: its CPU (user + system, % of one core) while the tables
  tap, and ``venue_cpu_ms_per_play`` (its CPU seconds ÷ the plays heard
  meanwhile, each a table's new state); ``board_answer_p50_ms``/``_p99_ms``: ``GET /api/venue`` (the whole
  board) asked twice a second meanwhile.
- ``--before=DIR`` (with ``--light``): a second venue from another checkout
  (``git archive main | tar -x -C DIR``) hears the same tables at the same
  time, its own feed and board reader beside it, so one run gives both
  figures side by side and their ratio (``..._before``, ``..._ratio``) under
  the same load.  ``venue_cpu_ms_per_play_windows``: the figure per 10 s window.
- ``--light`` (a convention: ``--tables=1000``): each table a plain MQTT
  client publishing what a table's link publishes for a tap (its retained
  ``state``, the contract's shape) once a second, a few processes hosting
  them all — a thousand real tables' loops and journals would not fit this
  machine beside the venue, and the venue is what is measured.
- ``--capacity``: where one venue process stops, whatever else the machine
  runs: ``CAPACITY`` states queued on the broker while the venue is away,
  then taken as fast as it can (one TV reading its stream), counted per
  second of the process's CPU (``venue_states_per_cpu_s``; the TV's reader
  runs in the same process, so the venue alone does a little better).
- ``mqtt_rss_delta_mb``: one daemon's peak RSS with MQTT on − off, after the
  same taps (``companion run --simulate``), its pages on as on a Pi;
  ``mqtt_rss_delta_web_off_mb`` the same with them off.
- ``mqtt_tap_feedback_ratio``: tap → feedback p99 with MQTT on ÷ off, the
  runs interleaved in this one process (qa/bench/tap_feedback.py's table), the
  taps at a reader's pace: the table never waits for the broker.
  ``mqtt_tap_feedback_ratio_back_to_back``: the same with each tap the moment
  the loop is idle, while the link may still be publishing the last one's state.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from qa.bench.stats import ROOT, config, percentile
from qa.reliability.broker import Broker, free_port

TABLES = 100
PROCESSES = 4
LANGS = ("lang/ja", "lang/en")
# Between two taps in the ratio's runs: a reader cannot take two tags closer than a few
# hundred milliseconds (a tag back within reader.debounce_s, 0.5 s, is the same tap).
READER_GAP_S = 0.02


def mqtt_cfg(broker: str, table_id: str) -> dict[str, Any]:
    return {"mqtt": {"broker": broker, "table_id": table_id, "homeassistant": False}}


# ------------------------------------------------------------ the tables
def _host_tables(first: int, count: int, broker: str, seconds: float, start_at: float, out: Any) -> None:
    """In a child process: ``count`` tables, each tapping a language card once a
    second from ``start_at`` for ``seconds``; sends back {(table, n): tap time}."""
    from companion.app.simulate import Simulation

    tmp = Path(tempfile.mkdtemp(prefix="bench-mqtt-tables-"))
    sims = []
    for i in range(first, first + count):
        sims.append((f"bench-{i:03d}", Simulation(config(mqtt_cfg(broker, f"bench-{i:03d}")), tmp / str(i),
                                                   lambda _ev: None)))
    taps: list[tuple[str, str, float]] = []
    n = 0
    while time.time() < start_at:
        time.sleep(0.01)
    end = start_at + seconds
    while time.time() < end:
        second = start_at + n
        for k, (tid, sim) in enumerate(sims):
            due = second + k / len(sims)  # spread over the second
            while time.time() < due:
                time.sleep(max(0.0, min(0.005, due - time.time())))
            lang = LANGS[n % 2]
            at = time.time()
            sim.step("tap", lang)
            taps.append((tid, lang[5:], at))
        n += 1
    out.send(taps)
    time.sleep(1.0)  # the last states on their way before the links close
    for _tid, sim in sims:
        sim.close()
    out.close()


def _light_tables(first: int, count: int, broker: str, seconds: float, start_at: float, out: Any) -> None:
    """In a child process: ``count`` light tables (one paho client each), each
    publishing its state with the other language once a second."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    host, port = broker.rsplit(":", 1)
    clients = []
    for i in range(first, first + count):
        tid = f"bench-{i:04d}"
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=tid)
        c.will_set(f"companion/{tid}/status", b"offline", qos=1, retain=True)
        c.connect(host, int(port), keepalive=60)
        c.loop_start()
        c.publish(f"companion/{tid}/status", b"online", qos=1, retain=True)
        clients.append((tid, c))
    taps: list[tuple[str, str, float]] = []
    base: dict[str, Any] = {"game": None, "step": None, "waiting_for": [], "round": None, "totals": {}, "deadline": None,
            "night": False, "online": True}
    while time.time() < start_at:
        time.sleep(0.01)
    n = 0
    while time.time() < start_at + seconds:
        second = start_at + n
        for k, (tid, c) in enumerate(clients):
            due = second + k / len(clients)
            while time.time() < due:
                time.sleep(max(0.0, min(0.005, due - time.time())))
            lang = LANGS[n % 2][5:]
            at = time.time()
            c.publish(f"companion/{tid}/state", json.dumps({**base, "table": tid, "lang": lang}).encode(), qos=1,
                      retain=True)
            taps.append((tid, lang, at))
        n += 1
    out.send(taps)
    time.sleep(1.0)
    for _tid, c in clients:
        c.disconnect()
        c.loop_stop()
    out.close()


class _Plain:
    """A plain subscriber beside the venue (``companion/+/state``): when each
    table's language reached *any* client, so the venue's share of the
    latency is told apart from the broker's and the loaded machine's."""

    def __init__(self, broker: str) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.seen: list[tuple[str, str, float]] = []
        host, port = broker.rsplit(":", 1)
        self.client = c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-plain")
        c.on_message = lambda _c, _u, m: self.seen.append(
            (m.topic.split("/")[1], "ja" if b'"lang": "ja"' in m.payload else "en", time.time()))
        c.on_connect = lambda cl, *_: cl.subscribe("companion/+/state", qos=1)
        c.connect(host, int(port))
        c.loop_start()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _latencies(taps: list[tuple[str, str, float]], seen: list[tuple[str, str, float]]) -> tuple[list[float], int]:
    """Each tap's latency: the first time ``seen`` showed that table in that language after the tap."""
    by_table: dict[str, list[tuple[str, float]]] = {}
    for tid, lang, at in seen:
        by_table.setdefault(tid, []).append((lang, at))
    lat, missed = [], 0
    for tid, lang, at in taps:
        got = next((t for lg, t in by_table.get(tid, []) if lg == lang and t >= at), None)
        if got is None:
            missed += 1
        else:
            lat.append((got - at) * 1000)
    return lat, missed


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Board:
    """``GET /api/venue`` twice a second: how long the whole board takes to answer."""

    def __init__(self, url: str) -> None:
        self.ms: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._ask, args=(url,), daemon=True, name="venue-board")
        self.thread.start()

    def _ask(self, url: str) -> None:
        import httpx

        with httpx.Client(timeout=30) as client:
            while not self.stop.wait(0.5):
                t0 = time.perf_counter()
                client.get(url + "/api/venue").raise_for_status()
                self.ms.append((time.perf_counter() - t0) * 1000)


class _Feed:
    """The venue page's SSE stream: when each table's ``lang`` was first seen."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: list[tuple[str, str, float]] = []
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._read, args=(url,), daemon=True, name="venue-feed")
        self.thread.start()

    def _read(self, url: str) -> None:
        self.reconnects = -1
        while not self.stop.is_set():  # as a page's EventSource: a stream the venue ended is opened again
            self.reconnects += 1
            self._read_once(url)

    def _read_once(self, url: str) -> None:
        import httpx

        with httpx.stream("GET", url + "/api/venue/events", timeout=None) as r:
            kind = None
            for line in r.iter_lines():
                if self.stop.is_set():
                    return
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:") and kind == "table":
                    row = json.loads(line[5:])
                    if row.get("lang"):
                        self.seen.append((row["id"], row["lang"], time.time()))
                elif line.startswith("data:") and kind == "board":
                    self.ready.set()


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _start_venue(tmp: Path, broker: str, root: Path, ident: str) -> tuple[subprocess.Popen[str], str]:
    """``companion venue`` from the checkout at ``root`` (its own modules first on the path); its board's URL."""
    env = {**os.environ, "PYTHONPATH": str(root)} if root != ROOT else None
    venue = subprocess.Popen([sys.executable, "-m", "companion.app.cli", "venue", "--mqtt", broker,
                              "--web", "127.0.0.1:0", "--state", str(tmp / ident), "--id", ident],
                             cwd=str(root), env=env, stderr=subprocess.PIPE, text=True)
    assert venue.stderr is not None
    url = None
    deadline = time.monotonic() + 30
    while url is None and time.monotonic() < deadline:
        m = re.search(r"(http://127\.0\.0\.1:\d+)", venue.stderr.readline())
        url = m.group(1) if m else None
    if url is None:
        venue.terminate()
        raise RuntimeError(f"the venue ({root}) never said where its board is")
    threading.Thread(target=lambda: [None for _ in venue.stderr], daemon=True).start()  # type: ignore[union-attr]
    return venue, url


def _mark(proc: subprocess.Popen[str], url: str) -> tuple[float, float, int]:
    """(wall time, the venue's CPU seconds, the messages it has kept: its board's count)."""
    import httpx

    heard = int(httpx.get(url + "/api/venue", timeout=30).json()["counts"]["messages"])
    return time.time(), _cpu_s(proc.pid), heard


def _windows(marks: list[tuple[float, float, int]]) -> list[float]:
    """CPU ms per play kept in each window between two marks."""
    return [round((c1 - c0) * 1000 / (n1 - n0), 4) for (_t0, c0, n0), (_t1, c1, n1) in pairwise(marks)
            if n1 > n0]


def venue_scale(tmp: Path, seconds: float, tables: int = TABLES, light: bool = False,
                before: Path | None = None, window_s: float = 10.0, lead_s: float | None = None) -> dict[str, Any]:
    broker = Broker(tmp / "broker").start()
    sides = [("", ROOT)] + ([("_before", Path(before).resolve())] if before is not None else [])
    venues: list[tuple[str, subprocess.Popen[str], _Feed]] = []
    try:
        for suffix, root in sides:
            proc, url = _start_venue(tmp, broker.address, root, f"venue-bench{suffix.replace('_', '-')}")
            venues.append((suffix, proc, _Feed(url)))
        plain = _Plain(broker.address) if light else None
        for _suffix, _proc, feed in venues:
            if not feed.ready.wait(15):
                raise RuntimeError("the venue's feed never opened")
        ctx = multiprocessing.get_context("fork")
        per = -(-tables // PROCESSES)
        # every table built (light: connected) first; a table not yet built by then starts late
        if lead_s is None:
            lead_s = 5.0 + tables * 0.01 if light else 8.0 + tables * 0.05
        start_at = time.time() + lead_s
        pipes, procs = [], []
        for first in range(0, tables, per):
            here, there = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_light_tables if light else _host_tables, args=(first, min(per, tables - first), broker.address, seconds,
                                                       start_at, there))
            p.start()
            pipes.append(here)
            procs.append(p)
        while time.time() < start_at:
            time.sleep(0.05)
        marks = [[_mark(proc, feed.url)] for _s, proc, feed in venues]
        t0 = time.monotonic()
        boards = [_Board(feed.url) for _s, _p, feed in venues]
        # a mark each window while the tables tap, the last as they stop: a backlog taken
        # afterwards (and the board read meanwhile) is in no window
        end, step = start_at + seconds, min(window_s, seconds / 2)
        for k in range(1, int(seconds // step) + 1):
            due = min(start_at + k * step, end) if seconds - k * step >= step / 2 else end
            while time.time() < due:
                time.sleep(min(0.1, max(0.0, due - time.time())))
            for m, (_s, proc, feed) in zip(marks, venues, strict=True):
                m.append(_mark(proc, feed.url))
            if due >= end:
                break
        wall = time.monotonic() - t0
        taps: list[tuple[str, str, float]] = []
        for here in pipes:
            if not here.poll(start_at - time.time() + seconds + 60):
                raise RuntimeError("a table process never reported")
            taps += here.recv()
        for board in boards:
            board.stop.set()
        if plain is not None:
            plain.close()
        time.sleep(2.0)
        rss = [_rss_mb(proc.pid) for _s, proc, _f in venues]
        for p in procs:
            p.join(30)
        for _s, _p, feed in venues:
            feed.stop.set()
    finally:
        for _s, proc, _f in venues:
            proc.terminate()
            proc.wait(15)
        broker.stop()
    direct = _latencies(taps, plain.seen)[0] if plain is not None else []
    out: dict[str, Any] = {
        "mqtt_tap_to_plain_subscriber_p99_ms": percentile(direct, 99) if direct else float("nan"),
        "mqtt_tap_to_plain_subscriber_p50_ms": percentile(direct, 50) if direct else float("nan"),
        "taps": len(taps), "tables": tables}
    for (suffix, _proc, feed), board, m, mb in zip(venues, boards, marks, rss, strict=True):
        lat, missed = _latencies(taps, feed.seen)
        cpu_s, kept = m[-1][1] - m[0][1], m[-1][2] - m[0][2]
        out.update({f"{k}{suffix}": v for k, v in {
            "missed": missed, "feed_reconnects": feed.reconnects, "venue_rss_mb": mb,
            "venue_cpu_pct": round(cpu_s / wall * 100, 1), "board_answers": len(board.ms),
            # CPU seconds ÷ plays kept while the tables tapped (each a table's state, once a second):
            # what a noisy machine cannot blur
            "venue_plays_kept": kept, "venue_cpu_ms_per_play": round(cpu_s * 1000 / kept, 4) if kept else float("nan"),
            "venue_cpu_ms_per_play_windows": _windows(m),
            "board_answer_p50_ms": percentile(board.ms, 50) if board.ms else float("nan"),
            "board_answer_p99_ms": percentile(board.ms, 99) if board.ms else float("nan"),
            "mqtt_tap_to_venue_p99_ms": percentile(lat, 99) if lat else float("nan"),
            "mqtt_tap_to_venue_p50_ms": percentile(lat, 50) if lat else float("nan")}.items()})
    if before is not None and out["venue_cpu_ms_per_play_before"]:
        out["venue_cpu_ms_per_play_ratio"] = round(out["venue_cpu_ms_per_play"] / out["venue_cpu_ms_per_play_before"], 3)
    return out


def venue_capacity(tmp: Path, states: int = 20000) -> dict[str, Any]:
    """In this process: the venue's CPU per table state, with the backlog ready."""
    import httpx
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from venue.app import Venue

    broker = Broker(tmp / "broker", extra=["max_queued_messages 0", "max_inflight_messages 100"]).start()
    try:
        v = Venue(tmp / "venue", (broker.host, broker.port), None, ident="venue-capacity", report=lambda _: None)
        v.start()
        v.ear.subscribed.wait(15)
        v.stop()  # its session kept: what comes now waits for it
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-capacity")
        c.connect(broker.host, broker.port)
        c.loop_start()
        base: dict[str, Any] = {"game": None, "step": None, "waiting_for": [], "round": None, "totals": {},
                                "deadline": None, "night": False, "online": True}
        for i in range(states):
            tid = f"bench-{i % 1000:04d}"
            info = c.publish(f"companion/{tid}/state", json.dumps(
                {**base, "table": tid, "lang": LANGS[(i // 1000) % 2][5:]}).encode(), qos=1)
        info.wait_for_publish(60)
        c.disconnect()
        c.loop_stop()
        v = Venue(tmp / "venue", (broker.host, broker.port), ("127.0.0.1", 0), ident="venue-capacity",
                  report=lambda _: None)
        assert v.server is not None
        v.server.start()
        shown = [0]

        def tv() -> None:
            try:
                with httpx.stream("GET", f"{v.url}/api/venue/events", timeout=None) as r:
                    for line in r.iter_lines():
                        shown[0] += line.startswith("event: table")
            except httpx.HTTPError:
                pass  # the venue stopped

        threading.Thread(target=tv, daemon=True).start()
        time.sleep(1.0)
        cpu0, wall0 = time.process_time(), time.monotonic()
        v.ear.start()
        while v.store.counts()["messages"] < states and time.monotonic() - wall0 < 120:
            time.sleep(0.02)
        cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
        kept = v.store.counts()["messages"]
        time.sleep(0.5)
        v.stop()
    finally:
        broker.stop()
    return {"states": kept, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "shown_on_a_tv": shown[0],
            "venue_states_per_cpu_s": round(kept / cpu), "venue_states_per_wall_s": round(kept / wall)}


# ------------------------------------------------------------ one daemon
def daemon_rss_mb(tmp: Path, broker: str | None, taps: int = 40, web: bool = True) -> float:
    """Peak RSS of ``companion run --simulate --json`` after ``taps`` taps;
    ``web``: with its pages on a loopback port, as a Pi runs it by default."""
    from qa.reliability.proc import Daemon

    tmp.mkdir(parents=True, exist_ok=True)
    cfg = tmp / "companion.yaml"
    listen = f"127.0.0.1:{free_port()}" if web else None
    cfg.write_text(json.dumps({"voice": {"backend": "silent"}, "web": {"listen": listen},
                               **(mqtt_cfg(broker, "bench-rss") if broker else {})}), encoding="utf-8")
    d = Daemon(tmp / "state", cfg)
    try:
        for i in range(taps):
            start = d.mark()
            d.send(LANGS[i % 2])  # a language card: accepted, said, published
            if d.response(start, 10)[1] is None:
                raise RuntimeError(f"the daemon did not answer {LANGS[i % 2]} within 10 s")
        time.sleep(0.5)
        for line in Path(f"/proc/{d.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0
    finally:
        d.quit()


@dataclass(frozen=True)
class Sizes:
    """The full run's counts; qa/bench/run.py's ``Plan`` holds --quick's and --smoke's."""

    seconds: float = 30.0  # the tables tapping
    tables: int = TABLES
    lead_s: float | None = None  # None: as long as the tables take to build
    rss_runs: int = 3
    rss_taps: int = 40
    ratio_taps: int = 1000
    ratio_runs: int = 3
    back_to_back_taps: int = 3000
    back_to_back_runs: int = 3


def measure(tmp: Path, size: Sizes) -> dict[str, Any]:
    from qa.bench import tap_feedback

    tmp.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {}
    scale = venue_scale(tmp / "scale", size.seconds, size.tables, lead_s=size.lead_s)
    out.update(scale)
    broker = Broker(tmp / "broker").start()
    try:
        # The daemon as a Pi runs it (pages on), and without its pages: there paho's
        # import brings OpenSSL (ssl, hashlib) that the web stack otherwise loads anyway.
        for name, web in (("mqtt_rss_delta_mb", True), ("mqtt_rss_delta_web_off_mb", False)):
            rss_off, rss_on = [], []
            for i in range(size.rss_runs):
                rss_off.append(daemon_rss_mb(tmp / f"{name}-off-{i}", None, size.rss_taps, web=web))
                rss_on.append(daemon_rss_mb(tmp / f"{name}-on-{i}", broker.address, size.rss_taps, web=web))
            out[name] = [on - off for on, off in zip(rss_on, rss_off, strict=True)]
        # At a reader's pace (READER_GAP_S between taps) the link's threads are idle
        # when a tap comes; back to back (none), the state it publishes for one tap
        # shares the interpreter with the next tap's handling.
        for name, taps, gap, runs in (("mqtt_tap_feedback_ratio", size.ratio_taps, READER_GAP_S, size.ratio_runs),
                                      ("mqtt_tap_feedback_ratio_back_to_back", size.back_to_back_taps, 0.0,
                                       size.back_to_back_runs)):
            ratios = []
            for _ in range(runs):
                off = tap_feedback.summary(tap_feedback.measure(taps, gap_s=gap))["tap_feedback_p99_ms"]
                on = tap_feedback.summary(tap_feedback.measure(
                    taps, overrides=mqtt_cfg(broker.address, "bench-taps"), gap_s=gap))
                ratios.append(on["tap_feedback_p99_ms"] / off)
            out[name] = ratios
    finally:
        broker.stop()
    return out


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    tables = next((int(a.split("=")[1]) for a in sys.argv if a.startswith("--tables=")), TABLES)
    seconds = next((float(a.split("=")[1]) for a in sys.argv if a.startswith("--seconds=")), 8.0 if quick else 30.0)
    with tempfile.TemporaryDirectory(prefix="bench-mqtt-") as d:
        if "--capacity" in sys.argv:
            print(json.dumps(venue_capacity(Path(d)), indent=1))
        else:
            before = next((Path(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--before=")), None)
            print(json.dumps(venue_scale(Path(d), seconds, tables, light="--light" in sys.argv, before=before),
                             indent=1))
    os._exit(0)
