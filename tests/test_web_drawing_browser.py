"""A snapshot redraws only the parts of the page it changed, in a real browser
(Playwright, Debian's chromium): a box opened in Demagogos' cave adds the
board's line for that box and a line to the log, and leaves every other
node of the phone's page as it was — the same nodes, not equal new ones (a
page drawn whole on every tap had the browser lay out a whole page each time).
The table is the accessibility audit's (tests/test_web_accessibility.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_web_accessibility import PHONE, Page
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)
from test_web_present_browser import closed, page_of, play_until, step_is, table_of

# Every node of these parts, held by the page under a name (``window.kept``), with its text
KEEP = """(sels) => { window.kept = {};
  for (const sel of sels) document.querySelectorAll(sel).forEach((e, i) => {
    window.kept[`${sel} ${i}`] = [e, e.textContent]; }); return Object.keys(window.kept).length; }"""
# Per held node: [still the same node where it was, its text unchanged]
KEPT = """() => Object.fromEntries(Object.entries(window.kept).map(([name, [e, text]]) => {
  const [sel, i] = [name.slice(0, name.lastIndexOf(' ')), +name.slice(name.lastIndexOf(' ') + 1)];
  const now = document.querySelectorAll(sel)[i];
  return [name, [now === e, !!now && now.textContent === text]]; }))"""
PARTS = ("#board li", "#scores tr", "#seats button", "#me-view p", "#tonight tr", "#history li", "header p")


def test_a_box_opened_redraws_its_line_and_keeps_every_other_node(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """Before: every snapshot (anyone's tap) replaced the board, the scoreboard and
    its chart, the seats, tonight's totals, the history and the seat's own lines."""
    table = table_of(browser, tmp_path, "demagogos", "en", red=Page("red", "/", PHONE, seat="red"))
    try:
        play_until(table, step_is("cave"))
        assert tuple(table.steps[table.at]) == ("tap", "dt/box/1")
        red = page_of(table, "red")
        assert red.evaluate(KEEP, list(PARTS)) > 10
        log = red.locator("#log li").count()
        board = red.locator("#board li").count()
        table.step(*table.steps[table.at])  # yellow opens box 1: a line on the board
        red = page_of(table, "red")
        sync_api.expect(red.locator("#log li")).not_to_have_count(log)  # what was said of it, too
        sync_api.expect(red.locator("#board li")).to_have_count(board + 1)
        sync_api.expect(red.locator("#board li").last).to_contain_text("Box 1")  # the box's line, new
        kept = red.evaluate(KEPT)
        changed = sorted(name for name, (_, same_text) in kept.items() if not same_text)
        assert all(name.startswith(("#board li", "header p")) for name in changed), changed
        redrawn = sorted(name for name, (same, same_text) in kept.items() if same_text and not same)
        assert redrawn == [], redrawn  # a node whose text is what it was is the node that was
        assert {name.split(" ")[0] for name in kept} >= {"#board", "#scores", "#seats", "#me-view", "header"}
    finally:
        closed(table)
