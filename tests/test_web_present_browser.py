"""Every page shows the present, in a real browser (Playwright, Debian's
chromium), each finding of the pages' third review by its own test: a confirm
answered after a night; a seat's private text gone with its step and its
game; one clock; a next that ends the discussion for everyone asked first,
and back offered only where the table takes it; no stale result or line
beside the live headline; the virtual table in the table's language; the
last line said after a restart is the game's.

The tables are the accessibility audit's (tests/test_web_accessibility.py):
an example played on simulated hardware and virtual time, its pages open."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import yaml
from test_web_accessibility import GAMES, PHONE, TV, Page, Table, open_page
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)
from test_web_pages_browser import opened

from companion.app.live_table import LiveTable
from companion.core.events import Submit

HD = {"width": 1920, "height": 1080}


def table_of(browser: Any, tmp_path: Path, game: str, lang: str, script: Path | None = None,  # noqa: F811
             **pages: Page) -> Table:
    """``game``'s example (or ``script``) on a table in ``lang``, with ``pages`` open on it (by name)."""
    opened_pages = {name: (p, open_page(browser.new_context(viewport=p.viewport), p)) for name, p in pages.items()}
    return Table(opened_pages, tmp_path / f"{game}-{lang}", script or GAMES[game], lang)


def play_until(table: Table, when: Any) -> None:
    """The example's next steps until ``when(table)`` holds."""
    while not when(table):
        assert table.at < len(table.steps), "the script never got there"
        table.step(*table.steps[table.at])


def step_is(name: str) -> Any:
    def when(table: Table) -> bool:
        engine = table.sim.loop.table.engine
        return engine is not None and engine.state.step == name
    return when


def page_of(table: Table, name: str) -> Any:
    p, page = table.pages[name]
    table.caught_up(p, page)
    return page


def closed(table: Table) -> None:
    table.close()
    for _, page in table.pages.values():
        page.context.close()


def test_finding_a_confirm_shown_after_the_night_can_be_answered(browser: Any,  # noqa: F811
                                                                 tmp_path: Path) -> None:
    """The night disabled every control on the phone and the day turned only the
    press buttons back on: the confirm's yes and cancel stayed dead until a reload."""
    expect = sync_api.expect
    table = table_of(browser, tmp_path, "one-night", "en", red=Page("red", "/", PHONE, seat="red"))
    try:
        play_until(table, step_is("night"))
        red = page_of(table, "red")
        expect(red.locator("#night")).to_be_visible()  # the phone was open all night
        play_until(table, step_is("discussion"))
        red = page_of(table, "red")
        red.click("#controls button[data-press=next]")
        expect(red.locator("#press-confirm")).to_be_visible()
        expect(red.locator("#press-confirm button.yes")).to_be_enabled()
        expect(red.locator("#press-confirm button.no")).to_be_enabled()
        red.click("#press-confirm button.no")
        expect(red.locator("#press-confirm")).to_be_hidden()
    finally:
        closed(table)


LATIN_WORD = re.compile(r"[A-Za-z]{3,}")


def test_finding_a_seat_s_private_text_goes_with_its_step_and_its_game(browser: Any,  # noqa: F811
                                                                      tmp_path: Path) -> None:
    """Red's phone kept the last Demagogos game's "Treasures lie in boxes 1 and 2."
    (a secret on a lit phone), "You paid …" and "you may change it" into a
    Japanese One Night: a log of lines told, not the seat's state now."""
    expect = sync_api.expect
    table = table_of(browser, tmp_path, "demagogos", "en", red=Page("red", "/", PHONE, seat="red"))
    try:
        play_until(table, step_is("turn_auction"))  # red's role bid taken, then the auction closed
        red = page_of(table, "red")
        assert any(e["event"] == "tell" and e["to"] == "red" and e["key"] == "dt.bid.taken" for e in table.log)
        # the closed auction's "you may change it" is nowhere on the phone: the bid is the page's state
        expect(red.locator("main")).not_to_contain_text("You may change it", timeout=7000)
        play_until(table, step_is("cave"))  # the roles told: red is this round's sage
        red = page_of(table, "red")
        expect(red.locator("#me-view")).to_contain_text("Treasures are in boxes 1 and 2")  # the round's state
        # the game left (back held, then next), a Japanese One Night to its discussion
        for kind, value in (("hold", "back"), ("press", "next"), ("tap", "lang/ja"), ("tap", "game/one-night"),
                            *(("tap", f"player/{p}") for p in ("red", "blue", "green", "yellow", "purple")),
                            ("press", "next"), ("press", "next"), ("wait", 200)):
            table.step(kind, value)
        assert step_is("discussion")(table)
        red = page_of(table, "red")
        main = red.locator("main")
        for gone in ("Treasures", "You paid", "You may change it", "Gems"):
            expect(main).not_to_contain_text(gone, timeout=7000)
        private = red.locator("#me").inner_text() + red.locator("#status").inner_text()
        assert not LATIN_WORD.search(private), private  # in the table's language, all of it
    finally:
        closed(table)


