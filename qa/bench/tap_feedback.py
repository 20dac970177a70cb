"""Tap → feedback latency: from the simulated reader delivering a tag to the
first voice or LED request the table loop issues for it.

The daemon's own pieces run as in ``companion run --simulate``: the table loop
on its own thread (``TableLoop.run``), the reader delivering from another
(this one), the real session, engines, journal (WAL, synchronous=FULL, on this
disk) and gpiozero panel on MockFactory.  Only time is virtual, so the One
Night night and the vote count pass at once: to "wait" we move the virtual
clock to the next timer and wake the loop with a no-op reader status.

Between steps we wait until the loop is idle (a barrier event it handles after
everything before it), so each tap meets an idle loop, as a human-paced tap
does, and its latency is its own.  The journal's ``append`` (one fsynced
transaction per accepted input) is timed too: it is the cost the DESIGN puts
before feedback on purpose.  ``journal_class``: the journal on a modeled SD
card instead of this disk (``qa.reliability.powercut.sd_card_journal``: every
sync 7–76 ms longer), for what a table on a Pi waits for.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qa.bench import flows
from qa.bench.stats import config, percentile

TIMEOUT_S = 10.0  # a step the loop never answers means the flow is out of step


class Probe:
    """Armed just before a tag is delivered; the first request after it stops it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.armed_at: int | None = None
        self.first: int | None = None  # ns of the first LED/voice request
        self.first_voice: int | None = None
        self.answered = threading.Event()

    def arm(self) -> None:
        with self._lock:
            self.first = self.first_voice = None
            self.answered.clear()
            self.armed_at = time.perf_counter_ns()

    def hit(self, voice: bool) -> None:
        now = time.perf_counter_ns()
        if self.armed_at is None:
            return
        with self._lock:
            if voice and self.first_voice is None:
                self.first_voice = now
            if self.first is None:
                self.first = now
                self.answered.set()


class TimedFeedback:
    """The panel, with each LED/buzzer request noted before it is passed on,
    and the time the panel takes to take it (gpiozero starts a background
    blink/beep thread, stopping and joining the previous one)."""

    def __init__(self, panel: Any, probe: Probe, panel_ms: list[float]) -> None:
        self.panel, self.probe, self.panel_ms = panel, probe, panel_ms

    def led(self, name: str, on: bool, flash: bool = False) -> None:
        self.probe.hit(voice=False)
        t0 = time.perf_counter_ns()
        self.panel.led(name, on, flash=flash)
        self.panel_ms.append((time.perf_counter_ns() - t0) / 1e6)

    def beep(self, long: bool = False) -> None:
        self.probe.hit(voice=False)
        t0 = time.perf_counter_ns()
        self.panel.beep(long=long)
        self.panel_ms.append((time.perf_counter_ns() - t0) / 1e6)

    def close(self) -> None:
        self.panel.close()


class TimedVoice:
    def __init__(self, probe: Probe) -> None:
        self.probe = probe

    def speak(self, line: Any) -> None:
        self.probe.hit(voice=True)

    def ambience(self, sound: str, on: bool) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class Barrier:
    """Reached by the loop after everything submitted before it (a callable submitted)."""

    done: threading.Event = field(default_factory=threading.Event)
    step: str | None = None
    timers: dict[str, float] = field(default_factory=dict)


@dataclass
class TapRun:
    feedback_ms: list[float] = field(default_factory=list)  # every tap
    voice_ms: list[float] = field(default_factory=list)  # taps that are answered out loud
    append_ms: list[float] = field(default_factory=list)  # every journal append
    panel_ms: list[float] = field(default_factory=list)  # every LED/buzzer call into the panel
    append_syncs: list[int] = field(default_factory=list)  # syncs in each append (a modeled card only)
    accepted: int = 0
    rejected: int = 0
    games: int = 0


