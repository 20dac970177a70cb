"""Scripts run in this process on ``companion.app.simulate.Simulation`` (virtual
time): the reference runs the crash campaign compares against, and helpers
the fuzz, durability and reader tests share.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.app import config as configmod
from companion.app.simulate import Simulation
from companion.core.events import (
    ButtonPressed,
    Drawn,
    Housekeeping,
    TimerFired,
    input_from_json,
    input_to_json,
)
from companion.runtime.journal import Journal
from qa.reliability.scripts import ONW_FAST, PANEL_FAST, RETRY_S, Script, Step

MAX_TRIES = 400  # × RETRY_S of virtual time: far longer than any night or vote count


def campaign_overrides(seed: int = 1) -> dict[str, Any]:
    return {"seed": seed, "games": ONW_FAST, "panel": PANEL_FAST}


def load_config(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The shipped defaults plus ``overrides``, as ``companion simulate`` loads them."""
    return configmod.load(configmod.default_paths()[:1], overrides or campaign_overrides())


def close_quickly(sim: Simulation) -> threading.Thread:
    """Close a simulation as ``App.close`` does, but the panel's device on a
    thread of its own (gpiozero joins its button threads slowly, ~0.15 s);
    that thread is returned, for a test that waits for it."""
    app = sim.app
    app.journal.close()
    if app.lock is not None:
        app.lock.release()
    app.reader.close()
    panel = app.sinks.get("panel")
    for name, device in reversed(app.sinks.items()):
        if name != "panel":
            device.close()
    closing = threading.Thread(target=panel.close if panel is not None else app.panel.close, daemon=True,
                               name="panel-close")
    closing.start()
    return closing


def response(events: list[dict[str, Any]], start: int) -> dict[str, Any] | None:
    """The accepted/rejected event among ``events[start:]``, if any."""
    return next((e for e in events[start:] if e["event"] in ("accepted", "rejected")), None)


class Runner:
    """A Simulation plus its event log, driven one ``Step`` at a time."""

    def __init__(self, state: Path, cfg: dict[str, Any] | None = None) -> None:
        self.state = state
        self.events: list[dict[str, Any]] = []
        self.sim = Simulation(cfg if cfg is not None else load_config(), state, self.events.append)

    def step(self, step: Step) -> dict[str, Any] | None:
        """Do one step once; returns its accepted/rejected event (None for
        waits, plug/unplug, and taps on an unplugged reader)."""
        start = len(self.events)
        if step.kind == "hold":
            # What the panel reports for a long press: ``hold-back`` for back, the
            # button itself for the others.  The panel's own ``hold`` (what
            # Simulation.step uses) holds the mock pin for real seconds.
            name = "hold-back" if step.value == "back" else str(step.value)
            self.sim.loop.submit(ButtonPressed(name))
            self.sim.loop.pump()
        else:
            self.sim.step(step.kind, step.value)
        return response(self.events, start)

    def run(self, step: Step) -> tuple[dict[str, Any] | None, float]:
        """Do one step; a ``retry`` step again every RETRY_S of virtual time
        until accepted.  Returns its (last) answer and the time it waited."""
        resp = self.step(step)
        waited = 0.0
        tries = 1
        while step.retry and (resp is None or resp["event"] != "accepted") and tries < MAX_TRIES:
            self.wait(RETRY_S)
            waited += RETRY_S
            resp = self.step(step)
            tries += 1
        return resp, waited

    def wait(self, seconds: float) -> None:
        self.sim.step("wait", seconds)

    def close(self) -> threading.Thread:
        return close_quickly(self.sim)


@dataclass
class Reference:
    """What an uninterrupted run of a script did."""

    responses: list[dict[str, Any] | None]  # per step, its (last) accepted/rejected event
    waits: dict[int, float]  # virtual seconds a retry step waited before it was taken
    phases: list[str]  # the table's phase after each step (idle | gathering | playing)
    inputs: list[dict[str, str]]  # the journal's inputs, timers left out
    plays: list[dict[str, Any]]  # normalised (see ``normalise_plays``)
    events: list[dict[str, Any]] = field(repr=False, default_factory=list)

    @property
    def journaled_steps(self) -> list[int]:
        """Index of the step behind each journaled input, in journal order."""
        return [i for i, r in enumerate(self.responses) if journaled(r)]


def same_input(printed: str, journaled_label: str) -> bool:
    """An accepted event names its journal entry, or — where the game hides a
    secret in public (``Engine.public_label``) — a pattern the entry fits."""
    if printed.endswith("/*"):
        return journaled_label.startswith(printed[:-1])
    return printed == journaled_label


def journaled(resp: dict[str, Any] | None) -> bool:
    """An accepted event stands for a journal entry, except ``repeat`` (which changes nothing)."""
    return resp is not None and resp["event"] == "accepted" and resp["input"] != "repeat"


def run_script(script: Script | Iterable[Step], state: Path, cfg: dict[str, Any] | None = None) -> Reference:
    steps = script.steps if isinstance(script, Script) else list(script)
    runner = Runner(state, cfg)
    responses: list[dict[str, Any] | None] = []
    waits: dict[int, float] = {}
    phases: list[str] = []
    try:
        for i, step in enumerate(steps):
            resp, waited = runner.run(step)
            if waited:
                waits[i] = waited
            responses.append(resp)
            phases.append(runner.sim.loop.table.state.phase)
    finally:
        runner.close()
    inputs, plays = read_journal(state)
    return Reference(responses, waits, phases, inputs, plays, runner.events)


# ------------------------------------------------------------- the journal
def read_journal(state: Path) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """(the table's inputs — no timers, draws or housekeeping — and normalised plays)
    of the journal in ``state``."""
    journal = Journal(state / "journal.sqlite")
    try:
        inputs = [input_to_json(e.input) for e in journal.entries()
                  if not isinstance(e.input, TimerFired | Housekeeping | Drawn)]
        plays = normalise_plays(journal.plays())
    finally:
        journal.close()
    return inputs, plays


def normalise_plays(plays: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Plays without what depends on the wall clock (date, duration) or on row ids."""
    return [{"game": p["game"], "rules": p["rules"],
             "players": [(q["name"], q["score"], q["winner"], q["startPlayer"]) for q in p["players"]]}
            for p in plays]


def totals(plays: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """What ``companion scores`` adds up: per game, per player, the sum of scores."""
    out: dict[str, Counter[str]] = {}
    for p in plays:
        c = out.setdefault(p["game"], Counter())
        for name, score, _winner, _start in p["players"]:
            c[name] += score
    return {g: dict(c) for g, c in out.items()}


def label(inp: dict[str, Any]) -> str:
    """An input as the event log names it."""
    return input_from_json(inp).label
