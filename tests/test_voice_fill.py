"""The voice cache's background fill must not disturb a game: it holds off while the
table runs on the clock (the loop's ``activity`` command), renders the lines
of the game being played first, holds one engine at a time, and its worker
writes at idle disk priority."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from array import array
from pathlib import Path
from typing import Any

import pytest
import test_voice_cache as fixtures

from companion.app import catalogue
from companion.core.messages import Command
from voice.lines import line_keys
from voice.player import _pcm, write_wav
from voice.prerender import FillGate, fill, fixed_lines
from voice.render import RenderSettings, SubprocessRenderer, ToneRenderer, espeak_available
from voice.tts_voice import line_entries

lines_dir = fixtures.lines_dir
voice_on = fixtures.voice_on

PLAYERS = ("player/red", "player/blue", "player/green")


def activity(game: str | None, timed: bool) -> Command:
    return Command("activity", {"game": game, "timed": timed})


class QuickTone(ToneRenderer):
    """A tenth of a second of tone whatever the text: the order of the calls is what counts."""

    def render(self, text: str, lang: str, out: Path) -> None:
        self.calls.append((text, lang))
        write_wav(Path(out), _pcm(array("h", (3000 if i % 50 < 25 else -3000 for i in range(2205)))))


def test_the_loop_says_when_the_table_runs_on_the_clock_and_which_game_is_played(table):
    seen: list[dict[str, Any]] = []
    table.sim.app.router.subscribe(
        lambda m: seen.append(dict(m.args)) if isinstance(m, Command) and m.name == "activity" else None)
    table.tap("game/one-night", *PLAYERS)
    assert seen == []  # seating: nothing changed since the start (no game, no clock)
    table.press("next")
    assert seen == [{"game": "one-night", "timed": False}]  # the deal: no clock yet
    table.press("next")  # the night
    assert seen[-1] == {"game": "one-night", "timed": True}
    table.do("wait", 600)  # the night, then the discussion runs out into the vote count
    assert "onw.vote.three" in table.keys()
    assert seen[-1] == {"game": "one-night", "timed": False}  # the reveal waits for the table
    assert seen == [{"game": "one-night", "timed": False}, {"game": "one-night", "timed": True},
                    {"game": "one-night", "timed": False}]  # published on change only


def test_the_wiring_feeds_the_fill_gate_from_the_router(tmp_path, lines_dir):
    from companion.app import config
    from companion.app.simulate import Simulation
    from conftest import ROOT

    cfg = config.load([ROOT / "config" / "companion.yaml"])
    sim = Simulation(cfg, tmp_path / "state", lambda ev: None, voice=voice_on(tmp_path, QuickTone(), lines_dir))
    try:
        gate = sim.app.sinks["fill"]
        for ident in ("game/one-night", *PLAYERS):
            sim.step("tap", ident)
        sim.step("press", "next")
        sim.step("press", "next")
        assert gate.game == "one-night" and not gate._free.is_set()
    finally:
        sim.close()


def test_the_fill_holds_off_while_the_table_is_timed_and_goes_on_after(tmp_path, lines_dir):
    renderer = QuickTone()
    voice = voice_on(tmp_path, renderer, lines_dir)
    gate = FillGate()
    gate.receive(activity("one-night", True))
    done: list[Any] = []
    worker = threading.Thread(target=lambda: done.append(fill(voice, ["en"], gate=gate)))
    worker.start()
    time.sleep(0.3)
    assert renderer.renders == 0 and gate.holds == 1  # waiting before its first render
    gate.receive(activity("one-night", False))
    worker.join(10)
    assert done and done[0].rendered > 0 and renderer.renders == done[0].rendered


def test_stopping_the_daemon_ends_a_fill_that_waits_for_the_table(tmp_path, lines_dir):
    renderer = QuickTone()
    gate = FillGate()
    gate.receive(activity(None, True))
    worker = threading.Thread(target=fill, args=(voice_on(tmp_path, renderer, lines_dir), ["en"]),
                              kwargs={"gate": gate})
    worker.start()
    time.sleep(0.1)
    gate.stop()
    worker.join(5)
    assert not worker.is_alive() and renderer.renders == 0


def test_the_fill_renders_the_lines_of_the_game_in_progress_first(tmp_path):
    renderer = QuickTone()
    voice = voice_on(tmp_path, renderer)
    voice.entries = line_entries(catalogue.line_folders())  # the shipped lines: shared and every game's
    gate = FillGate(catalogue.game_line_folders())
    gate.receive(activity("one-night", False))
    fill(voice, ["en"], gate=gate)
    table = voice.entries("en")
    night = {line.text for line in fixed_lines("en", table) if line.key in line_keys(catalogue.game_line_folders()["one-night"], "en")}
    others = {line.text for line in fixed_lines("en", table)} - night
    said = [text for text, _ in renderer.calls]
    assert night and others
    last_night = max(i for i, text in enumerate(said) if text in night)
    first_other = min(i for i, text in enumerate(said) if text in others)
    assert last_night < first_other
    assert set(said) >= night | others  # and then everything else


def test_without_a_game_the_fill_keeps_the_language_order(tmp_path, lines_dir):
    renderer = QuickTone()
    fill(voice_on(tmp_path, renderer, lines_dir), ["ja", "en"], gate=FillGate())
    langs = [lang for _, lang in renderer.calls]
    assert langs == sorted(langs, key=["ja", "en"].index) and set(langs) == {"ja", "en"}


@pytest.mark.skipif(not espeak_available(), reason="espeak-ng is not installed")
def test_the_fill_worker_holds_one_engine_and_writes_at_idle_disk_priority(tmp_path, lines_dir):
    """espeak-ng only (the fallback path): one worker for both languages, as
    they share the engine; the worker runs at nice 19 in the idle I/O class,
    and is gone when the fill is done."""
    workers: list[Any] = []
    classes: list[str] = []

    def make_cache(root: Path, renderer: Any) -> Any:
        from voice.cache import WavCache

        workers.append(renderer._renderer)
        return WavCache(root, renderer)

    voice = voice_on(tmp_path, ToneRenderer(), lines_dir)
    voice.cache.renderer = SubprocessRenderer(RenderSettings())  # the live worker (never started here)
    gate = FillGate()
    original = gate.wait

    def wait() -> None:  # look at the worker while it is up
        original()
        proc = workers[-1]._proc
        if proc is not None and shutil.which("ionice") and not classes:
            classes.append(subprocess.run(["ionice", "-p", str(proc.pid)], capture_output=True, text=True).stdout)
    gate.wait = wait  # type: ignore[method-assign]
    stats = fill(voice, ["en", "ja"], make_cache, gate=gate)
    assert stats.rendered > 0
    assert len({id(w) for w in workers}) == 1 and workers[0]._proc is None  # one engine, one worker, closed
    assert workers[0].nice == 19 and voice.cache.renderer._proc is None
    if shutil.which("ionice"):
        assert classes and classes[0].startswith("idle"), classes
