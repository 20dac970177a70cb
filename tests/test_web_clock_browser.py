"""One Night's discussion clock as a person meets it, in a real browser
(Playwright, Debian's chromium): a paused clock still shows the time left,
"Paused m:ss", on every phone and the TV — the time the speaker says when it
goes on — and "+1 min" and "pause/go on" are buttons, not number fields to
type 1 or 0 into.  The table is the accessibility audit's example on
simulated hardware and virtual time."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from test_web_accessibility import GAMES, PHONE, Page
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)
from test_web_present_browser import HD, closed, page_of, play_until, pump_until, step_is, table_of

from companion.core.events import Submit


def discussion_table(browser: Any, tmp_path: Path, lang: str) -> Any:  # noqa: F811
    """A five-minute discussion, red's phone and the TV open on it."""
    example = yaml.safe_load(GAMES["one-night"].read_text(encoding="utf-8"))
    example["config"]["games"]["one-night"]["discussion_min"] = 5
    script = tmp_path / "one-night.yaml"
    script.write_text(yaml.safe_dump(example), encoding="utf-8")
    table = table_of(browser, tmp_path, "one-night", lang, script,
                     red=Page("red", "/", PHONE, seat="red"), tv=Page("tv", "/tv", HD))
    play_until(table, step_is("discussion"))
    return table


def said(table: Any, n: int) -> list[str]:
    return [e["text"] for e in table.log if e["event"] == "say"][-n:]


def test_finding_a_paused_clock_shows_the_time_left_the_speaker_says_when_it_goes_on(
        browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    table = discussion_table(browser, tmp_path, "en")
    try:
        deadline = table.sim.loop.read_side.public()["headline"]["deadline"]
        table.step("wait", deadline - table.sim.clock.wall() - 106)  # 1:46 left
        table.step("submit", Submit("blue", "pause", 1))
        for name in ("red", "tv"):  # paused, the clock stays, at the minute the journal holds
            expect(page_of(table, name).locator("#countdown")).to_be_visible()
            expect(page_of(table, name).locator("#countdown")).to_have_text("Paused 2:00")
        table.step("wait", 300)  # a long pause: nothing moves
        table.step("submit", Submit("blue", "pause", 0))
        assert said(table, 2) == ["The discussion goes on.", "2 minutes left."]
        expect(page_of(table, "tv").locator("#countdown")).not_to_contain_text("Paused")  # counting again
        # the phone counts on the table's clock, sent with each snapshot
        expect(page_of(table, "red").locator("#countdown")).to_have_text(re.compile(r"^Ends in (2:00|1:5\d)$"))
    finally:
        closed(table)


def test_finding_more_time_and_pause_are_buttons_not_number_fields(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    table = discussion_table(browser, tmp_path, "en")
    try:
        red = page_of(table, "red")
        submits = red.locator("#submits")
        expect(submits.get_by_role("button", name="+1 min")).to_be_visible()
        expect(submits.get_by_role("button", name="Pause", exact=True)).to_be_visible()
        assert submits.locator("input").count() == 0  # nothing to type 1 or 0 into
        submits.get_by_role("button", name="Pause", exact=True).click()
        pump_until(table, red, lambda: table.sim.loop.table.engine.state.paused)
        red = page_of(table, "red")
        expect(red.locator("#submits").get_by_role("button", name="Go on")).to_be_visible()
        red.locator("#submits").get_by_role("button", name="+1 min").click()
        pump_until(table, red, lambda: said(table, 1) == ["Red asks for one more minute: it is added now."])
    finally:
        closed(table)
