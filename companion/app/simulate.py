"""Table scripts: replay taps, presses and waits on simulated hardware and a
virtual clock, and write the event log (DESIGN.md contract).

The daemon's own loop, table, journal and gpiozero panel run; only the
reader (a ``SimulatedReader``), the pins (gpiozero's MockFactory) and time
(a ``VirtualClock``) are simulated.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TextIO

import yaml

from companion.app import config as configmod
from companion.app.config import ConfigError
from companion.app.wiring import App, build, make_reader, recording_voice, simulated
from companion.core import tags
from companion.core.events import Housekeeping, Submit
from companion.core.table import NAMED, PAGES_ASSUMED
from companion.runtime.clock import VirtualClock

STEP_KINDS = ("tap", "uid", "press", "hold", "wait", "unplug", "plug", "submit", "name")
SCRIPT_KEYS = ("config", "seed", "draws", "steps", "title", "expect")
MAX_WAIT_S = 7 * 24 * 3600  # a week: longer than any gap a table script could mean (a new games night is 6 h)


class Script(NamedTuple):
    overrides: dict[str, Any]  # config overrides, the seed among them
    steps: list[tuple[int, str, Any]]  # (line, kind, value)
    draws: dict[str, Any]  # secret draws fixed by name


def load_script(path: Path) -> Script:
    """A table script, refusing a bad one with its file and line."""
    node = configmod.read_yaml(path)
    name = str(path)
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(name, 1, "a table script is a mapping with 'steps:'")
    top: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for knode, vnode in node.value:
        key = knode.value if isinstance(knode, yaml.ScalarNode) else None
        if key in top:
            raise ConfigError(name, knode.start_mark.line + 1, f"{key!r} is given twice")
        if key not in SCRIPT_KEYS:
            raise ConfigError(name, knode.start_mark.line + 1,
                              f"unknown script key {key!r} (keys: {', '.join(SCRIPT_KEYS)})")
        top[key] = (knode, vnode)
    overrides: dict[str, Any] = {}
    if "config" in top:  # checked here, so a mistake names the script and its line
        configmod.merge_node(configmod.defaults(), top["config"][1], name)
        overrides = dict(configmod.plain(top["config"][1], name) or {})
    if "seed" in top:
        configmod.merge_node(configmod.defaults(), yaml.MappingNode("tag:yaml.org,2002:map", [top["seed"]]), name)
        overrides["seed"] = configmod.plain(top["seed"][1], name)
    draws = _draws(top["draws"][1], name) if "draws" in top else {}
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
        if kind == "uid":  # as written: YAML would read 04123456 as an octal number
            value = configmod.as_written(item.value[0][1], name)
        if kind not in STEP_KINDS:
            raise ConfigError(name, line, f"unknown step {kind!r} (steps: {', '.join(STEP_KINDS)})")
        if kind == "wait" and (isinstance(value, bool) or not isinstance(value, (int, float))
                               or not 0 <= value <= MAX_WAIT_S):  # also refuses .nan and .inf
            raise ConfigError(name, line, f"wait takes a number of seconds from 0 to {MAX_WAIT_S}, not {value!r}")
        if kind == "uid" and not (isinstance(value, str) and tags.valid_uid(value)):
            raise ConfigError(name, line, f"uid takes a tag UID in hex (e.g. 04A1B2C3D4E5F6), not {value!r}")
        if kind in ("tap", "uid", "press", "hold") and not isinstance(value, str):
            raise ConfigError(name, line, f"{kind} takes a name")
        if kind in ("press", "hold") and value not in ("next", "back", "repeat"):
            raise ConfigError(name, line, f"no button {value!r} (next, back, repeat)")
        if kind == "submit":
            value = _submit(value, name, line)
        if kind == "name":
            value = _name(value, name, line)
        steps.append((line, kind, value))
    return Script(overrides, steps, draws)


def _draws(node: yaml.Node, name: str) -> dict[str, Any]:
    """``draws: {NAME: VALUE}``: secret draws fixed for a test (the engine
    checks each value against what it asked for when the draw is made)."""
    value = configmod.plain(node, name)
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ConfigError(name, node.start_mark.line + 1, "draws: maps a draw's name to its value")
    for key, v in value.items():
        if not (isinstance(v, int) and not isinstance(v, bool)) and not (
                isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)):
            raise ConfigError(name, node.start_mark.line + 1,
                              f"draws: {key} must be a whole number or a list of them, not {v!r}")
    return value


def _submit(value: Any, name: str, line: int) -> Submit:
    """``{player: red, bid: 3}`` (the contract's form) or
    ``{player: red, field: bid, value: 3}``: one player's input from their page."""
    if not isinstance(value, dict) or not isinstance(value.get("player"), str):
        raise ConfigError(name, line, "submit takes {player: <id>, <field>: <value>}")
    rest = {k: v for k, v in value.items() if k != "player"}
    if set(rest) == {"field", "value"} and isinstance(rest["field"], str):
        return Submit(value["player"], rest["field"], rest["value"])
    if len(rest) != 1 or not isinstance(next(iter(rest)), str):
        raise ConfigError(name, line, "submit takes {player: <id>, <field>: <value>}, one field at a time")
    (field, v), = rest.items()
    return Submit(value["player"], field, v)


def _name(value: Any, name: str, line: int) -> Housekeeping:
    """``{player: red, name: Aki}``: a player's page sets their display name
    (a string; the table's refusals, as for a page, are in the log)."""
    if not isinstance(value, dict) or set(value) != {"player", "name"} or not all(
            isinstance(v, str) for v in value.values()):
        raise ConfigError(name, line, "name takes {player: <id>, name: <display name>}")
    return Housekeeping(NAMED, {"seat": value["player"], "name": value["name"]})


class Simulation:
    """A daemon on simulated hardware and virtual time."""

    def __init__(self, cfg: dict[str, Any], state: Path, log: Callable[[dict[str, Any]], None],
                 voice: Any = None, draws: dict[str, Any] | None = None,
                 games: Any = None, read_side: Any = None, pages: str = PAGES_ASSUMED,
                 journal_class: Any = None) -> None:
        cfg = dict(cfg)
        cfg["panel"] = {**cfg["panel"], "backend": "mock"}
        self.clock = VirtualClock()
        self.voice = voice or recording_voice()
        self.app: App = build(cfg, clock=self.clock, log=log, voice=self.voice, reader=make_reader(cfg, simulate=True),
                              journal_path=state / "journal.sqlite", draws=draws, games=games,
                              read_side=read_side, pages=pages,  # the pages' (tests/test_web_privacy.py)
                              journal_class=journal_class)
        if (last := self.app.journal.last_wall()) is not None:
            # A resumed journal: the table comes back later the same evening, as a Pi
            # whose clock is right would (a test sets it wrong with jump_wall).
            self.clock.jump_wall(max(0.0, last - self.clock.wall()))
        self.reader, self.panel = simulated(self.app)
        self.loop = self.app.loop
        self.loop.start()
        self.reader.start(self.loop.inbox)
        self.loop.pump()

    def step(self, kind: str, value: Any) -> None:
        if kind == "tap":
            self.reader.present(text=value)
        elif kind == "uid":
            self.reader.present(uid=str(value))
        elif kind == "press":
            self.panel.press(value)
        elif kind == "hold":
            self.panel.hold(value, self.panel.hold_back_s * 1.5)
        elif kind == "wait":
            self.loop.advance_to(self.clock.now() + float(value))
        elif kind == "unplug":
            self.reader.unplug()
        elif kind == "plug":
            self.reader.plug()
        elif kind in ("submit", "name"):
            self.loop.submit(value)  # as a paired page sends it
        self.loop.pump()

    def close(self) -> None:
        self.app.close()


def run_script(path: Path, *, state: Path | None = None, pretty: bool = False,
               out: TextIO = sys.stdout, overrides: dict[str, Any] | None = None,
               config_paths: Sequence[Path] = ()) -> int:
    from companion.app.pretty import render

    script_overrides, steps, draws = load_script(path)
    # Shipped defaults, then files named with --config, then the script's own config:
    # never the machine's /etc settings, so a script logs the same everywhere.
    cfg = configmod.load([*configmod.shipped_paths(), *config_paths], {**script_overrides, **(overrides or {})})

    def log(ev: dict[str, Any]) -> None:
        if pretty:
            text = render(ev, lang=cfg["language"])
            if text:
                print(text, file=out, flush=True)
        else:
            print(json.dumps(ev, ensure_ascii=False), file=out, flush=True)

    with tempfile.TemporaryDirectory(prefix="companion-sim-") as tmp:
        sim = Simulation(cfg, Path(state) if state else Path(tmp), log, draws=draws)
        try:
            for _line, kind, value in steps:
                sim.step(kind, value)
        finally:
            sim.close()
    return 0
