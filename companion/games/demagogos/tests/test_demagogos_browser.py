"""A whole game of Demagogos' Trap in a real browser: six phones
pair their seats by the virtual table's card taps (the game waits for the
last), then the six-player example (examples/demagogos/6p.yaml here: its draws
fixed, its result worked out by hand under ``expect:``) is played from the
pages — every bid, exchange, gift and VP bid on that player's own page, every
box on the virtual table, every ``next`` on a page's controls.  Throughout,
each page shows its own secrets and nobody else's, the public page none;
refusals show where they belong.  Screenshots of a round (the public page
and the sage's page, en and ja) go to artifacts/web/ (gitignored)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

# the browser fixture, and the skip without Playwright or chromium, as the pages' own browser tests have them
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401

from companion.app.live_table import LiveTable
from companion.app.simulate import load_script
from conftest import example_script
from web.pairing import RateLimit

ROOT = Path(__file__).resolve().parents[4]
SCRIPT = example_script("demagogos/6p.yaml")
SHOTS = ROOT / "artifacts" / "web"
PHONE = {"width": 360, "height": 780}
TV = {"width": 1280, "height": 900}
# Lines of a page that only their player may see (the spec's "Who may know what").
SECRET = ("dt.page.gems", "dt.page.role.", "dt.page.told.", "dt.page.bid.", "dt.page.gift.", "mh.page.")
CONFIRMED = ("gift", "exchange")  # the fields a page confirms before it sends them (they cannot be taken back)
BEFORE_ROUND_END = ("role_auction", "rolling", "turn_auction", "cave_draw", "cave", "bonus")



def wait_until(what: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "the table did not get there"
        time.sleep(0.01)


class Game:
    def __init__(self, live: LiveTable, tv: Any, phones: dict[str, Any]) -> None:
        self.live, self.tv, self.phones = live, tv, phones
        self.refused: list[tuple[str, str]] = []  # (where, text) of each refusal seen

    def handled(self) -> int:
        return sum(1 for e in self.live.events if e["event"] in ("accepted", "rejected"))

    def submit(self, seat: str, fieldname: str, value: Any) -> dict[str, Any]:
        page = self.phones[seat]
        send = page.locator(f'#submits button[data-field="{fieldname}"]')
        if isinstance(value, dict):
            page.select_option("#submits select[name=gift]", value["to"])
            page.fill("#submits input[name=gift-amount]", str(value["gems"]))
        else:
            page.fill(f"#submits input[name={fieldname}]", str(value))
        if fieldname in CONFIRMED:  # asked on the page first: sent on "yes"
            send.click()
            send = page.locator(f'#submits form[data-field="{fieldname}"] .confirm button.yes')
        with page.expect_response(lambda r: r.url.endswith("/api/submit")) as answer:
            send.click()
        verdict: dict[str, Any] = answer.value.json()
        if not verdict["ok"]:
            sync_api.expect(page.locator("#status")).to_have_class("err")
            sync_api.expect(page.locator("#status")).to_have_text(verdict["text"])
            self.refused.append((seat, verdict["text"]))
        return verdict

    def post(self, seat: str, fieldname: str, value: Any) -> None:
        """What the page's form would send, sent by hand from that page."""
        answer = self.phones[seat].evaluate(
            """async ([field, value]) => {
                 const csrf = document.querySelector('meta[name="csrf"]').content;
                 const r = await fetch("/api/submit", {method: "POST", credentials: "same-origin",
                   headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
                   body: JSON.stringify({field, value})});
                 return r.json(); }""", [fieldname, value])
        # A control hears back once, in its own answer (no longer also on the seat's feed, which
        # would draw a request the page never made): the spoken sentence, never said at the table.
        assert not answer["ok"]
        assert answer["text"] and answer["text"] not in self.said()
        self.refused.append((seat, answer["text"]))

    def tap(self, identity: str) -> None:
        before = self.handled()
        self.tv.click(f'#components button[data-tap="{identity}"]')  # the virtual reader
        wait_until(lambda: self.handled() > before)
        self.live.settle()
        last = [e for e in self.live.events if e["event"] in ("accepted", "rejected")][-1]
        if last["event"] == "rejected":
            # said aloud (a tap's refusal is the table's), and the page flashes the error and
            # shows the line: nothing public changed, but the room heard it
            sync_api.expect(self.tv.locator("body")).to_have_attribute("data-feedback", "error")
            sync_api.expect(self.tv.locator("#log li").first).to_have_text(self.said()[-1])
            self.refused.append(("table", self.said()[-1]))
            self.press("repeat")  # the instruction again: heard, and so shown, though nothing changed
            self.live.settle()
            sync_api.expect(self.tv.locator("#log li").first).to_have_text(self.said()[-1])

    def press(self, button: str) -> None:
        # a page may press next/back only where the table waits for its seat or for anyone
        head = self.live.loop.read_side.public()["headline"]
        seat = "red" if button == "repeat" or head["anyone"] or "red" in head["waiting_for"] else next(
            s for s in head["waiting_for"] if s in self.phones)
        page = self.phones[seat]
        with page.expect_response(lambda r: r.url.endswith("/api/press")) as answer:
            page.click(f"#controls button[data-press={button}]")
            if button == "next" and page.locator("#press-confirm").is_visible():  # it ends a step for everyone
                page.click("#press-confirm button.yes")
        assert answer.value.json()["ok"], answer.value.json()

    def said(self) -> list[str]:
        return [e["text"] for e in self.live.events if e["event"] == "say"]

    def private_lines(self) -> dict[str, set[str]]:
        """Each seat's secret lines as its page should show them now."""
        return {seat: {line["text"] for line in self.live.loop.read_side.private(seat).get("page", [])
                       if line["key"].startswith(SECRET)} for seat in self.phones}

    def check_privacy(self) -> None:
        """No page shows another seat's secret line (that is not its own too),
        nor a line told to another player alone; the public page shows none."""
        lines = self.private_lines()
        told: dict[str, set[str]] = {seat: set() for seat in self.phones}
        for e in self.live.events:
            if e["event"] == "tell":
                told[e["to"]].add(e["text"])
        for seat, page in self.phones.items():  # first each page catches up with the table (SSE)
            now = [line["text"] for line in self.live.loop.read_side.private(seat).get("page", [])]
            sync_api.expect(page.locator("#me-view p")).to_have_text(now)
        public = self.tv.locator("body").inner_text()
        for seat, page in self.phones.items():
            shown = page.locator("#me").inner_text()
            for other in self.phones:
                if other == seat:
                    continue
                for text in (lines[other] - lines[seat]) | (told[other] - told[seat]):
                    assert text not in shown, f"{seat}'s page shows {other}'s secret: {text!r}"
        for seat in self.phones:
            for text in lines[seat] | told[seat]:
                assert text not in public, f"the public page shows {seat}'s secret: {text!r}"
        engine = self.live.loop.table.engine
        if engine is not None and engine.state.step in BEFORE_ROUND_END and self.live.loop.table.lang == "en":
            # the roles are told at the round's end: none on the page but in the game log, which
            # keeps what was said aloud at the end of the rounds before (this round's roles: never)
            now = self.tv.evaluate("""() => { const log = document.getElementById('log'); log.hidden = true;
              const text = document.body.innerText; log.hidden = false; return text; }""")
            assert "sage" not in now and "demagogue" not in now
            said = {e["key"] for e in self.live.events if e["event"] == "say"}  # (in the language now)
            assert set(self.tv.locator("#log li").evaluate_all("(lis) => lis.map((li) => li.dataset.key)")) <= said

    def me(self, seat: str) -> str:
        return str(self.phones[seat].locator("#me-view").inner_text())


