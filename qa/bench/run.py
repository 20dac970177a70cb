"""The benchmark suite: ``python qa/bench/run.py [--quick | --smoke] [--json]``.

Prints a table of figures (the median of several runs, with their range) and
the goal each is held to; with ``--json`` the last line is one JSON object
with every figure.  Progress goes to stderr.  ``--quick`` is a short version
for people; ``--smoke`` is for the test that the bench runs (every section at its
smallest, figures meaningless).  No timing here ever fails.
What each figure measures, and how: qa/bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from qa.bench import (  # noqa: E402
    cue_audio,
    mqtt_tables,
    night_drift,
    page_taps,
    resume,
    startup,
    tap_feedback,
    venue_league,
    voice_engines,
    web_pages,
)
from qa.bench.stats import ROOT, Figure, figure, percentile  # noqa: E402
from qa.reliability import powercut  # noqa: E402


@dataclass(frozen=True)
class Plan:
    """Every count and window the parts take: ``SIZES`` holds the full run's,
    ``--quick``'s and ``--smoke``'s (each part at its smallest: only that it runs)."""

    size: str = "full"
    tap_runs: int = 3
    taps: int = 10_000
    sd_runs: int = 3
    sd_taps: int = 1_000  # each accepted tap waits 7–76 ms
    voice_rounds: int = 3
    voice_lines: int = 12
    engine_lines: int = 12
    engine_limit: int | None = None  # files per engine; None: the whole cache
    loaded_nights: int = 3
    fill_per_lang: int = 60
    starts: int = 7
    resume_games: int = 10_000
    resume_part_runs: int = 3
    idle_windows: int = 3
    idle_window_s: float = 10.0
    nights: int = 5
    page_taps: int = 100
    page_rounds: int = 2
    web: web_pages.Sizes = web_pages.Sizes()
    mqtt: mqtt_tables.Sizes = mqtt_tables.Sizes()
    league_season: int = 3000
    league_late: int = 20
    venue_tables: int = 1000
    venue_seconds: float = 30.0
    venue_lead_s: float | None = None  # None: as long as the tables take to connect
    before: Path | None = None  # --before: a checkout whose venue and resume run beside this one's

    @property
    def quick(self) -> bool:
        """Not the full run: the parts that only the full run adds are left out."""
        return self.size != "full"


SIZES = {
    "full": Plan(),
    "quick": Plan("quick", tap_runs=2, taps=1_000, sd_runs=1, sd_taps=60, voice_rounds=1, voice_lines=4,
                  engine_lines=2, engine_limit=6, loaded_nights=1, fill_per_lang=4, starts=3,
                  resume_part_runs=1, idle_windows=2, idle_window_s=4.0, nights=2, page_taps=5, page_rounds=1,
                  web=web_pages.Sizes(taps=50, runs=1, sse_taps=10, starts=3, tv_loads=5),
                  mqtt=mqtt_tables.Sizes(seconds=8.0, rss_runs=1, ratio_taps=300, ratio_runs=2,
                                         back_to_back_taps=300, back_to_back_runs=1),
                  league_season=1000, league_late=10, venue_seconds=12.0),
    # For the test that the bench runs: every part's code at its smallest, the figures meaningless.
    "smoke": Plan("smoke", tap_runs=1, taps=100, sd_runs=1, sd_taps=10, voice_rounds=1, voice_lines=2,
                  engine_lines=2, engine_limit=1, loaded_nights=1, fill_per_lang=1, starts=1,
                  resume_games=200, resume_part_runs=1, idle_windows=1, idle_window_s=1.0, nights=1,
                  page_taps=1, page_rounds=1,
                  web=web_pages.Sizes(taps=3, runs=1, sse_taps=2, starts=1, tv_loads=1),
                  mqtt=mqtt_tables.Sizes(seconds=2.0, tables=4, lead_s=3.0, rss_runs=1, rss_taps=4,
                                         ratio_taps=20, ratio_runs=1, back_to_back_taps=20,
                                         back_to_back_runs=1),
                  league_season=100, league_late=2, venue_tables=40, venue_seconds=2.0, venue_lead_s=2.0),
}


def note(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def bench_taps(plan: Plan) -> tuple[list[Figure], dict[str, Any]]:
    note(f"tap → feedback: {plan.tap_runs} runs × {plan.taps:,} taps (Seven Knights + One Night)")
    runs = [tap_feedback.measure(plan.taps) for _ in range(plan.tap_runs)]
    sums = [tap_feedback.summary(r) for r in runs]
    col = {k: [s[k] for s in sums] for k in sums[0]}
    r0 = runs[0]
    taps = len(r0.feedback_ms)
    detail = {"taps_per_run": taps, "games_per_run": r0.games,
              "rejected_share": round(r0.rejected / (r0.accepted + r0.rejected), 3)}
    return [
        figure("tap_feedback_p50_ms", col["tap_feedback_p50_ms"], "ms"),
        figure("tap_feedback_p99_ms", col["tap_feedback_p99_ms"], "ms", 2.0,
               f"{taps:,} taps/run, {r0.games} games, {detail['rejected_share']:.0%} of inputs refused"),
        figure("tap_voice_p99_ms", col["tap_voice_p99_ms"], "ms", None, "to the first spoken line"),
        figure("journal_append_p50_ms", col["journal_append_p50_ms"], "ms", None,
               "one fsynced transaction per accepted input"),
        figure("journal_append_p99_ms", col["journal_append_p99_ms"], "ms"),
        figure("panel_call_p99_ms", col["panel_call_p99_ms"], "ms", None,
               "one LED/buzzer call into the gpiozero panel"),
    ], detail


def bench_sd_card(plan: Plan) -> tuple[list[Figure], dict[str, Any]]:
    """Tap → feedback with the journal on a modeled microSD card: what a table on a Pi waits for."""
    if not powercut.available():
        why = "the card is modeled with apsw, which is not installed: pip install '.[bench]'"
        note(f"tap → feedback on a modeled SD card: skipped ({why})")
        return [], {"skipped": {"sd_card": why}}
    low, high = powercut.SD_SYNC_MS
    note(f"tap → feedback on a modeled SD card (each sync {low:g}–{high:g} ms longer): "
         f"{plan.sd_runs} runs × {plan.sd_taps:,} taps")
    runs, mirrored, sync_p99, two_syncs = [], [], [], []
    for i in range(plan.sd_runs):  # with and without the journal's mirror, in turn: the same noise for both
        card = powercut.sd_card_journal(seed=i)
        run = tap_feedback.measure(plan.sd_taps, card)
        runs.append(tap_feedback.summary(run))
        sync_p99.append(percentile(card.syncs_ms, 99))  # one sync, drawn in the same run
        two_syncs.append(100 * sum(n > 1 for n in run.append_syncs) / len(run.append_syncs))
        mirrored.append(tap_feedback.summary(tap_feedback.measure(
            plan.sd_taps, powercut.sd_card_journal(seed=i), mirror_sync=powercut.modeled_sync(seed=100 + i))))
    ratio = [m["tap_feedback_p99_ms"] / r["tap_feedback_p99_ms"] for m, r in zip(mirrored, runs, strict=True)]
    return [
        figure("tap_feedback_sd_p50_ms", [r["tap_feedback_p50_ms"] for r in runs], "ms"),
        figure("tap_feedback_sd_p99_ms", [r["tap_feedback_p99_ms"] for r in runs], "ms", None,
               f"journal on a modeled microSD card: every sync {low:g}–{high:g} ms (uniform)"),
        figure("sd_sync_p99_ms", sync_p99, "ms", None, "one sync of the modeled card"),
        figure("tap_feedback_sd_sync_ratio", [r["tap_feedback_p99_ms"] / s for r, s in zip(runs, sync_p99, strict=True)],
               "×", 1.1, "tap → feedback p99 / one sync's p99, same run: no tap waits for two"),
        figure("journal_append_sd_p99_ms", [r["journal_append_p99_ms"] for r in runs], "ms"),
        figure("journal_append_sd_two_syncs_pct", two_syncs, "%", None,
               "appends that synced more than once (a fold, a new WAL's header)"),
        figure("tap_feedback_sd_mirror_p50_ms", [r["tap_feedback_p50_ms"] for r in mirrored], "ms"),
        figure("tap_feedback_sd_mirror_p99_ms", [r["tap_feedback_p99_ms"] for r in mirrored], "ms", None,
               "and the journal's mirror on a second modeled card (journal: mirror:)"),
        figure("journal_append_sd_mirror_p99_ms", [r["journal_append_p99_ms"] for r in mirrored], "ms", None,
               "the append and the mirror's line, both synced"),
        figure("tap_feedback_sd_mirror_ratio", ratio, "×", None, "p99 with the mirror / without, same run"),
    ], {}


def bench_voice(plan: Plan) -> tuple[list[Figure], dict[str, Any]]:
    lines = cue_audio.game_lines(plan.voice_lines)
    note(f"cue → audio: {plan.voice_rounds} rounds × {len(lines)} lines, cached and live")
    rounds = cue_audio.measure(lines, plan.voice_rounds)
    cached = [r["cue_audio_cached_ms"] for r in rounds]
    live = [r["cue_audio_live_ms"] for r in rounds]
    ratio = [c / lv for c, lv in zip(cached, live, strict=True)]  # each round's own pair
    return [
        figure("cue_audio_cached_ms", cached, "ms", None, rounds[0]["source"]),
        figure("cue_audio_live_ms", live, "ms", None, f"{len(lines)} lines, en + ja"),
        figure("cue_audio_ratio", ratio, "×", 1 / 20, "cached / live, same round"),
        figure("cue_audio_cached_null_ms", [r["cue_audio_cached_null_ms"] for r in rounds], "ms", None,
               "null player: no output to open"),
        figure("cue_audio_live_null_ms", [r["cue_audio_live_null_ms"] for r in rounds], "ms", None,
               "null player, whole line rendered"),
    ], {"voice_source": rounds[0]["source"], "voice_lines": len(lines)}


def bench_engines(plan: Plan) -> tuple[list[Figure], dict[str, Any]]:
    """The engines side by side in one run (qa/bench/voice_engines.py)."""
    names = voice_engines.available()
    figures: list[Figure] = []
    detail: dict[str, Any] = {"engines": names}
    lines = cue_audio.game_lines(plan.engine_lines)
    for name in names:
        what = "the whole cache" if plan.engine_limit is None else f"{plan.engine_limit} files"
        note(f"engine {name}: render {what} ({', '.join(voice_engines.LANGS[name])})")
        r = voice_engines.render(name, plan.engine_limit)
        c = voice_engines.cue(name, lines)
        if c.get("errors"):
            raise RuntimeError(f"{name}: {c['errors'][:3]}")
        figures += [
            figure(f"render_s_per_line_{name}", [r.render_s_per_line], "s", None,
                   f"{r.files} files, {r.audio_s:.0f} s of audio"),
            figure(f"render_cache_s_{name}", [r.seconds], "s", None, f"{what}, {', '.join(voice_engines.LANGS[name])}"),
            figure(f"cache_mb_{name}", [r.cache_mb], "MB", None, f"{r.files} files"),
            figure(f"worker_peak_rss_mb_{name}", [r.worker_peak_rss_mb], "MiB", None, "the render child"),
            figure(f"cue_audio_cached_ms_{name}", [c["cue_audio_cached_ms"]], "ms", None, c["player"]),
            figure(f"cue_audio_live_ms_{name}", [c["cue_audio_live_ms"]], "ms", None,
                   f"{c['lines']} lines, whole line rendered"),
        ]
    note(f"One Night while the background fill runs and every core is busy: {plan.loaded_nights} nights "
         "with the fill holding off for the table, interleaved with as many without"
         + ("" if plan.quick else "; then the fill alone, and the busy cores alone"))
    gated: list[list[Any]] = []
    ungated: list[list[Any]] = []
    counts = {"rendered": 0, "holds": 0}
    for _ in range(plan.loaded_nights):  # side by side: the machine's noise hits both alike
        night, filled, cores = voice_engines.loaded_night(1, busy=True, gated=True)
        gated += night
        counts = {k: counts[k] + filled[k] for k in counts}
        ungated += voice_engines.loaded_night(1, busy=True, gated=False)[0]
    figures.append(figure("night_drift_loaded_p99_ms", [night_drift.p99(n) for n in gated], "ms", 20.0,
                          f"fill + {cores} busy processes; the fill held off {counts['holds']} times, "
                          f"{counts['rendered']} files rendered"))
    figures.append(figure("night_drift_loaded_ungated_p99_ms", [night_drift.p99(n) for n in ungated], "ms",
                          None, "the same, the fill not told of the table (as before the gate)"))
    per_lang = plan.fill_per_lang
    note(f"background fill worker's peak RSS: ja then en, {per_lang} renders each, per engine vs one for both")
    now, before = voice_engines.fill_worker_rss(per_lang)
    figures += [
        figure("fill_worker_peak_rss_mb", [now], "MiB", None, f"a worker per engine, {per_lang} files/lang"),
        figure("fill_worker_peak_rss_both_mb", [before], "MiB", None, "one worker loading both (as before)"),
    ]
    if not plan.quick:  # which of the two loads costs what
        fill_only, alone, _ = voice_engines.loaded_night(plan.loaded_nights, busy=False)
        with voice_engines.every_core_busy():
            busy_only = night_drift.measure(plan.loaded_nights)
        figures += [
            figure("night_drift_fill_p99_ms", [night_drift.p99(n) for n in fill_only], "ms", 20.0,
                   f"fill alone ({alone['rendered']} files rendered)"),
            figure("night_drift_busy_p99_ms", [night_drift.p99(n) for n in busy_only], "ms", None,
                   f"{cores} busy processes, no fill"),
        ]
    return figures, detail


def bench_daemon(plan: Plan, tmp: Path) -> tuple[list[Figure], dict[str, Any]]:
    state = tmp / "resume"
    note(f"journal: {plan.resume_games:,} finished games + 1 in progress")
    t0 = time.monotonic()
    facts = resume.build(state, plan.resume_games)
    note(f"  built in {time.monotonic() - t0:.1f} s: {facts['inputs']:,} inputs, "
         f"{facts['bytes'] / 1e6:.1f} MB")
    note(f"start → READY=1: {plan.starts} starts each, empty and {plan.resume_games:,}-game journal, interleaved")
    ready, rss, resumed, resumed_rss = [], [], [], []
    beside: dict[str, list[float]] = {"module": [], "before": []}  # --before: both through the CLI's module
    for i in range(plan.starts):
        s, m = startup.start_ready(tmp / f"empty-{i}")
        ready.append(s)
        rss.append(m)
        s, m = startup.start_ready(state)
        resumed.append(s)
        resumed_rss.append(m)
        if plan.before:
            beside["module"].append(startup.start_ready(state, root=ROOT)[0])
            beside["before"].append(startup.start_ready(state, root=plan.before)[0])
    note("where a resume's time goes: the same start in this process, each part timed where it is called")
    parts = resume.parts(state, plan.resume_part_runs)
    parts["process_and_imports"] = round(percentile(resumed, 50) - parts["in_process"], 4)
    note(f"idle: {plan.idle_windows} × {plan.idle_window_s:g} s")
    idle = startup.idle(tmp / "idle", plan.idle_windows, plan.idle_window_s)
    rss.append(idle.peak_rss_mb)
    return [
        figure("start_ready_s", ready, "s", 0.5, "fresh state directory"),
        figure("peak_rss_mb", rss, "MiB", 40.0, "VmHWM at ready, and after the idle run"),
        figure("idle_cpu_pct", idle.cpu_pct, "%", 1.0, f"{plan.idle_window_s:g} s windows; "
               f"{idle.watchdog_per_s:.1f} WATCHDOG=1/s sent"),
        figure("resume_10k_s", resumed, "s", 0.3, f"{facts['inputs']:,} inputs in the journal; " + ", ".join(
            f"{k} {v:.3f}" for k, v in parts.items() if k != "in_process")),
        *([figure("resume_10k_s_module", beside["module"], "s", None, "the same start through python -m"),
           figure("resume_10k_s_before", beside["before"], "s", None, f"{plan.before} through python -m, "
                  "interleaved"),
           figure("resume_10k_s_ratio", [percentile(beside["module"], 50) / percentile(beside["before"], 50)],
                  "×", None, "this checkout ÷ the one before, both through python -m")] if plan.before else []),
        figure("resume_peak_rss_mb", resumed_rss, "MiB", 40.0),
        figure("journal_bytes_per_game", [facts["bytes_per_game"]], "B", None,
               f"{facts['inputs_per_game']:.0f} inputs/game"),
    ], {"journal_inputs": facts["inputs"], "journal_mb": round(facts["bytes"] / 1e6, 1), "resume_parts": parts}


def bench_night(plan: Plan) -> tuple[list[Figure], dict[str, Any]]:
    note(f"One Night on the real clock: {plan.nights} nights")
    nights = night_drift.measure(plan.nights)
    cues = sum(len(n) for n in nights)
    w = night_drift.worst(nights)
    return [
        figure("night_drift_p99_ms", [night_drift.p99(n) for n in nights], "ms", 20.0,
               f"{cues // len(nights)} cues/night"),
        figure("night_drift_max_ms", [max(c.late_ms for c in n) for n in nights], "ms", None,
               f"worst: {w.late_ms:.1f} ms = woke {w.wake_ms:.1f} late + journal {w.journal_ms:.1f} + rest"),
    ], {}


def bench_page_taps(plan: Plan) -> list[Figure]:
    """Tap → the phones' pages drawn (qa/bench/page_taps.py): a tap inside a game (a tile laid:
    one part of the page) apart from a language card (the whole page redrawn in the other language)."""
    if (why := page_taps.missing()) is not None:
        note(f"tap → page drawn: skipped ({why})")
        return []
    # A phone is a device of its own: one phone paired is what a person at the table feels (the
    # tap's way through the daemon and its page's own drawing, its renderer with a core to itself).
    # Five phones in one headless chromium on this 2-core machine add five renderers contending for
    # two cores: reported beside it, as the load a table's phones put on the daemon.
    taps, rounds = plan.page_taps, plan.page_rounds
    figures: list[Figure] = []
    for phones, suffix in ((1, ""), *(() if plan.quick else ((5, "_5phones"),))):
        note(f"tap → page drawn: {phones} phone(s), {rounds} runs × {taps} tiles laid and {taps} language cards")
        r = page_taps.measure(taps, phones, rounds)
        runs = {k: [s[k] for s in r["after"]] for k in r["after"][0]}
        how = f"{phones} phone(s) at 360×740, {taps} taps/run; load average {r['load'][0]:.1f} → {r['load'][1]:.1f}"
        held = not suffix  # the goals hold for one phone; five are reported beside it
        figures += [
            figure(f"tap_to_page_ingame{suffix}_p99_ms", runs["ingame_p99"], "ms", 25.0 if held else None, f"a Seven Knights tile laid: {how}"),
            figure(f"tap_to_page_ingame{suffix}_p50_ms", runs["ingame_p50"], "ms", None,
                   f"the page's script {statistics.median(runs['ingame_script_p50']):.1f} ms and layout "
                   f"{statistics.median(runs['ingame_layout_p50']):.1f} ms of it (p50)"),
            # a language card redraws the whole page in the other language: its own goal
            figure(f"tap_to_page_lang{suffix}_p99_ms", runs["lang_p99"], "ms", 100.0 if held else None, f"a language card: {how}"),
            figure(f"tap_to_page_lang{suffix}_p50_ms", runs["lang_p50"], "ms", None,
                   f"the page's script {statistics.median(runs['lang_script_p50']):.1f} ms and layout "
                   f"{statistics.median(runs['lang_layout_p50']):.1f} ms of it (p50)"),
        ]
    return figures


def bench_web(plan: Plan, tmp: Path) -> tuple[list[Figure], dict[str, Any]]:
    missing = web_pages.missing()
    if missing is not None:
        note(f"the web pages: skipped ({missing})")
        return [], {"skipped": {"web": missing}}
    note("the web pages: tap → page in a browser, 20 SSE clients, start and RSS with --web against without")
    r = web_pages.measure(tmp / "web", plan.web)
    return [
        *bench_page_taps(plan),
        figure("tap_to_feed_lang_p99_ms", r["tap_to_page_p99_ms"], "ms", None,
               f"{r['taps']} language cards/run to the page's feed (nothing drawn), received by {r['receiver']}; "
               f"load average {r['load'][0]:.1f} → {r['load'][1]:.1f}"),
        figure("tap_to_feed_lang_p50_ms", r["tap_to_page_p50_ms"], "ms"),
        figure("web_rss_delta_mb", r["web_rss_delta_mb"], "MiB", 15.0, "peak RSS at ready, --web on − off"),
        figure("web_start_delta_s", r["web_start_delta_s"], "s", 0.2, "start → READY=1, --web on − off"),
        figure("page_weight_kb", r["page_weight_kb"], "KB", 60.0, "HTML + JS + CSS"),
        figure("sse_clients_held", r["sse_clients_held"], "", None,
               f"of {web_pages.SSE_CLIENTS}, every snapshot within {web_pages.SSE_BOUND_S:g} s; "
               f"worst {r['sse_worst_ms']:.0f} ms"),
        *([figure("tv_first_paint_ms", tv, "ms", 300.0,
                  f"/tv at 1920×1080, {len(tv)} fresh loads, to the first frame with the table drawn; worst {max(tv):.0f} ms")]
          if (tv := r["tv_first_paint_ms"]) else []),
    ], {}


def bench_mqtt(plan: Plan, tmp: Path) -> tuple[list[Figure], dict[str, Any]]:
    from qa.reliability.broker import MOSQUITTO

    if MOSQUITTO is None:
        note("MQTT: skipped (no mosquitto)")
        return [], {"skipped": {"mqtt": "no mosquitto (apt install mosquitto)"}}
    note(f"MQTT: {plan.mqtt.tables} tables tapping once a second → one mosquitto → the venue's page; "
         "one daemon's RSS and tap → feedback with MQTT on against off")
    r = mqtt_tables.measure(tmp / "mqtt", plan.mqtt)
    note("the venue: a late play's league answer with a season kept")
    lg = venue_league.measure(plan.league_season, plan.league_late)
    return [
        figure("venue_late_play_league_ms", [lg["league_after_late_play_p50_ms"]], "ms", None,
               f"{lg['season']} plays kept; {lg['league_after_play_in_order_p50_ms']} ms a play in order"),
        figure("mqtt_tap_to_venue_p99_ms", [r["mqtt_tap_to_venue_p99_ms"]], "ms", 250.0,
               f"{r['tables']} tables, {r['taps']} taps, {r['missed']} never seen on the venue's SSE"),
        figure("mqtt_tap_to_venue_p50_ms", [r["mqtt_tap_to_venue_p50_ms"]], "ms"),
        figure("venue_rss_mb", [r["venue_rss_mb"]], "MiB", None, f"companion venue hearing {r['tables']} tables"),
        figure("mqtt_rss_delta_mb", r["mqtt_rss_delta_mb"], "MiB", 5.0,
               "one daemon's peak RSS, mqtt on − off, pages on (a Pi's default)"),
        figure("mqtt_rss_delta_web_off_mb", r["mqtt_rss_delta_web_off_mb"], "MiB", None,
               "the same with the pages off: paho's import loads OpenSSL (ssl, hashlib), ~5 MiB"),
        figure("mqtt_tap_feedback_ratio", r["mqtt_tap_feedback_ratio"], "×", 1.1,
               f"tap → feedback p99, mqtt on ÷ off, runs interleaved, taps {mqtt_tables.READER_GAP_S * 1000:.0f} ms apart"),
        figure("mqtt_tap_feedback_ratio_back_to_back", r["mqtt_tap_feedback_ratio_back_to_back"], "×", None,
               "the same, each tap as soon as the loop is idle (the link's threads may be busy)"),
    ], {"mqtt_taps_missed": r["missed"]}


def bench_venue(plan: Plan, tmp: Path) -> tuple[list[Figure], dict[str, Any]]:
    """A convention: 1,000 light tables, each a state a second, through one mosquitto
    to the venue; with ``--before DIR`` a second venue from that checkout hears the
    same tables at the same time (mqtt_tables.venue_scale)."""
    from qa.reliability.broker import MOSQUITTO

    if MOSQUITTO is None:
        return [], {"skipped": {"venue": "no mosquitto (apt install mosquitto)"}}
    seconds = plan.venue_seconds
    note(f"the venue: a convention's {plan.venue_tables:,} light tables for {seconds:g} s"
         + (f", beside the venue of {plan.before}" if plan.before else ""))
    c = mqtt_tables.venue_scale(tmp / "convention", seconds, plan.venue_tables, light=True, before=plan.before,
                                lead_s=plan.venue_lead_s)
    figures = []
    for suffix, whose in (("", "this checkout"), *((("_before", str(plan.before)),) if plan.before else ())):
        figures += [
            figure(f"venue_cpu_ms_per_play{suffix}", c[f"venue_cpu_ms_per_play_windows{suffix}"] or [float("nan")],
                   "ms", 0.25 if not suffix else None,
                   f"{whose}: CPU s ÷ the {c[f'venue_plays_kept{suffix}']:,} plays it kept as they tapped (10 s windows, 6 in quick) of "
                   f"{c['tables']:,} tables; p99 tap → venue {c[f'mqtt_tap_to_venue_p99_ms{suffix}']:.0f} ms"),
            figure(f"convention_tap_to_venue_p99_ms{suffix}", [c[f"mqtt_tap_to_venue_p99_ms{suffix}"]], "ms", 250.0,
                   f"{whose}: {c['taps']} taps, {c[f'missed{suffix}']} never seen; a plain subscriber's "
                   f"p99 {c['mqtt_tap_to_plain_subscriber_p99_ms']:.0f} ms"),
            figure(f"convention_venue_cpu_pct{suffix}", [c[f"venue_cpu_pct{suffix}"]], "%", None,
                   "of one core, while the tables tap"),
            figure(f"convention_board_answer_p99_ms{suffix}", [c[f"board_answer_p99_ms{suffix}"]], "ms", None,
                   f"GET /api/venue, {c[f'board_answers{suffix}']} answers (p50 {c[f'board_answer_p50_ms{suffix}']:.0f} ms)"),
        ]
    if plan.before:
        figures.append(figure("venue_cpu_ms_per_play_ratio", [c["venue_cpu_ms_per_play_ratio"]], "×", None,
                              "this checkout ÷ the one before, the same tables at the same time"))
    return figures, {"venue_convention": c}


def bench_imports(tmp: Path, top: int = 6) -> dict[str, Any]:
    note("start-up imports (python -X importtime)")
    total_ms, offenders, own = startup.import_profile(tmp / "importtime")
    bare = startup.bare_python_rss_mb()
    rows = []
    for o in offenders[:top]:
        rows.append({"module": o.module, "importer": o.importer, "ms": round(o.ms, 1),
                     "rss_mb": round(max(0.0, startup.import_rss_mb(o.module) - bare), 1)})
    own_top = sorted(own.items(), key=lambda kv: -kv[1])[:3]
    return {"import_total_ms": round(total_ms, 1), "import_offenders": rows,
            "project_module_ms": {k: round(v, 1) for k, v in own_top}, "bare_python_rss_mb": round(bare, 1)}


def _fmt(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def table(figures: list[Figure], extra: dict[str, Any], size: str) -> str:
    out = [f"Benchmarks{'' if size == 'full' else f' ({size})'}: median of runs [min–max]", ""]
    out.append(f"{'figure':28} {'median':>9} {'min–max':>19} {'unit':5} {'goal':>8}  {'':6} note")
    for f in figures:
        rng = f"{_fmt(min(f.runs))}–{_fmt(max(f.runs))}" if len(f.runs) > 1 else ""
        goal = f"≤ {f.goal:g}" if f.goal is not None else ""
        status = {True: "met", False: "MISSED", None: ""}[f.met]
        out.append(f"{f.key:28} {_fmt(f.median):>9} {rng:>19} {f.unit:5} {goal:>8}  {status:6} {f.note}")
    imp = extra.get("import_offenders")
    if imp:
        out += ["", f"Start-up imports: {extra['import_total_ms']} ms under -X importtime "
                f"(bare python: {extra['bare_python_rss_mb']} MiB RSS); largest outside modules:"]
        for row in imp:
            out.append(f"  {row['module']:28} {row['ms']:6.1f} ms  +{row['rss_mb']:4.1f} MiB  from {row['importer']}")
        own = ", ".join(f"{k} {v} ms" for k, v in extra["project_module_ms"].items())
        out.append(f"  project modules' own time, largest: {own}")
    return "\n".join(out)


PARTS = ("taps", "sd_card", "voice", "daemon", "night", "engines", "web", "mqtt", "venue", "imports")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="a short version for people (a few minutes)")
    size.add_argument("--smoke", action="store_true",
                      help="for the test that the bench runs: every section at its smallest, figures meaningless")
    parser.add_argument("--json", action="store_true", help="end with one JSON object of every figure")
    parser.add_argument("--only", choices=PARTS, action="append",
                        help="run only this part (again for more); default: every part")
    parser.add_argument("--before", type=Path, metavar="DIR",
                        help="a checkout (git archive main | tar -x -C DIR) run beside this one: the venue, "
                             "the same tables at the same time; the resume, interleaved starts on one journal")
    args = parser.parse_args(argv)
    parts = args.only or PARTS
    plan = replace(SIZES["smoke" if args.smoke else "quick" if args.quick else "full"], before=args.before)
    started = time.monotonic()
    figures: list[Figure] = []
    extra: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp_name:
        tmp = Path(tmp_name)
        benches = {"taps": lambda: bench_taps(plan), "sd_card": lambda: bench_sd_card(plan),
                   "voice": lambda: bench_voice(plan),
                   "daemon": lambda: bench_daemon(plan, tmp), "night": lambda: bench_night(plan),
                   "engines": lambda: bench_engines(plan), "web": lambda: bench_web(plan, tmp),
                   "mqtt": lambda: bench_mqtt(plan, tmp), "venue": lambda: bench_venue(plan, tmp)}
        for name, part in benches.items():
            if name in parts:
                figs, info = part()
                figures += figs
                extra.setdefault("skipped", {}).update(info.pop("skipped", {}))
                extra.update(info)
        if "imports" in parts:
            extra.update(bench_imports(tmp))
    extra["seconds"] = round(time.monotonic() - started, 1)
    print(table(figures, extra, plan.size))
    for part, why in extra.get("skipped", {}).items():
        print(f"skipped: {part} ({why})")
    note(f"done in {extra['seconds']} s")
    if args.json:
        result: dict[str, Any] = {f.key: round(f.median, 4) for f in figures}
        result["quick"] = plan.quick  # --smoke too: not the full run
        result["runs"] = {f.key: [round(r, 4) for r in f.runs] for f in figures}
        result["goals"] = {f.key: {"goal": f.goal, "met": f.met} for f in figures if f.goal is not None}
        result.update(extra)
        print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