class ThreadedTable:
    """A ``Simulation`` whose loop runs on its own thread, driven like a table."""

    def __init__(self, state: Path, run: TapRun, journal_class: Any = None,
                 overrides: dict[str, Any] | None = None, gap_s: float = 0.0,
                 mirror_sync: Any = None) -> None:
        from companion.app.simulate import Simulation
        from hardware.sim_reader import SimulatedReader

        self.run_stats = run
        self.gap_s = gap_s  # idle time before each tap, beyond the loop's (``measure``)
        self.probe = Probe()
        self._devnull = open(os.devnull, "w")  # noqa: SIM115 - closed in close()
        self.sim = Simulation(config(overrides), state, self._log, voice=TimedVoice(self.probe),
                              journal_class=journal_class)
        self.loop = self.sim.loop
        if mirror_sync is not None:  # the journal's mirror on a modeled card (journal: mirror:)
            self.sim.app.journal.mirror.sync = mirror_sync
        self.reader: SimulatedReader = self.sim.reader
        sink = self.sim.app.sinks["panel"]  # the panel, as the router's panel sink drives it
        sink.panel = TimedFeedback(sink.panel, self.probe, run.panel_ms)

        def observe(stage: str, item: Any, info: Any) -> None:
            if stage == "journaled":  # the fsynced append, timed by the loop itself
                run.append_ms.append(info * 1000)

        self.loop.observers.append(observe)
        self._count_syncs(run)
        self.thread = threading.Thread(target=self.loop.run, name="table-loop", daemon=True)
        self.thread.start()

    def _count_syncs(self, run: TapRun) -> None:
        """On a modeled card (it keeps every sync it made): how many syncs each
        append waited for — one, unless its commit did more than append."""
        journal = self.sim.app.journal
        syncs = getattr(journal, "syncs_ms", None)
        if syncs is None:
            return
        append = journal.append

        def counted(*args: Any, **kw: Any) -> int:
            before = len(syncs)
            try:
                return append(*args, **kw)
            finally:
                run.append_syncs.append(len(syncs) - before)

        journal.append = counted  # type: ignore[method-assign]

    def _log(self, ev: dict[str, Any]) -> None:
        # As the daemon does with --json: one line per event, flushed.
        print(json.dumps(ev, ensure_ascii=False), file=self._devnull, flush=True)
        kind = ev["event"]
        if kind == "accepted":
            self.run_stats.accepted += 1
        elif kind == "rejected":
            self.run_stats.rejected += 1
        elif kind in ("game_over", "onw_result"):
            self.run_stats.games += 1

    def settle(self) -> Barrier:
        barrier = Barrier()

        def reached() -> None:  # on the loop's thread, after everything before it
            engine = self.loop.table.engine
            barrier.step = engine.state.step if engine is not None else None
            barrier.timers = self.loop.pending_timers()
            barrier.done.set()

        self.loop.submit(reached)
        if not barrier.done.wait(TIMEOUT_S):
            raise RuntimeError("the table loop did not come back")
        return barrier

    def tap(self, kind: str, value: str) -> None:
        if self.gap_s:
            time.sleep(self.gap_s)
        if self.loop.table.eyes_closed:
            # At night a refused tap is neither heard nor seen (no tell): there is
            # no feedback to time, only the refusal to let through.
            self.reader.present(**{"text" if kind == "tap" else "uid": value})
            self.settle()
            return
        self.probe.arm()
        if kind == "tap":
            delivered = self.reader.present(text=value)
        else:
            delivered = self.reader.present(uid=value)
        if not delivered or not self.probe.answered.wait(TIMEOUT_S):
            raise RuntimeError(f"no feedback for {kind} {value}")
        self.settle()  # the voice request, if any, comes after the LED
        start, first, voice = self.probe.armed_at, self.probe.first, self.probe.first_voice
        self.probe.armed_at = None
        assert start is not None and first is not None
        self.run_stats.feedback_ms.append((first - start) / 1e6)
        if voice is not None:
            self.run_stats.voice_ms.append((voice - start) / 1e6)

    def until(self, step: str) -> None:
        from companion.core.events import ReaderStatus

        state = self.settle()
        while state.step != step:
            if not state.timers:
                raise RuntimeError(f"stuck in {state.step}, waiting for {step}")
            self.sim.clock.set(max(self.sim.clock.now(), min(state.timers.values())))
            self.loop.submit(ReaderStatus(True, "simulated reader"))  # a no-op that wakes the loop
            state = self.settle()

    def play(self, flow: list[flows.Step]) -> None:
        for kind, value in flow:
            if kind in ("tap", "uid"):
                self.tap(kind, value)
            elif kind == "press":
                self.sim.app.panel.press(value)
                self.settle()
            elif kind == "until":
                self.until(value)
            else:
                raise ValueError(f"step {kind} is not used by the benchmark flows")

    def close(self) -> None:
        self.loop.stop()
        self.thread.join(TIMEOUT_S)
        self.sim.close()
        self._devnull.close()


def measure(taps: int, journal_class: Any = None, overrides: dict[str, Any] | None = None,
            gap_s: float = 0.0, mirror_sync: Any = None) -> TapRun:
    """Play Seven Knights and One Night games back to back on one journal
    until at least ``taps`` taps were answered (``overrides``: of the shipped
    config, e.g. ``mqtt:``, qa/bench/mqtt_tables.py).  Each tap comes once the
    loop is idle; ``gap_s``: and that long after, so that the process's other
    threads (an MQTT link's) are idle too, as between two taps on a reader.
    ``mirror_sync``: with the journal's mirror, its fsync this (a modeled card's)."""
    run = TapRun()
    games = [flows.seven_knights(), flows.one_night()]
    expected_games = 0
    with tempfile.TemporaryDirectory(prefix="bench-taps-") as tmp:
        if mirror_sync is not None:
            (Path(tmp) / "mirror").mkdir()
            overrides = {**(overrides or {}), "journal": {"mirror": str(Path(tmp) / "mirror")}}
        table = ThreadedTable(Path(tmp) / "state", run, journal_class, overrides, gap_s, mirror_sync)
        try:
            i = 0
            while len(run.feedback_ms) < taps:
                table.play(games[i % 2])
                expected_games += 1
                i += 1
        finally:
            table.close()
    if run.games != expected_games:
        raise RuntimeError(f"{expected_games} games played but {run.games} finished: a flow is out of step")
    return run


def summary(run: TapRun) -> dict[str, float]:
    return {
        "tap_feedback_p50_ms": percentile(run.feedback_ms, 50),
        "tap_feedback_p99_ms": percentile(run.feedback_ms, 99),
        "tap_voice_p99_ms": percentile(run.voice_ms, 99),
        "journal_append_p50_ms": percentile(run.append_ms, 50),
        "journal_append_p99_ms": percentile(run.append_ms, 99),
        "panel_call_p99_ms": percentile(run.panel_ms, 99),
    }


if __name__ == "__main__":
    r = measure(1000)
    print(len(r.feedback_ms), r.accepted, r.rejected, r.games, summary(r))
