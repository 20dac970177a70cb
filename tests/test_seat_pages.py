"""Each seat's private page as the read side carries it: the
game's own lines (``page``: dt.page.*, mh.page.*) in the table's language,
the forms' labels, a refused submit's reason — only that player's facts, never
a raw key.  Expected lines worked out by hand from the example scripts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from companion.app import config
from companion.app.simulate import Simulation, load_script
from companion.core.events import Submit
from conftest import example_script

ROOT = Path(__file__).resolve().parent.parent
DT6 = example_script("demagogos/6p.yaml")


def play(tmp_path: Path, script: Path, until: int | None = None, lang: str = "en") -> Simulation:
    s = load_script(script)
    cfg = config.load([ROOT / "config" / "companion.yaml"], {**s.overrides, "language": lang})
    sim = Simulation(cfg, tmp_path, lambda e: None, draws=s.draws)
    for _, kind, value in s.steps[:until]:
        sim.step(kind, value)
    return sim


def lines(sim: Simulation, seat: str) -> list[str]:
    return [line["text"] for line in sim.loop.read_side.private(seat)["page"]]


def step_index(script: Path, pred: Any) -> int:
    return next(i for i, (_, kind, value) in enumerate(load_script(script).steps) if pred(kind, value))


def test_in_the_cave_each_page_shows_its_own_gems_role_boxes_and_bids(tmp_path: Path) -> None:
    # 6p.yaml round 1, the turn auction just closed: red the sage (bid 3: 2 gems left),
    # green the demagogue (bid 2: 3 left); yellow bid 0 then 2 (3 left), first explorer
    cave = step_index(DT6, lambda k, v: v == "dt/box/1")
    sim = play(tmp_path, DT6, cave)
    try:
        assert lines(sim, "red") == ["Gems: 2", "VP: 0", "Your role this round: the sage",
                                     "Treasures are in boxes 1 and 2", "Your role-auction bid: 3"]
        assert lines(sim, "green") == ["Gems: 3", "VP: 0", "Your role this round: the demagogue",
                                       "The disaster is in box 4", "Your role-auction bid: 2"]
        assert lines(sim, "yellow") == ["Gems: 3", "VP: 0", "This round you are an explorer",
                                        "Your role-auction bid: 0", "Your turn-auction bid: 2"]
        # in the cave only a gift may be sent ([ruling] gifts at any moment of a round): up to
        # yellow's 3 gems, none bid in an open auction, to any other player still in the game
        assert sim.loop.read_side.private("yellow")["legal"]["submits"] == {"gift": {
            "label": "dt.field.gift", "low": 1, "high": 3, "choices": ["red", "blue", "green", "purple", "orange"],
            "text": "Give gems: to whom, how many"}}
    finally:
        sim.close()


def test_a_gift_is_on_the_giver_s_and_the_receiver_s_pages_only(tmp_path: Path) -> None:
    # 6p.yaml round 2: green gives red 5 gems (green 10 → 5, red 5 → 10)
    after = step_index(DT6, lambda k, v: isinstance(v, Submit) and v.field == "gift") + 1
    sim = play(tmp_path, DT6, after)
    try:
        assert "Round 2: you gave Red 5 gems" in lines(sim, "green")
        assert "Round 2: Green gave you 5 gems" in lines(sim, "red")
        assert lines(sim, "red")[0] == "Gems: 10" and lines(sim, "green")[0] == "Gems: 5"
        for seat in ("blue", "yellow", "purple", "orange"):
            assert not [t for t in lines(sim, seat) if "gave" in t], seat
    finally:
        sim.close()


def test_the_forms_are_labelled_in_the_table_s_language(tmp_path: Path) -> None:
    start = step_index(DT6, lambda k, v: k == "press") + 1  # the role auction is open
    sim = play(tmp_path, DT6, start, lang="ja")
    try:
        me = sim.loop.read_side.private("red")
        assert me["page"][-1] == {"key": "dt.page.now.role_auction", "text": "今：役職オークション"}
        assert me["legal"]["submits"]["bid"] == {"label": "dt.field.bid", "low": 0, "high": 5, "choices": [],
                                                 "text": "入札する宝石の数"}
        assert lines(sim, "red")[:2] == ["宝石：5個", "勝利点：0点"]
    finally:
        sim.close()


def test_a_refused_submit_tells_its_reason_in_the_table_s_language_to_that_page_only(tmp_path: Path) -> None:
    start = step_index(DT6, lambda k, v: k == "press") + 1
    s = load_script(DT6)
    events: list[dict[str, Any]] = []
    cfg = config.load([ROOT / "config" / "companion.yaml"], {"language": "ja"})
    sim = Simulation(cfg, tmp_path, events.append, draws=s.draws)
    try:
        for _, kind, value in s.steps[:start]:
            sim.step(kind, value)
        sim.step("submit", Submit("purple", "bid", 6))
        (refused,) = [e for e in events if e["event"] == "rejected"]
        assert refused["text"] == "入札は宝石0個から5個までです。"
        assert "6" not in refused["text"]
    finally:
        sim.close()


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("script", ["demagogos/6p.yaml", "demagogos/10p.yaml", "madness-hour.yaml"])
def test_every_page_line_of_whole_games_is_a_line_never_a_key(tmp_path: Path, script: str, lang: str) -> None:
    s = load_script(example_script(script))
    cfg = config.load([ROOT / "config" / "companion.yaml"], {**s.overrides, "language": lang})
    sim = Simulation(cfg, tmp_path, lambda e: None, draws=s.draws)
    seen: set[str] = set()
    try:
        for _, kind, value in s.steps:
            sim.step(kind, value)
            for seat in sim.loop.table.state.seats:
                me = sim.loop.read_side.private(seat)
                for line in me["page"]:
                    seen.add(line["key"])
                    assert line["text"] != line["key"] and "{" not in line["text"], line
                for ask in me["legal"]["submits"].values():
                    assert ask["text"] != ask["label"] and "{" not in ask["text"], ask
        assert not sim.loop.narrate.misses  # every line found in the table's language
    finally:
        sim.close()
    if script.startswith("demagogos"):
        assert {"dt.page.role.sage", "dt.page.told.treasures", "dt.page.bid.turn", "dt.page.exited"} <= seen
    else:
        assert {"mh.page.girl_card.evil_god", "mh.page.battle.strength", "mh.page.battle.mystic",
                "mh.page.now.battle"} <= seen


def test_madness_hour_the_battle_page_shows_the_fighter_s_own_numbers(tmp_path: Path) -> None:
    script = example_script("madness-hour.yaml")
    after = step_index(script, lambda k, v: isinstance(v, Submit) and v.player == "blue" and v.field == "mystic") + 1
    sim = play(tmp_path, script, after)
    try:
        assert lines(sim, "red") == ["Your strength: 5", "Strength from your items: 3",
                                     "Now: the battle. Send your numbers; you may change them until the battle is "
                                     "counted."]
        assert lines(sim, "blue")[:2] == ["Your strength: 4", "Your mystic items: 6"]
        assert lines(sim, "green") == ["Your Girl card, held by the companion: the evil god"]  # the Girl's own
        assert lines(sim, "purple") == []  # not a fighter: nothing private
    finally:
        sim.close()
