"""The headline says what to do now, also where anyone may act: each such
step has its game's short line (``now.<game>.<step>``, en and ja), never
"Over to the whole table." — short, for one line of the TV's headline
(tests/test_web_tv_now_browser.py holds that it fits)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from companion.app import config
from companion.app.catalogue import line_folders
from companion.app.simulate import Simulation, load_script
from conftest import example_scripts
from voice.lines import Narrator
from web.live import WatchedReadSide

ROOT = Path(__file__).resolve().parent.parent
BETWEEN = ("idle", "gathering")


@functools.cache
def anyone_steps() -> dict[tuple[str, str], dict[str, Any]]:
    """Every (game, step) where anyone may act in the example scripts, with the
    headline's text there and the counts it carries (``whats``)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for script in example_scripts():
        s = load_script(script)
        with tempfile.TemporaryDirectory() as d:
            cfg = config.load([ROOT / "config" / "companion.yaml"], {**(s.overrides or {}), "language": "en"})
            sim = Simulation(cfg, Path(d), lambda e: None, draws=s.draws, read_side=WatchedReadSide())
            try:
                for _, kind, value in s.steps:
                    sim.step(kind, value)
                    public = sim.loop.read_side.public()
                    head = public["headline"]
                    if (not head["anyone"] or head["night"] or not public.get("game") or public.get("confirm")
                            or head["step"] in BETWEEN):
                        continue
                    seen = found.setdefault((public["game"], head["step"]), {"texts": set(), "whats": set()})
                    seen["texts"].add(public["headline_text"])
                    if head["count"]:
                        seen["whats"].add(head["count"]["what"])
            finally:
                sim.close()
    return found


def now_lines(lang: str) -> dict[str, str]:
    return {k: v[0] for k, v in Narrator(line_folders()).lines(lang).items() if k.startswith("now.")}


def test_every_step_anyone_may_act_at_says_what_to_do_now() -> None:
    """Before: "Over to the whole table." at each of them (nineteen steps of the four games)."""
    steps = anyone_steps()
    assert len(steps) >= 15  # the four games' discussions, deals, counts, auctions … are there
    en, ja = now_lines("en"), now_lines("ja")
    for (game, step), seen in sorted(steps.items()):
        key = f"now.{game}.{step}"
        assert key in en and key in ja, key
        for text in seen["texts"]:
            assert text.startswith(en[key]) and "whole table" not in text, (key, text)


def test_no_now_line_for_a_step_that_waits_for_someone() -> None:
    """One line per step where anyone may act: a ``now.*`` line elsewhere would never be shown."""
    keys = {f"now.{game}.{step}" for game, step in anyone_steps()}
    assert set(now_lines("en")) == set(now_lines("ja")) == keys
