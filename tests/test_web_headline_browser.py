"""The phone and public pages' headline and buttons, in a real browser
(Playwright, Debian's chromium): the headline from state beside the last line
said and the countdown moving; the night screen the same on every page for
two deals; your seat first; who may press what (a next that ends a step for
everyone confirmed first); the result across a restart; the door's refusals
in the table's language."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
from test_web import pair
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)
from test_web_headline import DT6, play_until, simulation
from test_web_pages_browser import opened

from companion.app import config
from companion.app.live_table import LiveTable
from companion.app.simulate import load_script
from companion.app.web_app import start_web
from companion.games.demagogos.tests.test_demagogos_browser import PHONE, TV, pair_phone
from conftest import example_script
from web.pairing import COOKIE, RateLimit

ROOT = Path(__file__).resolve().parent.parent


def four_knights(tmp_path: Path) -> LiveTable:
    """Seven Knights with red, blue, green and yellow seated (gathered, not started), its pages served."""
    live = LiveTable(tmp_path, web={"pair_window_s": 5})
    try:
        live.tap("game/seven-knights", "player/red", "player/blue", "player/green", "player/yellow")
    except BaseException:
        live.close()
        raise
    return live


def test_the_headline_is_the_table_s_state_and_the_game_log_stands_beside_it(browser: Any,  # noqa: F811
                                                                                    tmp_path: Path) -> None:
    expect = sync_api.expect
    live = four_knights(tmp_path)
    try:
        live.press("next")
        page = opened(browser, live.url + "/", PHONE)
        expect(page.locator("#headline")).to_have_text("Waiting for Red.")  # the quest: the start player
        said = [e["text"] for e in live.events if e["event"] == "say"][-1]
        expect(page.locator("#log li").first).to_have_text(said)
        live.tap("lang/en")  # "English narration.": said, atop the game log, beside the headline, which stays
        expect(page.locator("#log li").first).to_have_text("English narration.")
        expect(page.locator("#log li").nth(1)).to_have_text(said)  # the line before it, kept below
        expect(page.locator("#headline")).to_have_text("Waiting for Red.")
    finally:
        live.close()


def test_the_discussion_countdown_moves_on_the_phone(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """Madness Hour's climax: the minute's discussion counts down on the page,
    from the deadline the table gives (its wall clock), second by second."""
    expect = sync_api.expect
    script = load_script(example_script("madness-hour.yaml"))
    live = LiveTable(tmp_path, draws=script.draws, web={"pair_window_s": 5})
    try:
        for _, kind, value in script.steps:
            live.tap(value) if kind == "tap" else live.press(value)
            if value == "mh/climax":
                break
        page = opened(browser, live.url + "/", PHONE)
        countdown = page.locator("#countdown")
        expect(countdown).to_have_text(re.compile(r"^Ends in (1:00|0:5\d)$"))
        first = countdown.inner_text()
        expect(countdown).not_to_have_text(first, timeout=3000)  # it moves
        head = live.loop.read_side.public()["headline"]
        left = head["deadline"] - time.time()
        assert 50 < left <= 60
    finally:
        live.close()


def night_pages(browser: Any, tmp_path: Path, seed: int, stray: bool,  # noqa: F811
                address: str | None) -> tuple[LiveTable, dict[str, Any]]:
    """One Night at night, served at ``address`` (the first deal's): the public
    page, red's paired phone and an unpaired phone."""
    live = LiveTable(tmp_path, seed=seed, web={"pair_window_s": 5})
    live.web.pair_limit = RateLimit(20, 60.0)
    if address is not None:
        live.web.stop()
        assert live.web.serving.stopped(5)
        live.web.port, live.web.address = int(address.rsplit(":", 1)[1].strip("/")), address
        live.web.start()
        live.url = address.rstrip("/")
    live.tap("game/one-night", *(f"player/{p}" for p in ("red", "blue", "green", "yellow", "purple")))
    tv = opened(browser, live.url + "/", PHONE)
    red = pair_phone(browser, live, tv, "red")
    blue = httpx.Client(base_url=live.url)
    assert pair(live, blue, "blue").status_code == 200
    stranger = opened(browser, live.url + "/", PHONE)
    live.press("next", "next")
    assert live.loop.table.eyes_closed
    if stray:  # this deal's werewolf fumbles a card over the reader
        live.tap("onw/werewolf/1")
    blue.close()
    return live, {"public": tv, "red": red, "stranger": stranger}


def test_the_night_screen_is_the_same_on_every_page_for_two_deals(browser: Any,  # noqa: F811
                                                                        tmp_path: Path) -> None:
    expect = sync_api.expect
    shots: list[dict[str, bytes]] = []
    texts: list[dict[str, str]] = []
    address = None
    for n, (seed, stray) in enumerate(((3, False), (11, True))):
        live, pages = night_pages(browser, tmp_path / str(n), seed, stray, address)
        address = live.web.address
        try:
            for page in pages.values():
                expect(page.locator("#night")).to_be_visible()
                expect(page.locator("#night-step")).to_have_text("night")
                expect(page.locator("header")).to_be_hidden()
                expect(page.locator("main")).to_be_hidden()
            for button in pages["red"].locator("#controls button").all():
                expect(button).to_be_disabled()  # and hidden: nothing to press by night
            # the screen stays put: a beat of the night changes nothing on it
            shots.append({name: page.screenshot() for name, page in pages.items()})
            texts.append({name: page.locator("body").inner_text() for name, page in pages.items()})
            colour = pages["red"].evaluate("getComputedStyle(document.body).backgroundColor")
            assert colour == "rgb(0, 0, 0)"  # near-black
        finally:
            for page in pages.values():  # their feeds would hold the browser's connections to the next deal's port
                page.context.close()
            live.close()
    assert shots[0] == shots[1]  # the same pixels for either deal
    assert shots[0]["public"] == shots[0]["red"] == shots[0]["stranger"]  # paired or not, public or private
    assert texts[0] == texts[1] and set(texts[0].values()) == {"night"}


def test_a_paired_phone_shows_its_seat_and_its_turn_first(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    live = four_knights(tmp_path)
    try:
        tv = opened(browser, live.url + "/", TV)
        phone = opened(browser, live.url + "/", PHONE)
        expect(phone.locator("main > section:visible").first).to_have_id("pair")  # unpaired: pairing on top
        blue = pair_phone(browser, live, tv, "blue")
        red = pair_phone(browser, live, tv, "red")
        live.press("next")
        # paired: the seat's colour and its name on top, the pairing at the end
        expect(blue.locator("main > section:visible").first).to_have_id("me")
        expect(blue.locator("#me-head")).to_have_text("Your seat: Blue")
        swatch = blue.evaluate("getComputedStyle(document.getElementById('me-swatch')).backgroundColor")
        assert swatch == "rgb(74, 144, 226)"
        # the quest waits for red: red's page says "your turn" and what red may do; blue's does not
        expect(red.locator("#me-turn")).to_have_text("Your turn.")
        expect(red.locator("#me-may")).to_have_text("You may press Next or Back.")
        expect(blue.locator("#me-turn")).to_be_hidden()
        expect(blue.locator("#me-may")).to_have_text("Nothing to do on this page now.")
        # a confirmation fades away instead of piling up
        red.click("#controls button[data-press=next]")
        expect(red.locator("#status")).to_have_text("✓ Next")
        expect(red.locator("#status")).to_have_text("", timeout=7000)
        expect(blue.locator("#me-turn")).to_be_hidden()
        expect(red.locator("#me-turn")).to_have_text("Your turn.")  # the questions: red leads them too
    finally:
        live.close()


def test_next_and_back_only_where_the_table_waits_for_this_seat(browser: Any,  # noqa: F811
                                                                      tmp_path: Path) -> None:
    expect = sync_api.expect
    live = four_knights(tmp_path)
    try:
        tv = opened(browser, live.url + "/", TV)
        blue = pair_phone(browser, live, tv, "blue")
        red = pair_phone(browser, live, tv, "red")
        live.press("next")
        expect(red.locator("#controls button[data-press=next]")).to_be_enabled()
        expect(blue.locator("#controls button[data-press=next]")).to_be_disabled()
        expect(blue.locator("#controls button[data-press=back]")).to_be_disabled()
        expect(blue.locator("#controls button[data-press=repeat]")).to_be_enabled()  # anyone's
        # the table refuses blue's next even if a page sends it anyway, aloud and in words
        answer = blue.evaluate("post('/api/press', {button: 'next'})")
        assert answer["text"] == "Blue, the table is not waiting for you now." and not answer["ok"]
        assert live.loop.table.engine is not None and live.loop.table.engine.state.step == "quest"
    finally:
        live.close()


def test_a_next_that_ends_the_trading_for_everyone_is_confirmed_first(browser: Any,  # noqa: F811
                                                                            tmp_path: Path) -> None:
    expect = sync_api.expect
    sim, s = simulation(tmp_path, DT6)
    cfg = config.load([ROOT / "config" / "companion.yaml"], s.overrides or None)
    web = start_web(sim.app, cfg, "127.0.0.1", 0)
    try:
        play_until(sim, s, lambda sim: (sim.loop.read_side.public().get("play") or {}).get("step") == "trade")
        context = browser.new_context(viewport=PHONE)
        context.add_cookies([{"name": COOKIE, "value": web.pairings.pair("red"), "url": web.address}])
        sim.loop.pages.refresh()  # red's page is watched now: rendered (the loop's thread is this one)
        red = context.new_page()
        presses: list[Any] = []
        red.on("request", lambda r: presses.append(r.post_data_json) if r.url.endswith("/api/press") else None)
        red.goto(web.address)
        expect(red.locator("#me")).to_be_visible()
        red.click("#controls button[data-press=next]")
        expect(red.locator("#press-confirm")).to_have_text(
            re.compile(r"^End the trading for everyone and open the VP auction\?"))
        red.click("#press-confirm button.no")
        expect(red.locator("#press-confirm")).to_be_hidden()
        red.wait_for_timeout(200)
        assert presses == []  # nothing sent
        red.click("#controls button[data-press=next]")
        red.click("#press-confirm button.yes")
        for _ in range(200):  # the table's loop is this thread: let it take the press
            sim.loop.pump()
            if (sim.loop.read_side.public().get("play") or {}).get("step") == "vp_auction":
                break
            red.wait_for_timeout(25)
        assert presses == [{"button": "next"}]
        expect(red.locator("#status")).to_have_text("✓ Next")
        red.click("#controls button[data-press=next]")
        expect(red.locator("#press-confirm")).to_have_text(re.compile(r"^Close the VP auction for everyone\?"))
    finally:
        web.stop()
        sim.close()


def test_the_result_is_on_the_page_after_a_restart(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    sim, s = simulation(tmp_path, example_script("seven-knights.yaml"))
    for _, kind, value in s.steps:
        sim.step(kind, value)
    sim.close()
    again, _ = simulation(tmp_path, example_script("seven-knights.yaml"))  # the daemon restarted
    web = start_web(again.app, config.load([ROOT / "config" / "companion.yaml"], s.overrides or None), "127.0.0.1", 0)
    try:
        page = opened(browser, web.address, PHONE)
        expect(page.locator("#game")).to_have_text("Last game: Seven Knights Bewitched")
        expect(page.locator("#result tr").nth(1)).to_contain_text("Red ★")
        expect(page.locator("#chart polyline")).to_have_count(5)
    finally:
        web.stop()
        again.close()


def test_the_door_s_refusals_are_sentences_in_the_table_s_language(browser: Any,  # noqa: F811
                                                                         tmp_path: Path) -> None:
    live = LiveTable(tmp_path, web={"pair_window_s": 5})
    try:
        live.tap("game/seven-knights", "player/red", "player/blue", "player/green")
        tv = opened(browser, live.url + "/", TV)
        red = pair_phone(browser, live, tv, "red")
        live.tap("lang/ja")
        sync_api.expect(red.locator("html")).to_have_attribute("lang", "ja")
        too_big = red.evaluate("post('/api/submit', {field: 'x'.repeat(100000), value: 1}).then(refusal)")
        assert too_big == "大きすぎて卓が受け取れません。"
        for code, ja in (("wrong_host", "卓のアドレスから開かれたページではありません。QRコードから開き直してください。"),
                         ("csrf", "このページは古くなっています。再読み込みしてください。"),
                         ("too_many", "この端末からの試行が多すぎます。1分待ってください。"),
                         ("not_paired", "先にこの端末を席とペアリングしてください。")):
            assert red.evaluate(f"refusal({{ok: false, error: '{code}', reason: 'English'}})") == ja
        # a reason in English never reaches the page: an unknown code is the page's own word
        assert red.evaluate("refusal({ok: false, error: 'new_code', reason: 'English'})") == "卓が受け付けませんでした。"
        bad = red.evaluate("fetch('/api/press', {method: 'POST', headers: {'X-CSRF-Token': 'stale'},"
                           " body: '{}'}).then((r) => r.json()).then(refusal)")
        assert bad == "このページは古くなっています。再読み込みしてください。"
    finally:
        live.close()
