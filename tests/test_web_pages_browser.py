"""What the pages once got wrong, held right in a real browser (Playwright, Debian's chromium):
a form's Enter sends only its own field and a gift is confirmed first; a
button's refusal is the sentence the table says, in its language; the page
says "reconnecting…" while the table is away and a failed press is an error;
a finished game's result stays on the page until the next game starts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from test_audiences import Auction
from test_web import pair
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)

from companion.app import config
from companion.app.live_table import LiveTable
from companion.app.simulate import Simulation, load_script
from companion.app.web_app import start_web
from companion.games.demagogos.tests.test_demagogos_browser import PHONE, TV, pair_phone, wait_until
from conftest import example_script
from web.live import WatchedReadSide
from web.pairing import RateLimit

ROOT = Path(__file__).resolve().parent.parent
DT6 = example_script("demagogos/6p.yaml")


def opened(browser: Any, url: str, viewport: dict[str, int]) -> Any:  # noqa: F811
    """A page of its own (a new context: its own cookies, so no pairing) at ``url``."""
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(url)
    return page


def demagogos_role_auction(browser: Any, tmp_path: Path) -> tuple[LiveTable, Any, Any]:  # noqa: F811
    """Demagogos (6p.yaml's draws) in its role auction: five phones paired over
    HTTP, red's in the browser (the last: it starts the game)."""
    script = load_script(DT6)
    steps = [(kind, value) for _, kind, value in script.steps]
    live = LiveTable(tmp_path, draws=script.draws, web={"pair_window_s": 5})
    live.web.pair_limit = RateLimit(20, 60.0)  # six phones, one loopback address
    seating = steps.index(("press", "next"))
    live.tap(*(value for _, value in steps[:seating]))
    live.press("next")
    for seat in ("blue", "green", "yellow", "purple", "orange"):
        client = httpx.Client(base_url=live.url)
        assert pair(live, client, seat).status_code == 200
    tv = opened(browser, live.url + "/", TV)
    red = pair_phone(browser, live, tv, "red")
    sync_api.expect(red.locator("#submits button[data-field=gift]")).to_be_visible()
    return live, tv, red


def test_enter_submits_only_its_own_field_and_a_gift_is_confirmed_first(browser: Any,  # noqa: F811
                                                                               tmp_path: Path) -> None:
    expect = sync_api.expect
    live, _tv, red = demagogos_role_auction(browser, tmp_path)
    try:
        posts: list[Any] = []
        red.on("request", lambda r: posts.append(r.post_data_json) if r.url.endswith("/api/submit") else None)
        # Enter in the gift's amount: nothing is sent, the page asks first, in words
        red.select_option("#submits select[name=gift]", "blue")
        red.fill("#submits input[name=gift-amount]", "1")
        red.press("#submits input[name=gift-amount]", "Enter")
        expect(red.locator("#submits .confirm")).to_have_text(re.compile(r"^Give 1 gem to Blue\?"))
        red.click("#submits .confirm button.no")
        expect(red.locator("#submits .confirm")).to_have_count(0)
        # an empty bid is refused on the page, never sent as 0
        red.fill("#submits input[name=bid]", "")
        red.press("#submits input[name=bid]", "Enter")
        expect(red.locator("#status")).to_have_text("Enter a number from 0 to 5.")
        red.wait_for_timeout(200)
        assert posts == []
        # Enter in the bid sends the bid alone
        red.fill("#submits input[name=bid]", "2")
        with red.expect_response(lambda r: r.url.endswith("/api/submit")):
            red.press("#submits input[name=bid]", "Enter")
        assert posts == [{"field": "bid", "value": 2}]
        # the gift, confirmed: sent, and the page says it as the lines do ("1 gem")
        red.fill("#submits input[name=gift-amount]", "1")
        red.click("#submits form[data-field=gift] button[type=submit]")
        with red.expect_response(lambda r: r.url.endswith("/api/submit")):
            red.click("#submits .confirm button.yes")
        assert posts[-1] == {"field": "gift", "value": {"to": "blue", "gems": 1}}
        expect(red.locator("#me-view")).to_contain_text("Round 1: you gave Blue 1 gem")
        assert "1 gems" not in red.locator("#me-view").inner_text()
    finally:
        live.close()


def test_a_refused_button_shows_the_table_s_japanese_sentence(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    live, _tv, red = demagogos_role_auction(browser, tmp_path)
    try:
        live.tap("lang/ja")  # the language card, mid-game
        expect(red.locator("html")).to_have_attribute("lang", "ja")
        mark = len(live.events)
        # the bids are not in: the page offers no next (the table would not take it); sent anyway, refused aloud
        expect(red.locator("#controls button[data-press=next]")).to_be_disabled()
        with red.expect_response(lambda r: r.url.endswith("/api/press")) as answer:
            red.evaluate("press('next')")
        verdict = answer.value.json()
        live.settle()
        (rejected,) = [e for e in live.events[mark:] if e["event"] == "rejected"]
        said = [e for e in live.events[mark:] if e["event"] == "say"][-1]
        assert said["lang"] == "ja" and verdict["text"] == said["text"] and verdict["key"] == said["key"]
        expect(red.locator("#status")).to_have_text(said["text"])  # what the speaker said, not the reason
        expect(red.locator("#status")).to_have_class("err")
        assert rejected["reason"] not in red.locator("#status").inner_text()
    finally:
        live.close()


def test_the_page_says_reconnecting_when_the_table_is_away_and_comes_back(browser: Any,  # noqa: F811
                                                                                tmp_path: Path) -> None:
    expect = sync_api.expect
    live = LiveTable(tmp_path, games={"auction": Auction}, web={"pair_window_s": 5})
    try:
        live.tap("game/auction", "player/red", "player/blue")
        live.press("next")
        tv = opened(browser, live.url + "/", TV)
        red = pair_phone(browser, live, tv, "red")
        expect(red.locator("#offline")).to_be_hidden()
        live.web.stop()  # the daemon's pages go away
        # as the feed ends; a loaded machine may take seconds to close the connections and run the page
        expect(red.locator("#offline")).to_be_visible(timeout=10_000)
        expect(red.locator("#offline")).to_have_text("Reconnecting…")
        expect(tv.locator("#offline")).to_be_visible(timeout=10_000)
        # The bar shows as the feed ends; the server answers for up to its next tick (0.1 s) and
        # closes its connections within a second: a press then may still be taken, and says so.
        assert live.web.serving.stopped(5)
        red.click("#controls button[data-press=repeat]")  # a press while away: an error, not silence
        expect(red.locator("#status")).to_have_text("The table cannot be reached: nothing was sent.")
        expect(red.locator("#status")).to_have_class("err")
        red.fill("#submits input[name=bid]", "3")
        red.click("#submits button[data-field=bid]")
        expect(red.locator("#status")).to_have_text("The table cannot be reached: nothing was sent.")
        expect(red.locator("#submits button[data-field=bid]")).to_be_enabled()  # not left disabled
        live.web.start()  # back on the same port: the pages come back by themselves
        expect(red.locator("#offline")).to_be_hidden(timeout=5000)
        expect(tv.locator("#offline")).to_be_hidden(timeout=5000)
        red.click("#submits button[data-field=bid]")
        expect(red.locator("#me-view")).to_contain_text("bid: 3")
        told = [e for e in live.events if e["event"] == "tell" and e["to"] == "red"][-1]
        # taken: the table's own word for it, held with the secrets (a sealed bid); the status says it was sent
        expect(red.locator("#status")).to_have_text("✓ Sent: hold to see it.")
        expect(red.locator("#status")).to_have_class(re.compile("ok"))
        assert told["text"] not in red.locator("body").inner_text()
    finally:
        live.close()


def test_a_snapshot_while_a_player_types_leaves_their_field_as_it_is(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """Every snapshot (anyone acting) rebuilt the page's forms, typed value and
    focus put back: a key pressed as the field was replaced landed in the new one,
    before its text (the suite once read "30" where "3" was typed).  Now a form is
    drawn again only when what it asks changes."""
    live, _tv, red = demagogos_role_auction(browser, tmp_path)
    try:
        field = red.locator("#submits input[name=bid]")
        field.fill("3")
        field.press("End")
        red.evaluate("() => { window.before = document.querySelector('#submits input[name=bid]'); }")
        blue = pair_phone(browser, live, _tv, "blue")
        field.focus()
        red.evaluate("() => { window.bids = () => (state.play || {}).bids_in; }")
        before = red.evaluate("() => window.bids()")
        blue.fill("#submits input[name=bid]", "2")
        blue.click("#submits button[data-field=bid]")  # blue's bid: a snapshot to every page
        wait_until(lambda: red.evaluate("() => window.bids()") != before)
        red.keyboard.type("1")
        assert field.input_value() == "31"
        assert red.evaluate("() => window.before === document.querySelector('#submits input[name=bid]')")
    finally:
        live.close()


def finished(tmp_path: Path, script: Path, lang: str = "en") -> tuple[Simulation, Any]:
    """``script`` played to its end on a table serving its pages."""
    s = load_script(script)
    cfg = config.load([ROOT / "config" / "companion.yaml"], {**s.overrides, "language": lang})
    sim = Simulation(cfg, tmp_path, lambda e: None, draws=s.draws, read_side=WatchedReadSide())
    web = start_web(sim.app, cfg, "127.0.0.1", 0)
    for _, kind, value in s.steps:
        sim.step(kind, value)
    assert sim.loop.table.state.phase == "idle"
    return sim, web


def result_page(browser: Any, web: Any) -> Any:  # noqa: F811
    page = opened(browser, web.address, PHONE)
    sync_api.expect(page.locator("#result-section")).to_be_visible()
    sync_api.expect(page.locator("#result tr td").first).to_be_visible()
    return page


def rows(page: Any) -> list[list[str]]:
    return [[c.strip() for c in r.split("\t")] for r in page.locator("#result tr").all_inner_texts()[1:]]


def test_seven_knights_result_winners_first_with_rounds_and_chart(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    sim, web = finished(tmp_path, example_script("seven-knights.yaml"))
    try:
        page = result_page(browser, web)
        expect(page.locator("#game")).to_have_text("Last game: Seven Knights Bewitched")  # not "No game yet"
        assert rows(page)[0][:3] == ["1", "Red ★", "9"]  # the winner first, the final total
        assert [r[2] for r in rows(page)] == ["9", "5", "5", "2", "0"]
        expect(page.locator("#chart polyline")).to_have_count(5)  # the rounds and the chart stay
        expect(page.locator("#verdict")).to_contain_text("Red")
        sim.step("tap", "game/seven-knights")  # a new game being gathered: the page is its, the result in the history
        expect(page.locator("#result-section")).to_be_hidden()
        expect(page.locator("#history")).to_contain_text("Seven Knights Bewitched")
    finally:
        web.stop()
        sim.close()


@pytest.mark.parametrize("lang, between, player", [("en", "Between games", "Player"), ("ja", "ゲームの合間", "プレイヤー")])
def test_the_result_view_says_between_games_once_and_names_its_columns(browser: Any, tmp_path: Path,  # noqa: F811
                                                                       lang: str, between: str, player: str) -> None:
    """The phase's name ("Between games") stood above the headline that begins
    with it ("Between games: tap a game card."); the result's name column had
    no heading (a screen reader read an empty header)."""
    sim, web = finished(tmp_path, example_script("one-night.yaml"), lang=lang)
    try:
        page = result_page(browser, web)
        sync_api.expect(page.locator("#headline")).to_contain_text(between)
        assert page.locator("main, body").first.inner_text().count(between) == 1
        assert page.locator("#result tr th").all_inner_texts()[1] == player
    finally:
        web.stop()
        sim.close()


@pytest.mark.parametrize("path", ["/", "/tv"])
def test_a_fresh_table_asks_for_a_game_card_once(browser: Any, tmp_path: Path, path: str) -> None:  # noqa: F811
    """Before any game the title said "No game yet: tap a game card." above the
    headline "Between games: tap a game card.": the instruction twice."""
    cfg = config.load([ROOT / "config" / "companion.yaml"])
    sim = Simulation(cfg, tmp_path, lambda e: None, read_side=WatchedReadSide())
    web = start_web(sim.app, cfg, "127.0.0.1", 0)
    try:
        page = opened(browser, web.address.rstrip("/") + path, TV)
        sync_api.expect(page.locator("#game")).to_have_text("No game yet")
        sync_api.expect(page.locator("body")).to_contain_text("tap a game card")
        assert page.locator("body").inner_text().count("tap a game card") == 1
    finally:
        web.stop()
        sim.close()


def test_one_night_result_executed_roles_and_the_winning_team(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    sim, web = finished(tmp_path, example_script("one-night.yaml"), lang="ja")
    try:
        page = result_page(browser, web)
        verdict = page.locator("#verdict li")
        said = [line.text for line in (sim.loop.narrate(s["key"], s["params"], "ja") for s in
                                       sim.loop.table.result["says"])]  # type: ignore[index]
        expect(verdict).to_have_text(said)  # executed, the winning team, the winners: as said
        expect(page.locator("#verdict")).to_contain_text("処刑")
        table = {r[1].rstrip(" ★"): r[-1] for r in rows(page)}  # a side's game: no 1/0 total column
        assert table == {"青": "怪盗", "緑": "村人", "紫": "占い師", "赤": "人狼", "黄色": "人狼"}  # each final role
    finally:
        web.stop()
        sim.close()


def test_madness_hour_result_the_girl_s_card_and_who_won(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    sim, web = finished(tmp_path, example_script("madness-hour.yaml"))
    try:
        page = result_page(browser, web)
        expect(page.locator("#verdict li").first).to_have_text("Green, the Girl, was the evil god.")
        expect(page.locator("#verdict")).to_contain_text("Escaped from the mansion: Blue and Yellow.")
        assert rows(page)[0][:2] == ["won", "Yellow ★"]  # a side wins, no totals: won or lost, no places
        assert {r[1]: r[-1] for r in rows(page)}["Green"] == "the Girl: the evil god"
    finally:
        web.stop()
        sim.close()


def test_demagogos_result_places_and_vp(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    worked = yaml.safe_load(DT6.read_text(encoding="utf-8"))["expect"]
    sim, web = finished(tmp_path, DT6)
    try:
        page = result_page(browser, web)
        exits = [e[0] for e in worked["exits"]]  # the places, in the order the winners left
        assert [r[1].rstrip(" ★") for r in rows(page)][:len(exits)] == [p.capitalize() for p in exits]
        assert [r[0] for r in rows(page)][:len(exits)] == [str(n) for n in range(1, len(exits) + 1)]
        assert {r[1].rstrip(" ★").lower(): int(r[2]) for r in rows(page)} == worked["totals"]
        expect(page.locator("#scores tr")).to_have_count(7)  # the rounds stay, every player's row
    finally:
        web.stop()
        sim.close()


def test_demagogos_total_is_the_vp_before_the_round_is_scored(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """In the trade, the sage's VP of this round is already on the board: the
    scoreboard's Total says the same, not the last scored round's 0."""
    expect = sync_api.expect
    s = load_script(DT6)
    cfg = config.load([ROOT / "config" / "companion.yaml"], s.overrides or None)
    sim = Simulation(cfg, tmp_path, lambda e: None, draws=s.draws, read_side=WatchedReadSide())
    web = start_web(sim.app, cfg, "127.0.0.1", 0)
    try:
        for _, kind, value in s.steps:
            sim.step(kind, value)
            engine = sim.loop.table.engine
            if engine is not None and engine.state.step == "trade":
                break
        vp = sim.loop.read_side.public()["play"]["vp"]
        assert any(vp.values())  # someone has VP, and no round is scored yet
        assert not sim.loop.read_side.public()["play"]["rounds"]
        page = opened(browser, web.address, TV)
        for name, n in vp.items():
            expect(page.locator("#scores tr", has_text=name.capitalize()).locator("td").last).to_have_text(str(n))
    finally:
        web.stop()
        sim.close()
