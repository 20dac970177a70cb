"""The TV board tells the story to a player who missed a spoken line (the way a
board-game site's player panels do), in a real browser (Playwright, Debian's
chromium) at 1920×1080: Seven Knights' formation as the captain lays it, tile
by tile, and the tiles left out, under the game's own words for those steps;
the round's verdict once it is given — and nothing of it earlier; a column per
scored round on the scoreboard (Seven Knights, Demagogos); the verdict the
largest line on the board while it stands; and every panel as tall as what it
holds.  Each step also passes the board walk's privacy and fit checks
(``test_web_tv_board.Board``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture, the chromium skip)
from test_web_tv_board import Board, accessible, no_errors_on_the_board, shoot  # noqa: F401  (the fixture)

from companion.app.simulate import load_script
from conftest import example_script

# Every visible panel of the board: its height, and how far down its last visible child reaches
# (the panel's own padding below it aside); and the font size of every visible text on the board.
PANELS = """() => [...document.querySelectorAll("#day > main section")].filter((s) => s.getClientRects().length)
  .map((s) => { const top = s.getBoundingClientRect().top;
    const kids = [...s.children].filter((k) => k.getClientRects().length);
    const bottom = Math.max(top, ...kids.map((k) => k.getBoundingClientRect().bottom + parseFloat(getComputedStyle(k).marginBottom)));
    return { id: s.id, height: s.getBoundingClientRect().height, content: bottom - top,
             pad: parseFloat(getComputedStyle(s).paddingBottom) }; })"""
SIZES = """() => { const out = [];
  const walk = document.createTreeWalker(document.querySelector("#day"), NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());) {
    const e = n.parentElement;
    if (!n.textContent.trim() || !e.getClientRects().length || e.closest(".sr")) continue;
    out.push([e.id || e.closest("[id]").id, n.textContent.trim().slice(0, 40), parseFloat(getComputedStyle(e).fontSize)]);
  }
  return out; }"""
WORDS = {"en": {"formation": "the formation", "left_out": "tiles left out", "knights": "The knights win",
                "witch": "The witch team wins", "round": "R{n}"},
         "ja": {"formation": "隊列", "left_out": "外したタイル", "knights": "ストリュート騎士団の勝利",
                "witch": "魔女陣営の勝利", "round": "{n}R"}}


def play(browser: Any, tmp_path: Path, script: str, lang: str = "en") -> tuple[Board, list[tuple[str, Any]]]:  # noqa: F811
    s = load_script(example_script(script))
    return Board(browser, tmp_path, {**s.overrides, "language": lang}, s.draws), [(k, v) for _, k, v in s.steps]


def tiles(page: Any, row: str) -> list[str]:
    return list(page.locator(f"#{row} li").evaluate_all("(ls) => ls.map((l) => l.dataset.tile)"))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_tv_shows_the_formation_as_laid_the_tiles_left_out_and_the_verdict_once_given(
        browser: Any, tmp_path: Path, lang: str) -> None:  # noqa: F811
    """Before: nothing of the formation, the tiles left out or the verdict on the
    TV — a player who missed "3: knight four." had only the totals."""
    expect, words = sync_api.expect, WORDS[lang]
    board, steps = play(browser, tmp_path, "seven-knights.yaml", lang)
    page = board.page
    try:
        laid_seen = verdicts = 0
        for kind, value in steps:
            state = board.step(kind, value)
            play_ = state.get("play") or {}
            engine = board.walk.sim.loop.table.engine
            st = engine.state if engine is not None and engine.game == "seven-knights" else None
            if st is None or not play_:
                continue
            if st.step == "captain_ready":  # a tile tapped before the command phase: named nowhere
                expect(page.locator("#tiles-section")).to_be_hidden()
                assert page.locator("[data-tile]").count() == 0
            if st.formation:
                expect(page.locator("#laid-title")).to_have_text(words["formation"], ignore_case=True)
                assert tiles(page, "laid") == st.formation  # left to right, as revealed
                laid_seen += 1
            if st.excluded:
                expect(page.locator("#aside-title")).to_have_text(words["left_out"], ignore_case=True)
                assert tiles(page, "aside") == st.excluded
            if st.verdict is None:  # not said yet: not shown
                expect(page.locator("#round-verdict-section")).to_be_hidden()
            else:
                expect(page.locator("#round-verdict")).to_have_text(words[st.verdict])
                assert play_["verdict"] == st.verdict
                verdicts += 1
                if verdicts == 1:
                    accessible(page)
                    shoot(page, f"tv-formation-verdict-{lang}")
        assert laid_seen >= 8 and verdicts >= 3
    finally:
        board.close()


@pytest.mark.parametrize("script", ["seven-knights.yaml", "demagogos/6p.yaml"])
def test_tv_scoreboard_shows_each_rounds_points_in_a_column_then_the_total(
        browser: Any, tmp_path: Path, script: str) -> None:  # noqa: F811
    """Before: the total alone — how a player got there was in lines said once."""
    board, steps = play(browser, tmp_path, script)
    page = board.page
    try:
        checked = 0
        for kind, value in steps:
            state = board.step(kind, value)
            play_ = state.get("play") or {}
            rounds = play_.get("rounds") or []
            if not rounds:
                continue
            heads = page.locator("#scores th").all_inner_texts()
            assert heads[1:1 + len(rounds)] == [f"R{r['round']}" for r in rounds], heads
            for row in page.locator("#scores tr:has(td)").all():
                cells = row.locator("td").all_inner_texts()
                name = next(s["name"] for s in state["seats"] if cells[0].strip().lstrip("▸ ").startswith(s["name"].capitalize()))
                assert cells[1:1 + len(rounds)] == [str(r["points"][name]) for r in rounds], cells
                assert cells[1 + len(rounds)] == str(play_["totals"][name])
            checked = max(checked, len(rounds))
            if len(rounds) == 2 and play_.get("step") in ("round_over", "role_auction"):
                shoot(page, f"tv-rounds-{script.split('/')[0].removesuffix('.yaml')}")
        assert checked >= 2
        result = page.locator("#result tr").first.locator("th").all_inner_texts()  # the game over: its rounds too
        assert "R1" in result and "R2" in result, result
    finally:
        board.close()


def test_tv_verdict_is_the_largest_text_on_the_board_while_it_stands(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """Before: the finished game's verdict at 27.6 px, the smallest text on the
    board, below "Tonight"'s 43 px rows; a round's verdict not shown at all."""
    board, steps = play(browser, tmp_path, "seven-knights.yaml")
    page = board.page
    try:
        stood = []
        for kind, value in steps:
            state = board.step(kind, value)
            play_ = state.get("play") or {}
            if not play_.get("verdict") and not state.get("result"):
                continue
            sizes = page.evaluate(SIZES)
            verdict = [s for s in sizes if s[0] in ("round-verdict", "verdict")]
            assert verdict, sizes
            largest = max(s[2] for s in verdict)
            others = [s for s in sizes if s[0] not in ("round-verdict", "verdict")]
            main_others = [s for s in others if s[0] not in ("game", "step", "round", "turn", "line")]
            assert all(largest > s[2] for s in main_others), (largest, max(main_others, key=lambda s: s[2]))
            assert largest >= 0.9 * max(s[2] for s in others), (largest, max(others, key=lambda s: s[2]))
            stood.append(largest)
        assert len(stood) >= 3
    finally:
        board.close()


@pytest.mark.parametrize("script", ["seven-knights.yaml", "demagogos/6p.yaml"])
def test_tv_panels_are_as_tall_as_what_they_hold(browser: Any, tmp_path: Path, script: str) -> None:  # noqa: F811
    """Before: a column's last panel stretched to the foot of the screen — the
    pairing panel 800 px tall around 253 px of code and names."""
    board, steps = play(browser, tmp_path, script)
    page = board.page
    try:
        for kind, value in steps:
            board.step(kind, value)
            for panel in page.evaluate(PANELS):
                # below its last line, no more than its padding and a margin: less than a line of text
                assert panel["height"] - panel["content"] - panel["pad"] < 24, panel
    finally:
        board.close()
