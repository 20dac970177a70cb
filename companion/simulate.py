"""Table scripts: replay taps, presses and waits on simulated hardware and a
virtual clock, and write the event log (DESIGN.md contract).

The daemon's own loop, session, journal and gpiozero panel run; only the
reader (a ``SimulatedReader``), the pins (gpiozero's MockFactory) and time
(a ``VirtualClock``) are simulated.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import yaml

from companion import config as configmod
from companion import tags
from companion.app import App, build
from companion.clock import VirtualClock
from companion.config import ConfigError

STEP_KINDS = ("tap", "uid", "press", "hold", "wait", "unplug", "plug")
MAX_WAIT_S = 7 * 24 * 3600  # a week: longer than any gap a table script could mean (a new games night is 6 h)


def load_script(path: Path) -> tuple[dict[str, Any], list[tuple[int, str, Any]]]:
    """(config overrides + seed, [(line, kind, value)]), refusing a bad script
    with its file and line."""
    node = configmod.read_yaml(path)
    name = str(path)
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(name, 1, "a table script is a mapping with 'steps:'")
    top: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for knode, vnode in node.value:
        key = knode.value if isinstance(knode, yaml.ScalarNode) else None
        if key in top:
            raise ConfigError(name, knode.start_mark.line + 1, f"{key!r} is given twice")
        if key not in ("config", "seed", "steps", "title", "expect"):
            raise ConfigError(name, knode.start_mark.line + 1,
                              f"unknown script key {key!r} (keys: config, seed, steps, title, expect)")
        top[key] = (knode, vnode)
    overrides: dict[str, Any] = {}
    if "config" in top:  # checked here, so a mistake names the script and its line
        configmod.merge_node(configmod.defaults(), top["config"][1], name)
        overrides = dict(configmod.plain(top["config"][1], name) or {})
    if "seed" in top:
        configmod.merge_node(configmod.defaults(), yaml.MappingNode("tag:yaml.org,2002:map", [top["seed"]]), name)
        overrides["seed"] = configmod.plain(top["seed"][1], name)
    steps_node = top.get("steps", (None, None))[1]
    if not isinstance(steps_node, yaml.SequenceNode):
        line = steps_node.start_mark.line + 1 if steps_node is not None else None
        raise ConfigError(name, line, "'steps:' must be a list of steps")
    steps = []
    for item in steps_node.value:
        line = item.start_mark.line + 1
        step = configmod.plain(item, name)
        if not isinstance(step, dict) or len(step) != 1:
            raise ConfigError(name, line, f"a step is one of {', '.join(STEP_KINDS)}: value")
        (kind, value), = step.items()
        if kind == "uid":  # the raw text: YAML would read 04123456 as an octal number
            value = item.value[0][1].value
        if kind not in STEP_KINDS:
            raise ConfigError(name, line, f"unknown step {kind!r} (steps: {', '.join(STEP_KINDS)})")
        if kind == "wait" and (isinstance(value, bool) or not isinstance(value, (int, float))
                               or not 0 <= value <= MAX_WAIT_S):  # also refuses .nan and .inf
            raise ConfigError(name, line, f"wait takes a number of seconds from 0 to {MAX_WAIT_S}, not {value!r}")
        if kind == "uid" and not tags.valid_uid(value):
            raise ConfigError(name, line, f"uid takes a tag UID in hex (e.g. 04A1B2C3D4E5F6), not {value!r}")
        if kind in ("tap", "uid", "press", "hold") and not isinstance(value, str):
            raise ConfigError(name, line, f"{kind} takes a name")
        if kind in ("press", "hold") and value not in ("next", "back", "repeat"):
            raise ConfigError(name, line, f"no button {value!r} (next, back, repeat)")
        steps.append((line, kind, value))
    return overrides, steps


class Simulation:
    """A daemon on simulated hardware and virtual time."""

    def __init__(self, cfg: dict[str, Any], state: Path, log: Callable[[dict[str, Any]], None],
                 voice: Any = None) -> None:
        from hardware.sim_reader import SimulatedReader
        from voice.base import RecordingVoice

        cfg = dict(cfg)
        cfg["panel"] = {**cfg["panel"], "backend": "mock"}
        self.clock = VirtualClock()
        self.reader = SimulatedReader()
        self.voice = voice or RecordingVoice()
        self.app: App = build(cfg, clock=self.clock, log=log, voice=self.voice, reader=self.reader,
                              journal_path=state / "journal.sqlite")
        self.loop = self.app.loop
        self.loop.start()
        self.reader.start(self.loop.submit)
        self.loop.pump()

    def step(self, kind: str, value: Any) -> None:
        if kind == "tap":
            self.reader.present(text=value)
        elif kind == "uid":
            self.reader.present(uid=str(value))
        elif kind == "press":
            self.app.panel.press(value)
        elif kind == "hold":
            self.app.panel.hold(value, self.app.panel.hold_back_s * 1.5)
        elif kind == "wait":
            self.loop.advance_to(self.clock.now() + float(value))
        elif kind == "unplug":
            self.reader.unplug()
        elif kind == "plug":
            self.reader.plug()
        self.loop.pump()

    def close(self) -> None:
        self.app.close()


def run_script(path: Path, *, state: Path | None = None, pretty: bool = False,
               out: TextIO = sys.stdout, overrides: dict[str, Any] | None = None,
               config_paths: Sequence[Path] = ()) -> int:
    from companion.pretty import render

    script_overrides, steps = load_script(path)
    # Shipped defaults, then files named with --config, then the script's own config:
    # never the machine's /etc settings, so a script logs the same everywhere.
    cfg = configmod.load([*configmod.shipped_paths(), *config_paths], {**script_overrides, **(overrides or {})})

    def log(ev: dict[str, Any]) -> None:
        if pretty:
            text = render(ev)
            if text:
                print(text, file=out, flush=True)
        else:
            print(json.dumps(ev, ensure_ascii=False), file=out, flush=True)

    with tempfile.TemporaryDirectory(prefix="companion-sim-") as tmp:
        sim = Simulation(cfg, Path(state) if state else Path(tmp), log)
        try:
            for _line, kind, value in steps:
                sim.step(kind, value)
        finally:
            sim.close()
    return 0
