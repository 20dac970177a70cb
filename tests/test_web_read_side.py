"""What the public page is drawn from: each game's ``public_view``
says whose turn it is from public facts only, and carries the scored rounds,
so a page drawn after a restart shows the same round-by-round rows as one
that watched the game live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import yaml

from companion.app import config
from companion.app.simulate import Simulation, load_script
from companion.app.web_app import start_web
from companion.core.events import Submit
from conftest import example_script

ROOT = Path(__file__).resolve().parent.parent


def sim(state: Path, overrides: dict[str, Any], draws: dict[str, Any] | None = None) -> tuple[Simulation, list]:
    log: list[dict[str, Any]] = []
    cfg = config.load([ROOT / "config" / "companion.yaml"], overrides or None)
    return Simulation(cfg, state, log.append, draws=draws), log


def play(s: Simulation) -> dict[str, Any]:
    return s.loop.read_side.public().get("play", {})


def test_seven_knights_rounds_survive_a_restart_and_the_page_shows_the_same_rows(tmp_path: Path) -> None:
    script = load_script(example_script("seven-knights.yaml"))
    s, log = sim(tmp_path, script.overrides, script.draws)
    steps = list(script.steps)
    cut = next(i for i, (_, kind, value) in enumerate(steps) if (kind, value) == ("wait", 300))  # round 3
    for _, kind, value in steps[:cut]:
        s.step(kind, value)
    live = play(s)["rounds"]
    scored = [{k: e[k] for k in ("round", "points", "totals")} for e in log if e["event"] == "round_scored"]
    assert [r["round"] for r in live] == [1, 2] and live == scored  # the rows are what was announced
    for row in live:  # each row's totals are the running sums of its points
        before = live[row["round"] - 2]["totals"] if row["round"] > 1 else dict.fromkeys(row["points"], 0)
        assert row["totals"] == {p: before[p] + n for p, n in row["points"].items()}
    s.close()  # the daemon stops mid-game (every input was journaled before it was answered)

    again, _ = sim(tmp_path, script.overrides, script.draws)
    try:
        assert play(again)["rounds"] == live  # rebuilt by the journal's replay, not from live events
        web = start_web(again.app, config.load([ROOT / "config" / "companion.yaml"]), "127.0.0.1", 0)
        try:
            shown = httpx.get(web.address + "api/table").json()
        finally:
            web.stop()
        assert shown["play"]["rounds"] == live
        for _, kind, value in steps[cut:-1]:  # on into round 3 (its scoring ends the game)
            again.step(kind, value)
        assert play(again)["round"] == 3 and play(again)["rounds"] == live
    finally:
        again.close()


def test_a_scored_round_is_final_back_keeps_its_row(tmp_path: Path) -> None:
    """The row is the game's state: back is refused once the round is scored,
    and the row stays (as the scores spoken stay)."""
    script = load_script(example_script("seven-knights.yaml"))
    s, log = sim(tmp_path, script.overrides, script.draws)
    try:
        for _, kind, value in script.steps:
            s.step(kind, value)
            if play(s).get("rounds"):
                break
        rows = play(s)["rounds"]
        assert play(s)["step"] == "round_over" and len(rows) == 1
        s.step("press", "back")
        assert log[-2] == {"t": log[-2]["t"], "event": "rejected", "input": "back",
                           "reason": "nothing to undo in this step"}
        assert play(s)["rounds"] == rows
    finally:
        s.close()


def test_demagogos_rounds_are_the_vp_gained_each_round(tmp_path: Path) -> None:
    script = load_script(example_script("demagogos/6p.yaml"))
    s, _ = sim(tmp_path, script.overrides, script.draws)
    try:
        for _, kind, value in script.steps[:-1]:  # the last box ends the game (and the play)
            s.step(kind, value)
        rows = play(s)["rounds"]
        expect = yaml.safe_load((example_script("demagogos/6p.yaml")).read_text())["expect"]
        assert [r["points"] for r in rows] == expect["points"][:3]  # worked out by hand in the script
    finally:
        s.close()


def _turns(sc: Any, until: int | None) -> list[tuple[str, list[str], bool]]:
    import tempfile

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        s, _ = sim(Path(tmp), sc.overrides, sc.draws)
        try:
            for _, kind, value in sc.steps[:until]:
                s.step(kind, value)
                p = play(s)
                if p:
                    out.append((p["step"], list(p["whose_turn"]), s.loop.table.eyes_closed))
        finally:
            s.close()
    return out


def test_one_night_names_nobody_by_night_and_everyone_by_day() -> None:
    seen = _turns(load_script(example_script("one-night.yaml")), None)
    assert any(closed for _, _, closed in seen)  # the script does play a night
    assert all(turn == [] for step, turn, closed in seen if closed or step == "night")
    players = next(turn for step, turn, _ in seen if step == "discussion")
    assert len(players) >= 3 and all(turn == players for step, turn, _ in seen if step in ("discussion", "vote"))


def test_seven_knights_turn_is_the_start_player_then_the_voters_then_the_captain() -> None:
    seen = _turns(load_script(example_script("seven-knights.yaml")), None)
    first = dict((step, turn) for step, turn, _ in reversed(seen))  # the first time each step is seen
    assert first["quest"] == ["red"]  # red holds the start marker
    assert first["command"] == ["red"] or first["command"] == []  # no election counted: captain unknown
    assert all(turn == [] for step, turn, _ in seen if step in ("witch_team", "witch_holder", "round_over"))


def test_seven_knights_recommendation_waits_for_those_yet_to_recommend(tmp_path: Path) -> None:
    s, _ = sim(tmp_path, {"seed": 1})
    try:
        for i in ("game/seven-knights", "player/red", "player/blue", "player/green", "player/yellow"):
            s.step("tap", i)
        for _ in range(3):
            s.step("press", "next")  # dealt, quest, questions: the recommendation
        assert play(s)["step"] == "recommendation"
        assert play(s)["whose_turn"] == ["red", "blue", "green", "yellow"]
        s.step("tap", "player/blue")
        assert play(s)["whose_turn"] == ["blue"]  # blue is recommending
        s.step("tap", "player/green")
        assert play(s)["whose_turn"] == ["red", "green", "yellow"]
    finally:
        s.close()


def test_madness_hour_turn_is_the_explorer_called() -> None:
    seen = _turns(load_script(example_script("madness-hour.yaml")), None)
    explore = [turn for step, turn, _ in seen if step == "explore" and turn]
    assert explore and all(len(t) == 1 for t in explore)
    assert len({t[0] for t in explore}) >= 2  # the turn moves round the table
    assert all(turn == [] for step, turn, _ in seen if step == "done")


def test_demagogos_turn_everyone_to_bid_then_the_explorer_in_the_cave(tmp_path: Path) -> None:
    script = load_script(example_script("demagogos/6p.yaml"))
    s, _ = sim(tmp_path, script.overrides, script.draws)
    try:
        steps = iter(script.steps)
        for _, kind, value in steps:
            s.step(kind, value)
            if kind == "press":
                break
        everyone = ["red", "blue", "green", "yellow", "purple", "orange"]
        assert play(s)["step"] == "role_auction" and play(s)["whose_turn"] == everyone
        s.step("submit", Submit("red", "bid", 3))
        assert play(s)["whose_turn"] == everyone[1:]  # who has bid is public, never what
        for _, kind, value in steps:
            s.step(kind, value)
            if play(s)["step"] == "cave":
                break
        assert play(s)["whose_turn"] == ["yellow"]  # the script: yellow explores first
    finally:
        s.close()