def test_finding_every_remaining_time_text_comes_from_the_deadline_drawn(browser: Any,  # noqa: F811
                                                                         tmp_path: Path) -> None:
    """The TV showed 0:28 under "One minute left." said half a minute before, and
    read 1:29 as "2 minutes left"; the phone counted on its own clock."""
    expect = sync_api.expect
    example = yaml.safe_load(GAMES["one-night"].read_text(encoding="utf-8"))
    example["config"]["games"]["one-night"]["discussion_min"] = 5  # room for the minutes said
    script = tmp_path / "one-night.yaml"
    script.write_text(yaml.safe_dump(example), encoding="utf-8")
    table = table_of(browser, tmp_path, "one-night", "en", script)
    try:
        play_until(table, step_is("discussion"))
        deadline = table.sim.loop.read_side.public()["headline"]["deadline"]
        table.step("wait", deadline - table.sim.clock.wall() - 89)  # 1:29 left
        wall = table.sim.clock.wall()
        pages = {}
        ahead = {"tv": 0, "phone": 40}  # the phone's own clock is 40 s fast: it counts on the table's
        for name, viewport in (("tv", HD), ("phone", PHONE)):
            page = browser.new_context(viewport=viewport).new_page()
            page.clock.set_fixed_time(wall + ahead[name])
            page.goto(table.url + ("/tv" if name == "tv" else "/"))
            pages[name] = page
        tv, phone = pages["tv"], pages["phone"]
        expect(tv.locator("#countdown")).to_have_text("1:29")
        expect(tv.locator("#countdown-said")).to_have_text("1 minute left")
        expect(phone.locator("#countdown")).to_have_text("Ends in 1:29")  # the same clock
        said = [e["text"] for e in table.log if e["event"] == "say"][-1]
        assert said == "Discuss who to execute. You have 5 minutes."
        # said three and a half minutes ago: no longer true (the phone's game log keeps it, as the past)
        expect(tv.locator("#line")).not_to_have_text(said)
        expect(phone.locator("header")).not_to_contain_text(said)
        table.step("wait", 29.5)  # "One minute left." said at 1:00
        assert [e["key"] for e in table.log if e["event"] == "say"][-1] == "onw.discussion.one_minute_left"
        for name, page in pages.items():
            page.clock.set_fixed_time(wall + ahead[name] + 61)  # half a minute later: 0:28
        expect(tv.locator("#countdown")).to_have_text("0:28")
        expect(tv.locator("#countdown-said")).to_have_text("under a minute left")
        expect(phone.locator("#countdown")).to_have_text("Ends in 0:28")
        expect(tv.locator("#line")).not_to_have_text("One minute left.")
        expect(phone.locator("header")).not_to_contain_text("One minute left.")
        for page in (tv, phone):
            page.context.close()
    finally:
        closed(table)


def pump_until(table: Table, page: Any, done: Any) -> None:
    """The page's request is taken by the table's loop (this thread's): pumped until ``done``."""
    deadline = time.monotonic() + 10
    while not done():
        assert time.monotonic() < deadline, "the table did not take it"
        table.sim.loop.pump()
        page.wait_for_timeout(20)


