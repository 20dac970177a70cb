"""A phone's page reads as sentences and shows the present, in a real browser
(Playwright, Debian's chromium), each finding of the pages' third review on
the phone by its own test: what the phone may do said as a sentence, not glued
labels; "Your seat: Red" in one run; the game log instead of one "Last said"
under a headline it repeated; the step's controls on the first screen of a
360×740 phone; a secret face down until held; a two-team game's losers "lost",
not "Place 4".

The tables are the accessibility audit's (tests/test_web_accessibility.py):
an example played on simulated hardware and virtual time, its pages open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_web_accessibility import PHONE, TV, Page
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)
from test_web_present_browser import closed, page_of, play_until, pump_until, step_is, table_of

# Every control the page offers now (a form of the step's, an enabled press): its bottom edge
CONTROLS_BOTTOM = """() => Math.max(0, ...[...document.querySelectorAll(
  '#submits form, #controls button[data-press]:not(:disabled)')].map((e) => e.getBoundingClientRect().bottom))"""


def test_finding_the_phone_says_what_it_may_do_as_a_sentence_and_names_its_seat_in_one_run(
        browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """"You may now: send Your bid, in gems, send Give gems: to whom, how many,
    press Back." glued the forms' labels into a sentence; "Your seat : Red" had a
    space before its colon (in Japanese too)."""
    expect = sync_api.expect
    for lang, seat, sentence in (("en", "Your seat: Red", "Or press Back."),
                                 ("ja", "あなたの席：赤", "または戻るを押せます。")):
        table = table_of(browser, tmp_path / lang, "demagogos", lang, red=Page("red", "/", PHONE, seat="red"))
        try:
            play_until(table, step_is("role_auction"))
            red = page_of(table, "red")
            expect(red.locator("#submits form")).to_have_count(2)  # the bid and the gift: the list of what to send
            assert red.locator("#me-head").inner_text().strip() == seat
            expect(red.locator("#me-may")).to_have_text(sentence)  # after the forms: the buttons, in words
        finally:
            closed(table)


def test_finding_the_game_log_replaces_the_last_line_said(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """One "Last said" line stood under the headline, often the same words twice;
    the table's lines before it were gone.  Now a log of this game's public lines,
    newest first, in the table's language, never a line told to one seat."""
    expect = sync_api.expect
    table = table_of(browser, tmp_path, "demagogos", "en", red=Page("red", "/", PHONE, seat="red"),
                     public=Page("public", "/", TV))
    try:
        play_until(table, step_is("cave"))
        said = [e["text"] for e in table.log if e["event"] == "say" and not e.get("aside")]
        start = max(i for i, e in enumerate(said) if e.startswith("Demagogos' Trap."))  # the game card's line
        told = {e["text"] for e in table.log if e["event"] == "tell"}
        for name in ("red", "public"):
            page = page_of(table, name)
            expect(page.locator("header")).not_to_contain_text(said[-1])  # the header: the present alone
            expect(page.locator("#log li")).to_have_text(said[start:][::-1])  # this game's, newest first
            shown = page.locator("#log").inner_text()
            assert not [text for text in told if text in shown]  # the sage's boxes stay on red's page
        table.sim.step("tap", "lang/ja")
        red = page_of(table, "red")
        expect(red.locator("#log li").first).not_to_have_text(said[-1])
        log = red.locator("#log").inner_text()
        assert not any(c.isascii() and c.isalpha() for c in log.replace("VP", "")), log
    finally:
        closed(table)


