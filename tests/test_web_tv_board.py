"""The TV board (``/tv``) in a real browser (Playwright, Debian's chromium):
whole games played on the simulated table with the board open beside it — the
step and the totals at 1280×720 and 1920×1080, the results view at the end,
Demagogos' cave filling box by box, the vote tally as it fills, the QR code and
the seats still to pair while phones are missing, the discussion's countdown
moving, One Night's night screen the same for two deals — and, after every
step, nothing on the board that only one player may know (the privacy walk's
private facts, ``test_web_privacy.Walk``) and the whole board on the screen,
which cannot scroll (``fits``)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_web import pair
from test_web_browser import SHOTS, TV, browser, pytestmark, sync_api  # noqa: F401  (the fixture, the chromium skip)
from test_web_privacy import Walk, secrets_kept

from companion.app.live_table import LiveTable
from companion.app.simulate import load_script
from conftest import example_script
from web.pairing import RateLimit

ROOT = Path(__file__).resolve().parent.parent
HD = {"width": 1280, "height": 720}
# One Night to its vote, then the table counts the pointing (rules, Day 4): a tally to watch fill
ONW_COUNT = [("tap", "game/one-night"), *(("tap", f"player/{p}") for p in ("red", "blue", "green", "yellow")),
             ("press", "next"), ("press", "next"), ("wait", 140.0), ("press", "next"), ("wait", 5.0),
             *(("tap", f"player/{p}") for pair_ in (("red", "blue"), ("blue", "green"), ("green", "blue"),
                                                    ("yellow", "blue")) for p in pair_)]


ERRORS: list[str] = []  # what any board logged as an error in this test (a CSP refusal, a script's exception)
BOARDS: list[Any] = []  # the boards open: closed before their table (which they would then miss, loudly)


@pytest.fixture(autouse=True)
def no_errors_on_the_board() -> Iterator[None]:
    ERRORS.clear()
    yield
    assert ERRORS == []


def close_boards() -> None:
    while BOARDS:
        BOARDS.pop().context.close()


AXE: list[Any] = []


def accessible(page: Any) -> None:
    """axe-core in the page: no serious or critical violation (the bar for every page)."""
    if not AXE:
        from axe_playwright_python.sync_playwright import Axe

        AXE.append(Axe())
    found = [(v["id"], [n["html"][:120] for n in v["nodes"][:3]]) for v in AXE[0].run(page).response["violations"]
             if v["impact"] in ("serious", "critical")]
    assert found == [], found


def shoot(page: Any, name: str) -> None:
    """A screenshot to the artefacts directory (test_web_browser's: never the checkout)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def open_board(browser: Any, url: str, viewport: dict[str, int] = TV) -> Any:  # noqa: F811
    """The board, its errors collected (its inline script and style run only by
    their CSP hashes: a refused one is an error)."""
    page = browser.new_context(viewport=viewport).new_page()
    BOARDS.append(page)
    # A board its test closed itself leaves the list: the list outlives the file (another file's
    # close_boards would close it again after this file's browser has stopped, and fail there).
    page.context.on("close", lambda _: BOARDS.remove(page) if page in BOARDS else None)
    page.on("pageerror", lambda e: ERRORS.append(str(e)))
    page.on("console", lambda m: ERRORS.append(m.text) if m.type == "error" else None)
    page.goto(url.rstrip("/") + "/tv")
    sync_api.expect(page.locator("h1")).not_to_have_text("")  # the script ran, from the page's own snapshot
    return page


def fits(page: Any) -> None:
    """A TV cannot scroll: the board is the screen — the document no taller or wider
    than the window, the last line said inside it, and nothing of the board's
    sections cut off to get there (by day: the night screen has no line)."""
    box = page.evaluate("""() => { const line = document.querySelector('#line').getBoundingClientRect();
        const main = document.querySelector('#day > main');
        return {height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth,
                inner: [innerWidth, innerHeight], line: [line.top, line.bottom],
                main: [main.scrollHeight, main.clientHeight]}; }""")
    width, height = box["inner"]
    assert box["height"] <= height and box["width"] <= width, box
    assert 0 <= box["line"][0] and box["line"][1] <= height, box
    assert box["main"][0] <= box["main"][1], box


def drawn(page: Any, version: int) -> None:
    """Wait (bounded) until the board has drawn the public snapshot ``version``."""
    page.wait_for_function("(v) => document.body.dataset.version === String(v)", arg=version, timeout=5000)


class Board:
    """A privacy walk (``test_web_privacy.Walk``: the table simulated, the pages
    served, every public response checked) with the TV board open beside it;
    after every step the board has drawn the table's snapshot and shows nothing
    only one player may know."""

    def __init__(self, browser: Any, tmp_path: Path, overrides: dict[str, Any],  # noqa: F811
                 draws: dict[str, Any] | None = None, viewport: dict[str, int] = TV) -> None:
        self.walk = Walk(tmp_path, overrides, draws)
        self.page = open_board(browser, self.walk.url, viewport)
        games = self.walk.client.get("/api/games").json()
        self.label = lambda lang, game, step: games[lang][game]["steps"].get(step, step)
        drawn(self.page, self.walk.pushed)

    def step(self, kind: str, value: Any) -> dict[str, Any]:
        self.walk.step(kind, value)
        drawn(self.page, self.walk.pushed)
        state: dict[str, Any] = self.page.evaluate("() => state")  # what the board was given …
        secrets_kept(self.walk.sim.loop.table.engine, state)
        assert self.walk.secrets.leaks(state) == [], state  # no seat's page, value by value, in what it was given
        text = self.page.locator("body").inner_text()  # … and what it shows
        for secret in self.walk.private_texts():
            assert secret not in text, secret
        if self.page.locator("#day").is_visible():
            fits(self.page)
        return state

    def close(self) -> None:
        close_boards()
        self.walk.close()


def scores(page: Any) -> dict[str, str]:
    """Each player's total on the board (after the rounds' columns, where the game keeps rounds)."""
    rows = page.locator("#scores tr:has(td)").all()
    return {r.locator("td").first.inner_text().strip().lstrip("▸ ").strip(): r.locator("td.total").inner_text().strip()
            for r in rows}


@pytest.mark.parametrize("viewport", [HD, TV], ids=["1280x720", "1920x1080"])
def test_tv_board_shows_the_step_and_totals_then_the_result(browser: Any, tmp_path: Path,  # noqa: F811
                                                             viewport: dict[str, int]) -> None:
    expect = sync_api.expect
    s = load_script(example_script("seven-knights.yaml"))
    board = Board(browser, tmp_path, s.overrides, s.draws, viewport)
    page = board.page
    try:
        steps_seen = set()
        for _, kind, value in s.steps:
            state = board.step(kind, value)
            play = state.get("play")
            if play and play.get("step"):
                steps_seen.add(play["step"])
                expect(page.locator("#step")).to_have_text(board.label("en", "seven-knights", play["step"]))
                assert scores(page) == {n.capitalize(): str(v) for n, v in play["totals"].items()}
        assert len(steps_seen) >= 4
        # readable from 3 m: big type, two columns side by side, nothing cut off at the side
        size = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('#step')).fontSize)")
        assert size >= (36 if viewport == HD else 48), size
        assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
        # the game over: the result, winners first, as the phone's result view has it
        expect(page.locator("#result-section")).to_be_visible()
        expect(page.locator("#game")).to_have_text("Last game: Seven Knights Bewitched")
        # the step line and the table's sentence ("Between games: tap a game card.") say the phase once
        assert page.locator("#day").inner_text().count("Between games") == 1
        rows = [r.split("\t") for r in page.locator("#result tr").all_inner_texts()[1:]]
        result = board.walk.read_side.public()["result"]
        assert [r[1].strip() for r in rows] == [p["name"].capitalize() + (" ★" if p["winner"] else "")
                                                 for p in result["players"]]
        assert page.locator("#result td.total").all_inner_texts() == [str(p["total"]) for p in result["players"]]
        assert rows[0][1].strip().endswith("★")
        left, right = page.locator("main > .col").all()
        lb, rb = left.bounding_box(), right.bounding_box()
        assert lb["x"] + lb["width"] <= rb["x"] and abs(lb["y"] - rb["y"]) < 2  # two columns
        shoot(page, f"tv-result-{viewport['width']}")
        accessible(page)
    finally:
        board.close()


