"""Madness Hour's battle from the players' pages in a real browser: the
fighters and the Girl pair their phones mid-game; each fighter sends
strength, items and mystic items from a labelled form; each page shows its own
numbers (the Girl's, the card the companion holds for her) and nobody else's;
the verdict is the example's, worked out by hand (examples/madness-hour.yaml here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)

from companion.app.live_table import LiveTable
from companion.app.simulate import load_script
from companion.games.demagogos.tests.test_demagogos_browser import TV, Game, pair_phone
from conftest import example_script

ROOT = Path(__file__).resolve().parents[4]
SCRIPT = example_script("madness-hour.yaml")
PAGES = ("red", "blue", "yellow", "green")  # the three fighters and the Girl


def test_the_battle_from_the_fighters_pages(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    script = load_script(SCRIPT)
    worked = yaml.safe_load(SCRIPT.read_text(encoding="utf-8"))["expect"]
    steps = [(kind, value) for _, kind, value in script.steps]
    battle = next(i for i, (kind, _) in enumerate(steps) if kind == "submit")
    live = LiveTable(tmp_path, draws=script.draws, web={"pair_window_s": 5})
    try:
        for kind, value in steps[:battle]:
            if kind == "tap":
                live.tap(value)
            else:  # the discussion's minute: next ends it early, as a table may
                live.press("next")
        tv = browser.new_context(viewport=TV).new_page()
        tv.goto(live.url + "/")
        phones = {seat: pair_phone(browser, live, tv, seat) for seat in PAGES}
        game = Game(live, tv, phones)
        expect(phones["red"].locator("#submits label").first).to_have_text("Strength ")
        expect(phones["green"].locator("#submits button")).to_have_count(0)  # the Girl does not fight
        expect(phones["green"].locator("#me-view")).to_have_text("Your Girl card, held by the companion: "
                                                                  "the evil god")
        for kind, value in steps[battle:-4]:
            assert kind == "submit"
            assert game.submit(value.player, value.field, value.value)["ok"]
            live.settle()
            game.check_privacy()
        expect(phones["red"].locator("#me-view p")).to_have_text(
            ["Your strength: 5", "Strength from your items: 3",
             "Now: the battle. Send your numbers; you may change them until the battle is counted."])
        expect(phones["blue"].locator("#me-view")).to_contain_text("Your mystic items: 6")
        assert "evil god" not in phones["red"].locator("body").inner_text()
        game.press("next")  # the battle is counted
        for kind, value in steps[-3:]:
            live.tap(value) if kind == "tap" else game.press(value)
        (result,) = [e for e in live.events if e["event"] == "mh_result"]
        assert {k: result[k] for k in worked["mh_result"]} == worked["mh_result"]
    finally:
        live.close()