def test_finding_the_step_s_controls_are_on_the_phone_s_first_screen(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """Pages 2,000–3,300 px long at 360×740: the bid's form and next below the
    fold, under the history and every evening's plays."""
    expect = sync_api.expect
    for game, step in (("demagogos", "vp_auction"), ("madness-hour", "battle")):
        table = table_of(browser, tmp_path / game, game, "ja", red=Page("red", "/", PHONE, seat="red"))
        try:
            play_until(table, step_is(step))
            red = page_of(table, "red")
            expect(red.locator("#submits form").first).to_be_visible()
            red.evaluate("window.scrollTo(0, 0)")
            bottom = red.evaluate(CONTROLS_BOTTOM)
            assert 0 < bottom <= PHONE["height"], f"{game} {step}: controls end at {bottom:.0f} px"
            expect(red.locator("#history")).to_be_hidden()  # folded: the evening's plays, a tap away
        finally:
            closed(table)


def test_finding_a_seat_s_secret_shows_only_while_held(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """The sage's boxes and the role stood on the phone as plain text, read by
    anyone beside a lit phone on the table."""
    expect = sync_api.expect
    table = table_of(browser, tmp_path, "demagogos", "en", red=Page("red", "/", PHONE, seat="red"))
    try:
        play_until(table, step_is("cave"))
        red = page_of(table, "red")
        boxes = red.locator("#me-view p", has_text="Treasures are in boxes 1 and 2")
        role = red.locator("#me-view p", has_text="Your role this round: the sage")
        for secret in (boxes, role):
            expect(secret).to_be_hidden()
        reveal = red.locator("#reveal")
        reveal.hover()
        red.mouse.down()  # held: shown
        for secret in (boxes, role):
            expect(secret).to_be_visible()
        red.mouse.up()  # let go: face down again
        for secret in (boxes, role):
            expect(secret).to_be_hidden()
        reveal.focus()  # a keyboard holds Space
        red.keyboard.down(" ")
        expect(boxes).to_be_visible()
        expect(reveal).to_have_attribute("aria-expanded", "true")
        red.keyboard.up(" ")
        expect(boxes).to_be_hidden()
        expect(red.locator("#status")).not_to_contain_text("Treasures", timeout=7000)  # the word told fades too
    finally:
        closed(table)


def test_finding_a_two_team_game_s_losers_lost_rather_than_placed(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """One Night's result listed the village's winners as place 1 and the
    werewolves as "Place 4": a side wins, its players won and the others lost."""
    expect = sync_api.expect
    for lang, won, lost in (("en", "won", "lost"), ("ja", "勝ち", "負け")):
        table = table_of(browser, tmp_path / lang, "one-night", lang, public=Page("public", "/", TV))
        try:
            play_until(table, lambda t: t.at == len(t.steps))
            page = page_of(table, "public")
            expect(page.locator("#result-section")).to_be_visible()
            result = table.sim.loop.read_side.public()["result"]["players"]
            firsts = [r.split("\t")[0].strip() for r in page.locator("#result tr").all_inner_texts()[1:]]
            assert firsts == [won if p["winner"] else lost for p in result], firsts
            assert lost in firsts and won in firsts
        finally:
            closed(table)


def test_finding_a_passing_acknowledgement_leaves_with_its_language(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """The page walk saw red's phone still read "✓ 次へ" from a Japanese game
    once the table had gone over to English: a status fades after 4 s, and a
    language card within them left it standing in the language just left."""
    expect = sync_api.expect
    table = table_of(browser, tmp_path, "demagogos", "en", red=Page("red", "/", PHONE, seat="red"))
    try:
        play_until(table, step_is("role_auction"))
        red = page_of(table, "red")
        form = red.locator('#submits form[data-field="bid"]')
        form.locator("input[name=bid]").fill("1")
        form.locator('button[data-field="bid"]').click()
        # the bid's acknowledgement, in English (the table's loop, this thread's, takes the bid)
        pump_until(table, red, lambda: red.locator("#status.ok").count() == 1 and red.locator("#status").inner_text() != "")
        expect(red.locator("#status.ok")).not_to_have_text("")
        table.sim.step("tap", "lang/ja")
        expect(red.locator("#me-head")).to_contain_text("あなたの席")  # the page is in Japanese now
        status = red.locator("#status").inner_text()
        assert not any(c.isascii() and c.isalpha() for c in status), status
    finally:
        closed(table)
