"""Resume: stop the daemon after any step of a game, start it again on the
same journal, finish the script — same plays, same scores, and it says where
it is.  (Real SIGKILLs of the real process: tests/test_crash_resume.py.)"""

from __future__ import annotations

import copy
import functools
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from companion.app import config
from companion.app.simulate import Simulation, load_script
from conftest import example_script

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = [example_script("seven-knights.yaml"), example_script("one-night.yaml"),
           example_script("madness-hour.yaml")]


@functools.cache
def _script(path: Path) -> tuple[dict[str, Any], list[tuple[int, str, Any]]]:
    overrides, steps, _ = load_script(path)
    return config.load([ROOT / "config" / "companion.yaml"], overrides), steps


def script(path: Path) -> tuple[dict[str, Any], list[tuple[int, str, Any]]]:
    """The script's config (each table its own copy) and steps, read once."""
    cfg, steps = _script(path)
    return copy.deepcopy(cfg), steps


def stop_after(path: Path, state: Path, cut: int) -> None:
    """Play the script's first ``cut`` steps on the journal in ``state``, then stop."""
    cfg, steps = script(path)
    sim = Simulation(cfg, state, lambda ev: None)
    try:
        for _line, kind, value in steps[:cut]:
            sim.step(kind, value)
    finally:
        sim.close()  # the journal is all that survives


