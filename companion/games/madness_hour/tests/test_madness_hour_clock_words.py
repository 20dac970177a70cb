"""Madness Hour's climax times are said as the clocks show them: the phones
and the TV count "1:00", the speaker said "60 seconds"; a minute and a half
("1:30") is "one minute 30" (1分30秒), under a minute stays seconds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from companion.app import config
from companion.app.simulate import Simulation, load_script
from conftest import example_script
from web.live import WatchedReadSide

ROOT = Path(__file__).resolve().parents[4]
MH = example_script("madness-hour.yaml")


def climax(tmp_path: Path, lang: str, discussion_s: float) -> tuple[Simulation, list[dict[str, Any]], float]:
    """The example up to the climax card; the seconds the clocks show then."""
    s = load_script(MH)
    overrides = {**(s.overrides or {}), "language": lang, "games": {"madness-hour": {"discussion_s": discussion_s}}}
    cfg = config.load([ROOT / "config" / "companion.yaml"], overrides)
    events: list[dict[str, Any]] = []
    sim = Simulation(cfg, tmp_path, events.append, draws=s.draws, read_side=WatchedReadSide())
    for kind, value in [(k, v) for _, k, v in s.steps]:
        sim.step(kind, value)
        if (kind, value) == ("tap", "mh/climax"):
            deadline = sim.loop.read_side.public()["headline"]["deadline"]
            return sim, events, deadline - sim.clock.wall()
    raise AssertionError("no climax")


@pytest.mark.parametrize(("lang", "seconds", "said", "clock"), [
    ("en", 60, "Investigators, you have one minute: keep the Girl alive, or kill her?", 60),
    ("ja", 60, "探索者の皆さん、1分で話し合ってください。少女を生かしますか、殺しますか。", 60),
    ("en", 90, "Investigators, you have one minute 30: keep the Girl alive, or kill her?", 90),
    ("ja", 90, "探索者の皆さん、1分30秒で話し合ってください。少女を生かしますか、殺しますか。", 90),
    ("en", 150, "Investigators, you have 2 minutes 30: keep the Girl alive, or kill her?", 150),
    ("en", 45, "Investigators, you have 45 seconds: keep the Girl alive, or kill her?", 45),
])
def test_the_climax_time_is_said_as_the_clocks_show_it(tmp_path: Path, lang: str, seconds: float, said: str,
                                                       clock: float) -> None:
    sim, events, left = climax(tmp_path, lang, seconds)
    try:
        assert round(left) == clock  # the clocks: m:ss of this
        assert [e["text"] for e in events if e["event"] == "say" and e["key"].startswith("mh.climax.discuss")] == [said]
    finally:
        sim.close()


def test_the_minute_left_is_said_as_a_minute(tmp_path: Path) -> None:
    """A 90-second discussion says "One minute left." at 1:00, then the warnings in seconds."""
    sim, events, _ = climax(tmp_path, "en", 90)
    try:
        mark = len(events)
        sim.step("wait", 61)
        ticks = [e["text"] for e in events[mark:] if e["event"] == "say"]
        assert ticks == ["One minute left.", "30 seconds left."], ticks
    finally:
        sim.close()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_timed_turn_s_warning_is_the_time_the_clocks_show(tmp_path: Path, lang: str) -> None:
    """With a turn timer (turn_s) the speaker says "10 seconds left in this turn": the
    pages count the turn down too (the headline's deadline), so the time said is the
    time they show — 1:00 at the Girl's turn, 0:10 at its warning."""
    s = load_script(MH)
    overrides = {**(s.overrides or {}), "language": lang,
                 "games": {"madness-hour": {"turn_s": 60, "turn_warning_s": 10}}}
    cfg = config.load([ROOT / "config" / "companion.yaml"], overrides)
    events: list[dict[str, Any]] = []
    sim = Simulation(cfg, tmp_path, events.append, draws=s.draws, read_side=WatchedReadSide())
    left = lambda: sim.loop.read_side.public()["headline"]["deadline"] - sim.clock.wall()  # noqa: E731
    try:
        for kind, value in [(k, v) for _, k, v in s.steps][:10]:  # to the Girl's first turn
            sim.step(kind, value)
        assert round(left()) == 60
        mark = len(events)
        sim.step("wait", 50)
        assert [e["key"] for e in events[mark:] if e["event"] == "say"] == ["mh.turn.warning"]
        assert round(left()) == 10
        sim.step("wait", 10)
        assert sim.loop.read_side.public()["headline"]["deadline"] is None  # time up: no clock left
    finally:
        sim.close()
