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
from test_web_tv_board import BOARDS, close_boards, open_board

from companion.app.live_table import LiveTable

PHONE = {"width": 360, "height": 740}


def drawn_as(live: LiveTable, change: Any) -> None:
    """The live table's snapshot, as ``change(state)`` makes it, is what its pages get."""
    public_state = live.web.public_state
    live.web.public_state = lambda history=True: change(public_state(history))  # type: ignore[method-assign]


def test_finding_a_left_game_leaves_tonights_totals_under_between_games_not_no_game_yet(
        browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    live = LiveTable(tmp_path)
    try:  # a game played tonight, the next one left
        drawn_as(live, lambda state: {**state, "game": None, "result": None,
                                      "tonight": {"demagogos": {"red": 7, "blue": 4, "green": 2}}})
        tv = open_board(browser, live.url)
        phone = browser.new_context(viewport=PHONE).new_page()
        phone.goto(live.url + "/")
        for page in (tv, phone):
            expect(page.locator("#game")).to_have_text("Between games")
            page.context.close()
    finally:
        close_boards()  # those an assertion left open
        live.close()


def test_finding_a_japanese_list_of_names_is_joined_with_the_japanese_comma(browser: Any,  # noqa: F811
                                                                             tmp_path: Path) -> None:
    expect = sync_api.expect
    live = LiveTable(tmp_path, language="ja")
    try:
        live.tap("game/one-night", "player/red", "player/blue", "player/green", "player/yellow")
        drawn_as(live, lambda state: {**state, "headline_text": "",  # the board's own sentence, from the headline
                                      "headline": {**state["headline"], "waiting_for": ["red", "blue"],
                                                   "anyone": False}})
        tv = open_board(browser, live.url)
        expect(tv.locator("#turn")).to_contain_text("赤、青")
        expect(tv.locator("#turn")).not_to_contain_text(",")
        tv.context.close()
    finally:
        close_boards()  # those an assertion left open
        live.close()


def test_finding_demagogos_totals_are_called_vp_on_the_board_as_in_speech(browser: Any,  # noqa: F811
                                                                           tmp_path: Path) -> None:
    expect = sync_api.expect
    live = LiveTable(tmp_path)
    try:
        live.tap("game/one-night", *(f"player/{s}" for s in ("red", "blue", "green", "yellow")))
        vp = {"red": 3, "blue": 1, "green": 0, "yellow": 2}  # round 1's trading, its VP on the board
        drawn_as(live, lambda state: {**state, "game": "demagogos", "phase": "playing",
                                      "play": {"step": "trade", "round": 1, "vp": vp, "totals": vp,
                                               "whose_turn": []}})
        tv = open_board(browser, live.url)
        expect(tv.locator("#scores tr").first).to_have_text("VP")
        expect(tv.locator("#scores")).not_to_contain_text("Total")
        tv.context.close()
    finally:
        close_boards()  # those an assertion left open
        live.close()


def test_finding_a_board_its_test_closed_is_not_closed_again_by_the_next_file(browser: Any,  # noqa: F811
                                                                              tmp_path: Path) -> None:
    """A board whose test closed its context leaves the open boards' list, which every browser file
    shares: closing it again from a later file, after this file's browser stopped, failed that file."""
    live = LiveTable(tmp_path)
    try:
        tv = open_board(browser, live.url)
        assert tv in BOARDS
        tv.context.close()
        assert tv not in BOARDS
    finally:
        close_boards()
        live.close()
