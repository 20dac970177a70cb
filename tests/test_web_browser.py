"""The pages in a real browser (Playwright driving Debian's chromium): two
phones pair two seats by card taps, play a sealed-bid game from their pages,
the scoreboard follows live, each private page shows only its own secrets,
controls work and refusals show.  Screenshots of the scoreboard (phone and
TV, en and ja) go to the artefacts directory — ``$COMPANION_ARTIFACTS/web/``,
by default ``artifacts/web/`` (gitignored), so a test run never dirties the
checkout; ``python tools/screenshots.py`` refreshes the README's docs/web/."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_audiences import Auction
from test_web_privacy import Walk

from companion.app.live_table import LiveTable
from companion.app.simulate import load_script
from conftest import example_script

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parent.parent
SHOTS = Path(os.environ.get("COMPANION_ARTIFACTS") or ROOT / "artifacts") / "web"
PHONE = {"width": 360, "height": 740}
TV = {"width": 1920, "height": 1080}

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not shutil.which(CHROMIUM), reason="Debian's chromium is not installed")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def test_two_phones_pair_play_and_the_scoreboard_follows(browser: Any, tmp_path: Path) -> None:
    expect = sync_api.expect
    live = LiveTable(tmp_path, games={"auction": Auction}, web={"pair_window_s": 5})
    try:
        live.tap("game/auction", "player/red", "player/blue")
        live.press("next")
        tv = browser.new_context(viewport=TV).new_page()
        tv.goto(live.url + "/")
        expect(tv.locator("#step")).to_contain_text("bidding")
        phones = {}
        for seat in ("red", "blue"):
            page = browser.new_context(viewport=PHONE).new_page()
            page.goto(live.url + "/")
            page.click(f"#seats button[data-seat={seat}]")
            expect(page.locator("#status")).to_contain_text("Tap your player card")
            live.await_pairing(seat)  # the page asked; the table has heard it
            tv.click(f'#components button[data-tap="player/{seat}"]')  # the virtual reader: the card's tap
            expect(page.locator("#me")).to_be_visible()
            expect(page.locator("#status")).to_contain_text("page")
            phones[seat] = page
        red, blue = phones["red"], phones["blue"]
        said = [e["text"] for e in live.events if e["event"] == "say"][-1]
        expect(tv.locator("#log li").first).to_have_text(said)  # the last line the room heard, atop the game log
        # a refusal shows its reason; nothing changes
        red.fill("#submits input[name=bid]", "9")
        red.click("#submits button")
        expect(red.locator("#status")).to_contain_text("bid")
        expect(red.locator("#status")).to_have_class("err")
        red.fill("#submits input[name=bid]", "4")
        red.click("#submits button")
        # taken: the table's own word for it, held with the secrets (a sealed bid); the status says it was sent
        expect(red.locator("#status")).to_have_text("✓ Sent: hold to see it.")
        expect(red.locator("#status")).to_have_class(re.compile("ok"))
        assert "Auc.Bid_taken" not in red.locator("body").inner_text()
        expect(tv.locator("header")).not_to_contain_text(said)  # the header is the present; the log, the past
        blue.fill("#submits input[name=bid]", "2")
        blue.click("#submits button")
        expect(tv.locator("#step")).to_contain_text("done")  # live, over SSE: nobody reloaded
        expect(red.locator("#me-view")).to_contain_text("bid: 4")
        expect(red.locator("#me-view")).to_contain_text("die:")  # the winner alone learns the die
        expect(blue.locator("#me-view")).to_contain_text("bid: 2")
        assert "bid: 4" not in blue.locator("body").inner_text()
        assert "die:" not in blue.locator("#me-view").inner_text()
        assert "bid: 4" not in tv.locator("body").inner_text()
        # controls: repeat is answered, next ends the game, and the history shows the play
        blue.click("#controls button[data-press=repeat]")
        expect(blue.locator("#status")).to_contain_text("✓")
        red.click("#controls button[data-press=next]")
        expect(tv.locator("#history li.evening")).to_have_count(1)  # tonight, with its play
        expect(tv.locator("#history li.evening li")).to_have_count(1)
        expect(tv.locator("#history li.evening h3 a")).to_have_attribute("href", "/api/export?evening=1")
        expect(tv.locator("#history li.evening li a")).to_have_attribute("href", re.compile("bgstatsapp"))
        # a page that is not paired has no controls
        stranger = browser.new_context(viewport=PHONE).new_page()
        stranger.goto(live.url + "/")
        expect(stranger.locator("#controls")).to_be_hidden()
    finally:
        live.close()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_scoreboard_screenshots_phone_and_tv(browser: Any, tmp_path: Path, lang: str) -> None:
    expect = sync_api.expect
    s = load_script(example_script("seven-knights.yaml"))
    walk = Walk(tmp_path, {**s.overrides, "language": lang}, s.draws, virtual=False)  # a real table's page
    try:
        for _, kind, value in s.steps[:-1]:  # the last round scored, before the game's end
            walk.step(kind, value)
        SHOTS.mkdir(parents=True, exist_ok=True)
        for name, viewport in (("phone", PHONE), ("tv", TV)):
            page = browser.new_context(viewport=viewport, locale="ja-JP" if lang == "ja" else "en-GB").new_page()
            page.goto(walk.url + "/")
            expect(page.locator("#chart polyline").first).to_be_visible()
            expect(page.locator("html")).to_have_attribute("lang", lang)
            page.screenshot(path=str(SHOTS / f"scoreboard-{name}-{lang}.png"), full_page=name == "phone")
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]  # no sideways scroll
    finally:
        walk.close()


def test_the_virtual_table_has_the_panels_buttons_back_held_and_the_readers_cable(browser: Any,
                                                                                  tmp_path: Path) -> None:
    """``run --simulate --web``: a whole table from one page — the components,
    next / back (pressed or held) / repeat, unplugging and plugging the reader."""
    expect = sync_api.expect
    live = LiveTable(tmp_path)
    try:
        page = browser.new_context(viewport=TV).new_page()
        page.goto(live.url + "/")
        for identity in ("game/seven-knights", "player/red", "player/blue", "player/green"):
            page.click(f'#components button[data-tap="{identity}"]')
        expect(page.locator("#seats button")).to_have_count(3)
        page.click("#panel button[data-panel=next]")  # the panel's next: the game starts
        expect(page.locator("#game")).to_have_text("Seven Knights Bewitched")
        expect(page.locator("#step")).to_contain_text("quest")
        expect(page.locator("#turn")).to_have_text("Whose turn: Red")  # the start player leads the quest
        expect(page.locator("#scores tr.turn")).to_have_text(re.compile("Red"))  # and is marked on the board
        page.click("#panel button[data-panel=repeat]")
        expect(page.locator("#log li")).not_to_have_count(0)
        # back held past the panel's hold time: the table asks to confirm leaving the game
        back = page.locator("#panel button[data-panel=back]")
        back.hover()
        page.mouse.down()
        page.wait_for_timeout(int(live.app.panel.hold_back_s * 1000) + 300)
        page.mouse.up()
        expect(page.locator("#log li").first).to_contain_text("abandon", ignore_case=True, timeout=10_000)
        assert any(e["event"] == "accepted" and e.get("input") == "hold-back" for e in live.events)
        page.click("#panel button[data-panel=back]")  # a plain press: "no", the game goes on
        expect(page.locator("#step")).to_contain_text("quest")
        assert not any(e["event"] == "game_abandoned" for e in live.events)
        # the reader's cable: unplugged, the ready LED goes out and a tap goes nowhere
        page.click("#cable")
        expect(page.locator(".led.ready")).not_to_have_class(re.compile(r"\bon\b"))
        expect(page.locator("#cable")).to_have_text("Plug the reader in")
        page.click('#components button[data-tap="skb/knight/1"]')
        expect(page.locator("#status")).to_have_text("the reader is unplugged")
        page.click("#cable")
        expect(page.locator(".led.ready")).to_have_class(re.compile(r"\bon\b"))
        assert [e["state"] for e in live.events if e["event"] == "reader"][-2:] == ["disconnected", "connected"]
    finally:
        live.close()


def test_a_phone_whose_seat_is_taken_over_or_whose_evening_ends_clears_its_private_text(
        browser: Any, tmp_path: Path) -> None:
    """A seat taken over by another phone is not silent on the old one,
    and a new evening ends every pairing: the old page drops what only the seat
    may see and says it is no longer the seat's page."""
    from companion.core.events import Housekeeping

    expect = sync_api.expect
    live = LiveTable(tmp_path, games={"auction": Auction}, web={"pair_window_s": 5})
    try:
        live.tap("game/auction", "player/red", "player/blue")  # seated: red's card again pairs

        def paired_phone() -> Any:
            page = browser.new_context(viewport=PHONE).new_page()
            page.goto(live.url + "/")
            page.click("#seats button[data-seat=red]")
            expect(page.locator("#status")).to_contain_text("Tap your player card")
            live.await_pairing('red')  # the page asked; the table has heard it
            live.tap("player/red")
            expect(page.locator("#me")).to_be_visible()
            return page

        old = paired_phone()
        new = paired_phone()
        expect(old.locator("#me")).to_be_hidden()
        expect(old.locator("#status")).to_contain_text("no longer a seat's page")
        expect(new.locator("#me")).to_be_visible()
        live.press("back", "back", "back")  # between games, where an evening may begin
        live.loop.submit(lambda: live.loop._input(Housekeeping("new-evening")))
        live.settle()
        expect(new.locator("#me")).to_be_hidden()
        expect(new.locator("#status")).to_contain_text("no longer a seat's page")
    finally:
        live.close()