def pair_phone(chromium: Any, live: LiveTable, tv: Any, seat: str) -> Any:
    """A phone's page picks ``seat``; the card's tap on the virtual table proves it."""
    page = chromium.new_context(viewport=PHONE).new_page()
    page.goto(live.url + "/")
    page.click(f"#seats button[data-seat={seat}]")
    sync_api.expect(page.locator("#status")).to_contain_text("Tap your player card")
    live.await_pairing(seat)  # the page asked; the table has heard it
    tv.click(f'#components button[data-tap="player/{seat}"]')
    sync_api.expect(page.locator("#me")).to_be_visible()
    return page


def shoot(game: Game, lang: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    sync_api.expect(game.phones["red"].locator("#me-view")).to_contain_text(
        "1、2" if lang == "ja" else "1 and 2")  # the sage's page, in the table's language
    for page in (game.tv, game.phones["red"]):
        page.evaluate("window.scrollTo(0, 0)")  # the taps and clicks scrolled them
    game.tv.screenshot(path=str(SHOTS / f"dt-public-{lang}.png"))
    game.phones["red"].screenshot(path=str(SHOTS / f"dt-private-{lang}.png"))  # the phone's first screen


def test_a_whole_six_player_game_from_six_paired_pages(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    script = load_script(SCRIPT)
    worked = yaml.safe_load(SCRIPT.read_text(encoding="utf-8"))["expect"]
    steps = [(kind, value) for _, kind, value in script.steps]
    live = LiveTable(tmp_path, draws=script.draws, web={"pair_window_s": 5})
    try:
        # six phones, one loopback address: the per-address limit on pairing attempts
        # (5 a minute) is for a LAN, where each phone has its own
        live.web.pair_limit = RateLimit(len(steps), 60.0)
        seating = steps.index(("press", "next"))
        live.tap(*(value for _, value in steps[:seating]))  # the game card, six player cards
        live.press("next")
        seats = [value.removeprefix("player/") for _, value in steps[1:seating]]
        assert live.loop.table.state.phase == "pairing"
        tv = browser.new_context(viewport=TV).new_page()
        tv.goto(live.url + "/")
        expect(tv.locator("#step")).to_have_text("Pairing the phones")
        phones: dict[str, Any] = {}
        for seat in seats:
            phones[seat] = pair_phone(browser, live, tv, seat)
            if seat != seats[-1]:
                assert live.loop.table.engine is None  # not before the last phone
                expect(tv.locator("#log li").first).to_contain_text("Still to pair")
                expect(tv.locator(f"#seats button[data-seat={seat}]")).to_have_class("paired")
        expect(tv.locator("#step")).to_contain_text("role auction")  # the last phone started it
        game = Game(live, tv, phones)
        expect(phones["red"].locator("#me-view")).to_contain_text("Gems: 5")
        expect(phones["red"].locator("#submits button[data-field=bid]")).to_be_visible()
        shots = "en"  # the screenshots still to take
        for kind, value in steps[seating + 1:]:
            if kind == "submit":
                seat, fieldname, v = value.player, value.field, value.value
                if fieldname not in live.loop.read_side.private(seat)["legal"]["submits"]:
                    # the rules give this player no such form now (a role holder in the turn
                    # auction, a player who has exited): the page offers none, and the
                    # server refuses it all the same, with the reason for that page alone
                    form = phones[seat].locator(f'#submits button[data-field="{fieldname}"]')
                    expect(form).to_have_count(0)
                    game.post(seat, fieldname, v)
                    continue
                game.submit(seat, fieldname, v)
            elif kind == "tap":
                game.tap(value)
            else:
                assert kind == "press"
                game.press(value)
            live.settle()
            # the public page shows the game's board (its public lines) as the table has it now
            expect(tv.locator("#board li")).to_have_text([line["text"] for line in live.loop.read_side.public()["board"]])
            game.check_privacy()
            engine = live.loop.table.engine
            at = (engine.state.round, engine.state.step, len(engine.state.opened)) if engine else None
            if at == (1, "cave", 0) and shots == "en":
                # a round as the pages show it: the sage knows 1 and 2, nobody else does
                expect(phones["red"].locator("#me-view")).to_contain_text("Your role this round: the sage")
                expect(phones["red"].locator("#me-view")).to_contain_text("Treasures are in boxes 1 and 2")
                expect(phones["green"].locator("#me-view")).to_contain_text("The disaster is in box 4")
                expect(phones["yellow"].locator("#me-view")).to_contain_text("This round you are an explorer")
                assert "sage" not in tv.locator("body").inner_text()
                shoot(game, "en")
                game.tap("lang/ja")  # the language card, mid-game: every page follows
                shots = "ja"
            elif at == (1, "cave", 1) and shots == "ja":  # the first box opened, said in Japanese
                expect(tv.locator("html")).to_have_attribute("lang", "ja")
                expect(tv.locator("#log li").first).to_contain_text("続けるなら")
                expect(phones["red"].locator("#me-view")).to_contain_text("このラウンドの役職：賢者")
                shoot(game, "ja")
                game.tap("lang/en")
                expect(phones["red"].locator("#me-view")).to_contain_text("Gems: 2")
                shots = "done"
        assert shots == "done"
        # the refusals, each where it belongs: on the player's page, or said at the table
        assert game.refused == [
            ("purple", "A bid is from 0 to 5 gems."),
            ("red", "Role holders do not bid in the turn auction."),
            ("table", "Box 2 is already open."),
            ("yellow", "You have won and left the game."),
            ("table", "Box 7 is not in play: this round uses boxes 1 to 6."),
        ]
        # the result worked out by hand
        (over,) = [e for e in live.events if e["event"] == "game_over"]
        assert over["winners"] == worked["winners"] and over["totals"] == worked["totals"]
        assert [e["points"] for e in live.events if e["event"] == "round_scored"] == worked["points"]
        assert [[e["box"], e["content"], e["player"], e["gems"]] for e in live.events
                if e["event"] == "dt_box"] == worked["boxes"]
        assert [[e["player"], e["place"]] for e in live.events if e["event"] == "dt_exit"] == worked["exits"]
        (play,) = live.web.history()  # the play is kept, and the public page lists it
        assert {p["name"] for p in play["players"] if p["winner"]} == set(worked["winners"])  # seat order there
        expect(tv.locator("#history li.evening")).to_have_count(1)
    finally:
        live.close()