def test_tv_board_names_a_player_by_the_display_name_their_page_chose(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """A display name is public, chosen to be shown: the board puts it
    beside the seat's colour wherever it names that player."""
    from companion.core.events import Housekeeping
    from companion.core.table import NAMED

    s = load_script(example_script("seven-knights.yaml"))
    board = Board(browser, tmp_path, s.overrides, s.draws)
    try:
        steps = iter(s.steps)
        state: dict[str, Any] = {}
        while not (state.get("play") or {}).get("totals"):
            _, kind, value = next(steps)
            state = board.step(kind, value)
        board.step("name", Housekeeping(NAMED, {"seat": "red", "name": "Aki"}))
        assert set(scores(board.page)) == {"Red · Aki", "Blue", "Green", "Yellow", "Purple"}
    finally:
        board.close()


def test_tv_board_cave_grid_fills_as_boxes_open(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    s = load_script(example_script("demagogos/6p.yaml"))
    board = Board(browser, tmp_path, s.overrides, s.draws)
    page = board.page
    try:
        grown: list[int] = []
        for _, kind, value in s.steps:
            state = board.step(kind, value)
            play = state.get("play") or {}
            if not play.get("boxes"):
                continue
            cells = page.locator("#cave li")
            assert cells.count() == play["boxes"]
            contents = cells.evaluate_all("(cs) => cs.map((c) => c.dataset.content)")
            opened = {o["box"]: ("voided" if o.get("voided") else o["content"]) for o in play["opened"]}
            assert contents == [opened.get(b, "closed") for b in range(1, play["boxes"] + 1)]
            for o in play["opened"]:  # by whom, what: the game's own line for the box, on the box
                cell = page.locator(f'#cave li[data-box="{o["box"]}"]')
                # the seat by its name ("Yellow"), and the box's number
                assert o["player"].title() in cell.inner_text() and str(o["box"]) in cell.inner_text()
            if play["step"] == "cave" and (not grown or grown[-1] != len(opened)):
                grown.append(len(opened))
                if len(grown) == 3:
                    accessible(page)
                    shoot(page, "tv-cave-en")
        assert len(grown) >= 4 and any(b > a for a, b in zip(grown, grown[1:], strict=False))
        assert any(k == "dt_box" for k in (e["event"] for e in board.walk.log))
        sync_api.expect(page.locator("#result-section")).to_be_visible()  # the game over: its result fits too
        fits(page)
    finally:
        board.close()


@pytest.mark.parametrize("game", ["one-night", "madness-hour"])
def test_tv_board_vote_tally_fills_as_votes_come_in(browser: Any, tmp_path: Path, game: str) -> None:  # noqa: F811
    expect = sync_api.expect
    if game == "one-night":
        steps, overrides, draws = ONW_COUNT, {"seed": 3, "games": {"one-night": {"discussion_min": 2}}}, None
    else:
        s = load_script(example_script("madness-hour.yaml"))
        steps, overrides, draws = [(k, v) for _, k, v in s.steps], s.overrides, s.draws
    board = Board(browser, tmp_path, overrides, draws)
    page = board.page
    try:
        seen = []
        for kind, value in steps:
            state = board.step(kind, value)
            play = state.get("play") or {}
            if game == "one-night" and "tally" in play:
                got = dict(page.locator("#tally li").evaluate_all(
                    "(rows) => rows.map((r) => [r.querySelector('.name').textContent, r.querySelector('.n').textContent])"))
                assert got == {n.capitalize(): str(v) for n, v in play["tally"]["for"].items()}
                expect(page.locator("#tally-count")).to_have_text(
                    f"{play['tally']['done']} of {play['tally']['of']} have voted")
                seen.append(play["tally"]["done"])
                if len(seen) == 2:
                    accessible(page)
            if game == "madness-hour" and play.get("step") == "vote" and play["votes"]:
                keep = page.locator('#tally li[data-side="keep"]').inner_text()
                kill = page.locator('#tally li[data-side="kill"]').inner_text()
                for who, side in play["votes"].items():
                    assert who.capitalize() in (keep if side == "keep" else kill)
                done = len(play["votes"])
                living = len(board.walk.sim.loop.table.engine.living)  # as the vote's lines count them
                expect(page.locator("#tally-count")).to_have_text(f"{done} of {living} have voted")
                seen.append(done)
                if len(seen) == 2:
                    accessible(page)
        assert seen == sorted(seen) and len(set(seen)) >= 2, seen  # it filled, vote by vote
    finally:
        board.close()


def test_tv_board_night_screen_is_the_same_for_two_deals(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    s = load_script(example_script("one-night.yaml"))
    night = s.steps[:s.steps.index(next(st for st in s.steps if st[1] == "wait")) + 2]  # into the night
    shots: dict[int, list[tuple[str, bytes]]] = {}
    black: dict[int, str] = {}
    for seed in (3, 11):  # another seed: another night's timing (the cards dealt are the table's)
        board = Board(browser, tmp_path / str(seed), {**s.overrides, "seed": seed}, s.draws)
        try:
            shots[seed] = []
            for _, kind, value in night:
                board.step(kind, value)
                if board.walk.sim.loop.table.eyes_closed:
                    sync_api.expect(board.page.locator("#night")).to_be_visible()
                    sync_api.expect(board.page.locator("#day")).to_be_hidden()
                    shots[seed].append((board.page.locator("body").inner_text(), board.page.screenshot()))
                    black[seed] = board.page.evaluate("() => getComputedStyle(document.body).backgroundColor")
                    if len(shots[seed]) == 1:
                        accessible(board.page)
                        shoot(board.page, "tv-night")
        finally:
            board.close()
    assert len(shots[3]) >= 2 and shots[3] == shots[11]
    assert all(text.strip() == "night" for text, _ in shots[3])  # the step's name alone: no player, line or clock
    assert black[3] == black[11] == "rgb(0, 0, 0)"  # near-black


def test_tv_board_qr_and_the_seats_to_pair_until_every_phone_is_paired(browser: Any,  # noqa: F811
                                                                       tmp_path: Path) -> None:
    expect = sync_api.expect
    live = LiveTable(tmp_path, web={"pair_window_s": 5})
    live.web.pair_limit = RateLimit(20, 60.0)  # six phones, one loopback address
    try:
        seats = ("red", "blue", "green", "yellow", "purple", "orange")
        live.tap("game/demagogos", *(f"player/{s}" for s in seats))
        live.press("next")  # Demagogos waits for every phone
        page = open_board(browser, live.url)
        expect(page.locator("#pair-section")).to_be_visible()
        expect(page.locator("#qr")).to_be_visible()
        assert page.evaluate("() => document.querySelector('#qr').naturalWidth") > 0  # the code of this address
        assert page.locator("#qr").bounding_box()["width"] >= 300  # large: scanned from across the table
        expect(page.locator("#address")).to_have_text(live.web.address)
        accessible(page)
        shoot(page, "tv-pairing-en")
        for n, seat in enumerate(seats):
            expect(page.locator("#missing li")).to_have_text([s.capitalize() for s in seats[n:]])
            with httpx.Client(base_url=live.url) as client:
                assert pair(live, client, seat).status_code == 200
        expect(page.locator("#pair-section")).to_be_hidden()  # every phone paired: gone
        expect(page.locator("#step")).to_have_text("role auction (sealed)")
        live.tap("lang/ja")  # the table's language is the board's
        expect(page.locator("html")).to_have_attribute("lang", "ja")
        expect(page.locator("#step")).to_have_text("役職オークション（秘密）")
        expect(page.locator("#scores-title")).to_have_text("得点")
    finally:
        close_boards()
        live.close()


COUNTDOWN = re.compile(r"^\d+:[0-5]\d$")


def seconds(text: str) -> int:
    m, s = text.split(":")
    return int(m) * 60 + int(s)


def test_tv_board_countdown_counts_down_to_the_api_deadline(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """The board's side of the countdown: whatever wall-clock deadline the API's
    headline holds is counted down, big, and said politely at most each minute."""
    expect = sync_api.expect
    live = LiveTable(tmp_path)
    try:
        live.tap("game/madness-hour", "player/red", "player/blue", "player/green")
        live.press("next")
        public_state = live.web.public_state
        at = time.time() + 125

        def with_deadline(history: bool = True) -> dict[str, Any]:
            state = public_state(history)
            return {**state, "headline": {"step": "discussion", "waiting_for": [], "anyone": True, "count": None,
                                          "deadline": at, "night": False}}

        live.web.public_state = with_deadline  # type: ignore[method-assign]
        page = open_board(browser, live.url)
        expect(page.locator("#countdown")).to_have_text(COUNTDOWN)
        first = page.locator("#countdown").inner_text()
        assert 118 <= seconds(first) <= 125, first
        page.wait_for_timeout(2200)
        second = page.locator("#countdown").inner_text()
        assert 1 <= seconds(first) - seconds(second) <= 4, (first, second)
        expect(page.locator("#countdown-said")).to_have_text("2 minutes left")  # whole minutes, as the digits read
        assert page.locator("#countdown").get_attribute("aria-live") == "off"  # the digits stay quiet
        assert page.locator("#countdown-said").get_attribute("aria-live") == "polite"
        assert page.locator("#countdown").evaluate("(e) => parseFloat(getComputedStyle(e).fontSize)") >= 150
        accessible(page)
        # a TV whose clock is an hour slow counts to the same deadline: the table's clock comes with the page
        slow = browser.new_context(viewport=TV)
        slow.clock.install(time=time.time() - 3600)
        slow.clock.resume()
        late = slow.new_page()
        BOARDS.append(late)
        late.goto(live.url + "/tv")
        expect(late.locator("#countdown")).to_have_text(COUNTDOWN)
        assert abs(seconds(late.locator("#countdown").inner_text()) - (at - time.time())) <= 2
    finally:
        close_boards()
        live.close()


def test_tv_board_countdown_moving_in_a_discussion(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """The TV board's countdown moves: Madness Hour's climax discussion on a
    real clock, the deadline from the API's headline (docs/reference/pages.md)."""
    live = LiveTable(tmp_path)
    try:
        live.tap("game/madness-hour", "player/red", "player/blue", "player/green")
        live.press("next")
        live.tap("player/green")  # the Girl
        live.press("next", "next")  # she keeps her card; the first turn
        live.tap("mh/climax")
        state = httpx.get(live.url + "/api/table").json()
        if "headline" not in state:
            pytest.skip("needs the headline in /api/table (docs/reference/pages.md)")
        assert state["play"]["step"] == "discussion"
        deadline = state["headline"]["deadline"]
        assert isinstance(deadline, float) and 0 < deadline - time.time() <= 60, json.dumps(state["headline"])
        page = open_board(browser, live.url)
        sync_api.expect(page.locator("#countdown")).to_have_text(COUNTDOWN)
        first = page.locator("#countdown").inner_text()
        assert abs(seconds(first) - (deadline - time.time())) <= 2
        page.wait_for_timeout(2200)
        second = page.locator("#countdown").inner_text()
        assert 1 <= seconds(first) - seconds(second) <= 4, (first, second)
    finally:
        close_boards()
        live.close()


def test_tv_board_follows_the_headline_contract(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """The headline in /api/table as the board reads it: whom the table waits
    for by seat id, named; the table's own sentence (``headline_text``) over the
    board's; ``night`` the near-black screen whatever the game's view says."""
    expect = sync_api.expect
    live = LiveTable(tmp_path)
    try:
        live.tap("game/madness-hour", "player/red", "player/blue", "player/green")
        live.press("next")
        public_state = live.web.public_state
        headline: dict[str, Any] = {"step": "girl", "waiting_for": ["blue"], "anyone": False, "count": None,
                                    "deadline": None, "night": False}
        extra: dict[str, Any] = {"headline_text": ""}  # the table's own sentence: none yet, the board's own

        def with_headline(history: bool = True, **more: Any) -> dict[str, Any]:  # (``log``: the game log's)
            return {**public_state(history, **more), "headline": dict(headline), **extra}

        live.web.public_state = with_headline  # type: ignore[method-assign]
        page = open_board(browser, live.url)
        expect(page.locator("#turn")).to_have_text("Whose turn: Blue")
        expect(page.locator("#scores tr.turn")).to_have_text(re.compile("Blue"))  # the players: the seat waited for, marked
        extra["headline_text"] = "Blue, tap the Girl's card."
        live.tap("lang/ja")  # any public change: a new snapshot on the feed
        expect(page.locator("#turn")).to_have_text("Blue, tap the Girl's card.")
        headline["night"] = True
        live.tap("lang/en")
        expect(page.locator("#night")).to_be_visible()
        expect(page.locator("#day")).to_be_hidden()
        assert page.locator("body").inner_text().strip() == "who is the Girl?"  # the headline's step alone
    finally:
        close_boards()
        live.close()