def test_finding_the_discussion_is_ended_for_everyone_only_when_asked_and_back_is_offered_only_if_taken(
        browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """Any phone ended One Night's discussion for everyone with one tap (Demagogos
    asks first in the same place); back was enabled where the page said only
    next was possible."""
    expect = sync_api.expect
    table = table_of(browser, tmp_path, "one-night", "en", red=Page("red", "/", PHONE, seat="red"))
    try:
        play_until(table, step_is("discussion"))
        red = page_of(table, "red")
        presses: list[Any] = []
        red.on("request", lambda r: presses.append(r.post_data_json) if r.url.endswith("/api/press") else None)
        # the discussion's own fields (one more minute, a pause) and next; never back
        expect(red.locator("#me-may")).to_have_text(re.compile(r"press Next\.$"))
        expect(red.locator("#me-may")).not_to_contain_text("Back")
        assert "back" not in table.sim.loop.read_side.private("red")["legal"]["buttons"]
        expect(red.locator("#controls button[data-press=back]")).to_be_disabled()
        expect(red.locator("#controls button[data-press=next]")).to_be_enabled()
        red.click("#controls button[data-press=next]")
        expect(red.locator("#press-confirm")).to_have_text(re.compile(r"^End the discussion for everyone and vote\?"))
        red.wait_for_timeout(200)
        assert presses == [] and step_is("discussion")(table)  # nothing sent yet
        red.click("#press-confirm button.yes")
        pump_until(table, red, lambda: step_is("vote")(table))
        assert presses == [{"button": "next"}]
    finally:
        closed(table)


def test_finding_no_stale_result_or_line_beside_the_live_headline(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """The TV showed the last One Night result while Demagogos paired its phones;
    "Last said: … 0 of 6 bids are in" stood under a headline of "4 of 6"."""
    expect = sync_api.expect
    table = table_of(browser, tmp_path, "one-night", "en", tv=Page("tv", "/tv", HD), public=Page("public", "/", TV))
    try:
        play_until(table, lambda t: t.at == len(t.steps))
        tv = page_of(table, "tv")
        expect(tv.locator("#result-section")).to_be_visible()  # between games: the result is the news
        for kind, value in (("tap", "game/demagogos"),
                            *(("tap", f"player/{p}") for p in ("red", "blue", "green", "yellow", "purple", "orange"))):
            table.sim.step(kind, value)
        table.sim.step("press", "next")  # Demagogos waits for the phones
        assert table.sim.loop.table.state.phase == "pairing"
        for name in ("tv", "public"):
            page = page_of(table, name)
            expect(page.locator("#result-section")).to_be_hidden()
        for seat in ("red", "blue", "green", "yellow", "purple", "orange"):
            table.pair_http(seat)
        table.sim.step("press", "repeat")  # "Role auction: 0 of 6 bids are in. …"
        said = [e["text"] for e in table.log if e["event"] == "say"][-1]
        assert "0 of 6" in said, said
        public = page_of(table, "public")
        expect(public.locator("#log li").first).to_have_text(said)
        for seat, bid in (("red", 1), ("blue", 0), ("green", 2), ("yellow", 0)):
            table.sim.step("submit", Submit(seat, "bid", bid))
        for name in ("tv", "public"):
            page = page_of(table, name)
            expect(page.locator("#headline" if name == "public" else "#turn")).to_contain_text("4 of 6")
            # the header holds the present; the public page's game log keeps the line, as the past
            if name == "tv":
                expect(page.locator("#line")).not_to_have_text(said)
            else:
                expect(page.locator("header")).not_to_contain_text(said)
    finally:
        closed(table)


def test_finding_the_virtual_table_speaks_the_table_s_language(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """On a Japanese table the virtual table's LEDs (ready/ok/error), its Next and
    "Unplug the reader" stayed English."""
    expect = sync_api.expect
    table = table_of(browser, tmp_path, "seven-knights", "en", virtual=Page("virtual", "/", TV, virtual=True))
    try:
        page = page_of(table, "virtual")
        expect(page.locator("#panel button[data-panel=next]")).to_have_text("Next")
        table.sim.step("tap", "lang/ja")  # the table turns Japanese under the open page
        page = page_of(table, "virtual")
        expect(page.locator("html")).to_have_attribute("lang", "ja")
        expect(page.locator("#panel button[data-panel=next]")).to_have_text("次へ")
        expect(page.locator("#cable")).to_have_text("リーダーを外す")
        expect(page.locator("#virtual-title")).to_have_text("仮想テーブル")
        leds = page.locator("#leds").inner_text()
        assert leds.strip() and not LATIN_WORD.search(leds), leds
        for label in page.locator("#leds .led").all():
            assert not LATIN_WORD.search(label.get_attribute("aria-label") or ""), label.get_attribute("aria-label")
    finally:
        closed(table)


def test_finding_after_a_restart_the_last_line_said_is_the_game_s(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """After a restart the address announcement stood as "Last said" in place of
    the game's instruction; in Japanese it called 127.0.0.1 a ホスト名 (a host name)."""
    expect = sync_api.expect
    live = LiveTable(tmp_path)
    live.tap("game/seven-knights", "player/red", "player/blue", "player/green", "player/yellow")
    live.press("next")
    instruction = [e for e in live.events if e["event"] == "say"][-1]
    assert instruction["key"].startswith("skb.phase.quest")
    live.close()
    again = LiveTable(tmp_path)  # the daemon restarted: it says where its pages are
    try:
        again.settle()
        assert any(e["event"] == "say" and e["key"] == "web.address" for e in again.events)
        page = opened(browser, again.url + "/", PHONE)
        expect(page.locator("#log li").first).to_have_text(instruction["text"])
        expect(page.locator("#log")).not_to_contain_text("127.0.0.1")  # the address said at start: an aside
        tv = opened(browser, again.url + "/tv", HD)
        expect(tv.locator("#line")).to_have_text(instruction["text"])
        page.context.close()
        tv.context.close()
    finally:
        again.close()
    (tmp_path / "ja").mkdir()
    ja = LiveTable(tmp_path / "ja", language="ja")
    try:
        ja.settle()
        address = [e for e in ja.events if e["event"] == "say" and e["key"] == "web.address"][-1]
        assert "ホスト名" not in address["text"], address["text"]  # 127.0.0.1 is no host name
    finally:
        ja.close()


def test_finding_the_printed_qr_card_reads_in_japanese_too(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """The card printed by ``companion web qr`` said "Scan for the scoreboard" alone: a
    language card turns the table Japanese, the card on it stayed English."""
    from companion.app.cli import main

    card = tmp_path / "card.svg"
    assert main(["web", "qr", "-o", str(card), "--url", "http://companion.local:8080/"]) == 0  # English settings
    page = browser.new_context(viewport=TV).new_page()
    try:
        page.set_content(card.read_text(encoding="utf-8"))
        words = page.locator("svg > text").evaluate_all("texts => texts.map((t) => t.textContent)")
        assert words[:2] == ["Table companion", "テーブルコンパニオン"], words
        assert "Scan for the scoreboard" in words and "読み取ると得点表が開きます" in words, words
        assert "http://companion.local:8080/" in words
    finally:
        page.context.close()


def test_finding_the_readable_log_of_a_japanese_table_gives_its_refusals_in_japanese(tmp_path: Path) -> None:
    """``companion simulate --pretty`` on a Japanese table printed each refusal's
    English reason ("a bid must be from 0 to 5")."""
    import io

    from companion.app.simulate import run_script

    out = io.StringIO()
    assert run_script(GAMES["demagogos"], pretty=True, out=out, overrides={"language": "ja"}) == 0
    refused = [line for line in out.getvalue().splitlines() if "✗" in line]
    assert len(refused) >= 3, refused
    for line in refused:
        why = line.split(" — ", 1)[1] if " — " in line else ""
        assert not LATIN_WORD.search(why), line
    assert any("入札" in line for line in refused), refused  # a page's refusal, as its page showed it