def resume(path: Path, state: Path, cut: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Start on the journal in ``state`` (the script stopped after step ``cut``, or nothing) and
    finish the script: the plays, and what the table said."""
    cfg, steps = script(path)
    said: list[dict[str, Any]] = []
    sim = Simulation(cfg, state, said.append)
    try:
        for _line, kind, value in steps[cut:]:
            sim.step(kind, value)
        return sim.app.journal.plays(), said
    finally:
        sim.close()


def play(path: Path, state: Path, cut: int | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The whole script; with ``cut``, stopped after that many steps and started again on its
    journal: the plays, and what the table said after the restart."""
    if cut is None:
        return resume(path, state, 0)[0], []
    stop_after(path, state, cut)
    return resume(path, state, cut)


def outcome(plays: list[dict[str, Any]]) -> list[Any]:
    return [(p["game"], p["players"]) for p in plays]


def stopped_after_each_step(path: Path, folder: Path) -> tuple[list[dict[str, Any]], list[Path]]:
    """Play the script once, live: its plays, and after each step ``i`` (1 … n-1) a copy of the
    state folder as a run stopped there leaves it (``folder/cut<i>``) — the journal with its
    write-ahead log folded in, as its close does: byte for byte what ``stop_after(path, …, i)``
    leaves (the test below holds that).  So each resume starts on the copy, with no replay of the
    steps before it."""
    cfg, steps = script(path)
    sim = Simulation(cfg, folder / "live", lambda ev: None)
    cuts = []
    try:
        for i, (_line, kind, value) in enumerate(steps):
            if i:
                cut = folder / f"cut{i}"
                shutil.copytree(folder / "live", cut, ignore=shutil.ignore_patterns("*-shm"))
                db = sqlite3.connect(cut / "journal.sqlite")  # the last connection's close folds the log
                db.execute("PRAGMA user_version").fetchall()
                db.close()
                cuts.append(cut)
            sim.step(kind, value)
        return sim.app.journal.plays(), cuts
    finally:
        sim.close()


def contents(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, a backup's name without the real clock's time in it."""
    return {re.sub(r"-\d{8}-\d{6}-", "-", p.relative_to(folder).as_posix()): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_resume_after_every_step_gives_the_same_game(path: Path, tmp_path: Path) -> None:
    reference, cuts = stopped_after_each_step(path, tmp_path)
    assert len(reference) == 1
    last = len(script(path)[1]) - 1
    assert len(cuts) == last
    stop_after(path, tmp_path / "stopped", last)  # the longest run stopped: the copy is what it leaves
    assert contents(cuts[-1]) == contents(tmp_path / "stopped")
    for cut, state in enumerate(cuts, start=1):
        plays, after = resume(path, state, cut)
        assert outcome(plays) == outcome(reference), f"cut after step {cut}"
        said = [e["key"] for e in after if e["event"] == "say"]
        assert said and said[0].startswith("table."), said[:3]  # it says where the table is first
        started = next(e for e in after if e["event"] == "started")
        assert started["replayed"] >= 1  # at least the game card came back from the journal


def test_resume_in_a_round_names_the_round_and_step(tmp_path: Path) -> None:
    _, after = play(example_script("seven-knights.yaml"), tmp_path, cut=12)
    keys = [e["key"] for e in after if e["event"] == "say"]
    assert keys[0] == "table.resumed_game"
    assert any(k.startswith("skb.resume") for k in keys[:4]), keys[:4]


def test_resume_during_the_night_restarts_the_current_role(tmp_path: Path) -> None:
    """Killed during the werewolves' turn: their wake line comes again, and
    no role is skipped."""
    path = example_script("one-night.yaml")
    _, steps, _ = load_script(path)
    cut = next(i for i, s in enumerate(steps) if s[1] == "wait") + 1  # after 20 s of night
    _, after = play(path, tmp_path, cut)
    keys = [e["key"] for e in after if e["event"] == "say"]
    first_wake = next(k for k in keys if k.endswith(".wake"))
    assert first_wake == "onw.werewolf.wake"
    assert keys.index("onw.thief.wake") > keys.index("onw.werewolf.sleep")


def test_scores_survive_restarts_between_games(tmp_path: Path) -> None:
    path = example_script("seven-knights.yaml")
    play(path, tmp_path)
    plays, _ = play(path, tmp_path)  # a second game on the same journal
    assert len(plays) == 2 and plays[0]["players"] == plays[1]["players"]


def test_a_config_edit_takes_effect_from_the_next_game_and_the_replay_keeps_the_old(tmp_path: Path) -> None:
    """Journaled settings: a game in progress replays with the settings it
    started with, whatever the config says after a restart."""
    base = config.load([ROOT / "config" / "companion.yaml"], {"seed": 3})
    sim = Simulation(base, tmp_path, lambda ev: None)
    for s in ("game/one-night", "player/red", "player/blue", "player/green"):
        sim.step("tap", s)
    sim.step("press", "next")
    sim.step("press", "next")  # the night begins with the default 10 s windows
    before = sim.loop.table.engine.state
    sim.close()
    edited = config.load([ROOT / "config" / "companion.yaml"], {
        "seed": 3, "players": {"names": {"red": "aki"}}, "games": {"one-night": {"window_s": 2}}})
    events: list[dict] = []
    sim = Simulation(edited, tmp_path, events.append)
    try:
        engine = sim.loop.table.engine
        assert engine.state == before and engine.opts.window_s == 10  # the game keeps its settings
        assert not [e for e in events if e["event"] == "error"]
        sim.step("wait", 200)
        sim.step("press", "next")  # end the discussion
        sim.step("wait", 10)
        for p, card in (("red", "onw/werewolf/1"), ("blue", "onw/seer/1"), ("green", "onw/thief/1")):
            sim.step("tap", f"player/{p}")
            sim.step("tap", card)
        sim.step("press", "next")
        assert sim.loop.table.settings["names"] == {"red": "aki"}  # in force now, between games
        sim.step("tap", "game/one-night")
        sim.step("tap", "player/red")
        assert sim.loop.table.players == ["aki"]
    finally:
        sim.close()


def test_a_start_long_after_the_last_input_begins_a_new_games_night(tmp_path: Path, monkeypatch) -> None:
    from companion.runtime.loop import TableLoop

    path = example_script("seven-knights.yaml")
    play(path, tmp_path)  # a game on the virtual evening
    overrides, steps, _ = load_script(path)
    cfg = config.load([ROOT / "config" / "companion.yaml"], overrides)
    original = TableLoop.start

    def seven_hours_later(self: TableLoop) -> None:
        self.clock.set(7 * 3600)  # type: ignore[attr-defined]
        original(self)

    monkeypatch.setattr(TableLoop, "start", seven_hours_later)
    sim = Simulation(cfg, tmp_path, lambda ev: None)
    try:
        assert sim.loop.table.state.evening == 2 and sim.loop.table.state.standings == {}
        for _, kind, value in steps:
            sim.step(kind, value)
        assert [p["evening"] for p in sim.app.journal.plays()] == [1, 2]
        assert sim.loop.table.state.standings["seven-knights"]["red"] == 9  # tonight: this game only
    finally:
        sim.close()


def test_a_restart_the_same_evening_keeps_tonights_totals(tmp_path: Path) -> None:
    path = example_script("seven-knights.yaml")
    play(path, tmp_path)
    plays, _ = play(path, tmp_path)
    assert [p["evening"] for p in plays] == [1, 1]


def test_a_journal_from_before_the_evening_was_named_keeps_its_games_night() -> None:
    """Journals and checkpoints written when the games night was called the
    "session" (``session_no``, ``new-session``) read as the same evening."""
    from companion.core.events import Housekeeping
    from companion.core.table import Table
    from companion.games import GAMES

    table = Table(GAMES)
    table.restore({"session_no": 3, "standings": {"seven-knights": {"red": 9}}})
    assert table.state.evening == 3 and table.state.standings == {"seven-knights": {"red": 9}}
    table.handle(Housekeeping("new-session"))
    assert table.state.evening == 4 and table.state.standings == {}
