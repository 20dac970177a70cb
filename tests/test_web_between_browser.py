"""Words a person reads on the board and the phones, in a real browser
(Playwright, Debian's chromium): after a game was left, tonight's totals
stand under "Between games", never "No game yet"; a Japanese list of names is
joined with 、, never an ASCII comma.  The table's snapshot is the live
table's, its tonight/headline set as the case needs (the pages draw what the
API says)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)
from test_web_tv_board import open_board

from companion.app.live_table import LiveTable

PHONE = {"width": 360, "height": 740}


def test_finding_a_left_game_leaves_tonights_totals_under_between_games_not_no_game_yet(
        browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    live = LiveTable(tmp_path)
    try:
        public_state = live.web.public_state

        def after_a_game(history: bool = True) -> dict[str, Any]:  # a game played tonight, the next one left
            return {**public_state(history), "game": None, "result": None,
                    "tonight": {"demagogos": {"red": 7, "blue": 4, "green": 2}}}

        live.web.public_state = after_a_game  # type: ignore[method-assign]
        tv = open_board(browser, live.url)
        phone = browser.new_context(viewport=PHONE).new_page()
        phone.goto(live.url + "/")
        for page in (tv, phone):
            expect(page.locator("#game")).to_have_text("Between games")
            page.context.close()
    finally:
        live.close()


def test_finding_a_japanese_list_of_names_is_joined_with_the_japanese_comma(browser: Any,  # noqa: F811
                                                                             tmp_path: Path) -> None:
    expect = sync_api.expect
    live = LiveTable(tmp_path, language="ja")
    try:
        live.tap("game/one-night", "player/red", "player/blue", "player/green", "player/yellow")
        public_state = live.web.public_state

        def two_waited_for(history: bool = True) -> dict[str, Any]:
            state = public_state(history)
            return {**state, "headline_text": "",  # the board's own sentence, from the headline
                    "headline": {**state["headline"], "waiting_for": ["red", "blue"], "anyone": False}}

        live.web.public_state = two_waited_for  # type: ignore[method-assign]
        tv = open_board(browser, live.url)
        expect(tv.locator("#turn")).to_contain_text("赤、青")
        expect(tv.locator("#turn")).not_to_contain_text(",")
        tv.context.close()
    finally:
        live.close()


def test_finding_demagogos_totals_are_called_vp_on_the_board_as_in_speech(browser: Any,  # noqa: F811
                                                                           tmp_path: Path) -> None:
    expect = sync_api.expect
    live = LiveTable(tmp_path)
    try:
        live.tap("game/one-night", *(f"player/{s}" for s in ("red", "blue", "green", "yellow")))
        public_state = live.web.public_state
        vp = {"red": 3, "blue": 1, "green": 0, "yellow": 2}

        def demagogos(history: bool = True) -> dict[str, Any]:  # round 1's trading, its VP on the board
            return {**public_state(history), "game": "demagogos", "phase": "playing",
                    "play": {"step": "trade", "round": 1, "vp": vp, "totals": vp, "whose_turn": []}}

        live.web.public_state = demagogos  # type: ignore[method-assign]
        tv = open_board(browser, live.url)
        expect(tv.locator("#scores tr").first).to_have_text("VP")
        expect(tv.locator("#scores")).not_to_contain_text("Total")
        tv.context.close()
    finally:
        live.close()
