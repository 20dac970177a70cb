"""One Night cue lateness on the real clock.

The daemon's pieces (``build``: session, engines, journal on this disk, gpiozero
panel on MockFactory, simulated reader) run with ``RealClock`` and
``TableLoop.run`` on its own thread, as ``companion run`` runs them.  A short
night, within what the config allows (``window_s`` 1, ``pace`` 0.25: turns of
0.25 s, pauses of 0.75 s), then ``next`` to end the discussion early (its
shortest allowed length is half a minute) and the vote count: about five
seconds a run.

Lateness of a cue = the monotonic time its ``say`` event is logged minus the
time its timer was due.  The due time is the loop's own, and the loop measures
each timer from the *scheduled* time of the one that set it, so a late cue does
not move the schedule of the next: lateness is against the script, not against
the previous cue.  Journaling the timer input (an fsync) comes before the cue,
as it does for every input.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qa.bench.stats import config, percentile

OPTIONS = {"window_s": 1, "pace": 0.25}  # the shortest night the config accepts
MORNING = "onw.night.morning"
LAST_CUE = "onw.vote.three"


@dataclass(frozen=True)
class Cue:
    key: str
    late_ms: float  # say logged − timer due
    wake_ms: float  # the loop took the timer − timer due
    journal_ms: float  # the timer input's fsynced append, before the cue


def one_night(state: Path, listeners: Sequence[Callable[[Any], None]] = ()) -> list[Cue]:
    """Play one night on the real clock; every line spoken on a timer.
    ``listeners`` are subscribed to the table's router, as the daemon's
    wiring subscribes its sinks (the background fill's gate)."""
    from companion.app.wiring import build
    from companion.core.events import TimerFired
    from companion.runtime.clock import RealClock
    from hardware.sim_reader import SimulatedReader
    from voice.base import RecordingVoice

    cfg = config({"games": {"one-night": OPTIONS}, "panel": {"backend": "mock"}})
    clock = RealClock()
    due: list[float | None] = [None]  # the due time of the timer being handled
    wake = [0.0]
    appended = [0.0]
    cues: list[Cue] = []
    morning, done = threading.Event(), threading.Event()

    def log(ev: dict[str, Any]) -> None:
        if ev["event"] == "say":
            at = due[0]
            if at is not None:
                cues.append(Cue(ev["key"], (clock.now() - at) * 1000, wake[0] * 1000, appended[0] * 1000))
            if ev["key"] == MORNING:
                morning.set()
            elif ev["key"] == LAST_CUE:
                done.set()

    reader = SimulatedReader()
    app = build(cfg, clock=clock, log=log, voice=RecordingVoice(), reader=reader,
                journal_path=state / "journal.sqlite")
    loop = app.loop
    for listener in listeners:
        app.router.subscribe(listener)

    def observe(stage: str, item: Any, info: Any) -> None:
        # The loop's own hooks: a timer input's due time as it starts, the
        # journal's fsynced append once it is durable, the end of its outputs.
        if stage == "input" and isinstance(item, TimerFired) and info is not None:
            due[0], wake[0], appended[0] = info, clock.now() - info, 0.0
        elif stage == "journaled" and due[0] is not None:
            appended[0] += info
        elif stage == "done" and isinstance(item, TimerFired):
            due[0] = None

    loop.observers.append(observe)
    loop.start()
    reader.start(loop.inbox)
    thread = threading.Thread(target=loop.run, kwargs={"tick": lambda: None}, name="table-loop", daemon=True)
    thread.start()
    try:
        for ident in ("game/one-night", "player/red", "player/blue", "player/green", "player/yellow",
                      "player/purple"):
            reader.present(text=ident)
        app.panel.press("next")  # the deal
        time.sleep(0.3)  # a person reads the deal, then starts the night
        app.panel.press("next")
        if not morning.wait(60):
            raise RuntimeError(f"the night did not reach {MORNING}: {[c.key for c in cues]}")
        time.sleep(0.5)
        app.panel.press("next")  # end the discussion: the vote count follows on its timers
        if not done.wait(60):
            raise RuntimeError(f"the night did not reach {LAST_CUE}: {[c.key for c in cues]}")
    finally:
        loop.stop()
        thread.join(10)
        app.close()
    return cues


def measure(runs: int, listeners: Sequence[Callable[[Any], None]] = ()) -> list[list[Cue]]:
    """Every cue, one list per night."""
    out = []
    for i in range(runs):
        with tempfile.TemporaryDirectory(prefix=f"bench-night-{i}-") as tmp:
            out.append(one_night(Path(tmp), listeners))
    return out


def p99(night: list[Cue]) -> float:
    return percentile([c.late_ms for c in night], 99)


def worst(nights: list[list[Cue]]) -> Cue:
    return max((c for night in nights for c in night), key=lambda c: c.late_ms)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        for c in one_night(Path(tmp)):
            print(f"{c.key:32} {c.late_ms:7.3f} ms late (wake {c.wake_ms:.3f}, journal {c.journal_ms:.3f})")
        print(time.monotonic() - t0)
