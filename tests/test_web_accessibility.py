"""The pages' accessibility in a real browser: axe-core (bundled by
``axe-playwright-python``) finds no serious or critical violation on any page —
a real table's public page, the simulation's virtual table, a phone paired with
a seat, a phone not paired — in English and in Japanese, in every phase of every
game: each example script (companion/games/*/examples/) is played on a table serving its pages,
and at each phase the table has not shown before, every page catches up with it
and is audited.  Then what axe cannot see: controls at 3:1 against the page,
the virtual table after the page's own content in keyboard order, ``hold``
from a keyboard, every button named by what it sends, the chart named and
summarised in text, whose turn marked by more than colour.

A new page is one line in ``PAGES``; a new game, one line in ``GAMES``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_web import token
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)

from companion.app import config
from companion.app.simulate import Simulation, load_script
from companion.app.web_app import start_web
from companion.core.table import PAGES_ON
from conftest import example_script
from web.live import WatchedReadSide
from web.pairing import RateLimit

ROOT = Path(__file__).resolve().parent.parent
PHONE = {"width": 360, "height": 740}
TV = {"width": 1280, "height": 900}
SERIOUS = ("serious", "critical")
ADDRESS = "http://companion.local:8080/"  # what a Pi's pages show (longer than a test's loopback port)
ME = "red"  # the seat the paired phone takes (every example seats red)


@dataclass(frozen=True)
class Page:
    name: str
    path: str
    viewport: dict[str, int]
    seat: str | None = None  # a phone paired with this seat (by the card's tap, in the gathering)
    virtual: bool = False  # the simulation's virtual table; otherwise a real table's (/api/virtual: 404)


PAGES = (
    Page("public", "/", TV),
    Page("virtual", "/", TV, virtual=True),
    Page("phone", "/", PHONE, seat=ME),
    Page("unpaired", "/", PHONE),
    Page("tv", "/tv", {"width": 1920, "height": 1080}),
)
GAMES = {  # each game's example, played to its end: every phase it passes is audited
    "seven-knights": example_script("seven-knights.yaml"),
    "one-night": example_script("one-night.yaml"),
    "madness-hour": example_script("madness-hour.yaml"),
    "demagogos": example_script("demagogos/6p.yaml"),
}

# Has the page drawn the table as the read side has it now (its ``state``, and a paired
# page's ``me``)?  Keys sorted at every depth: the same JSON, whatever order it came in.
# A page without the scoreboard's globals (another page's script) is taken as drawn.
CAUGHT_UP = """([want, mine]) => {
  if (typeof state === "undefined") return true;
  const keys = (o, acc) => { if (o && typeof o === "object")
    for (const [k, v] of Object.entries(o)) { acc.add(k); keys(v, acc); } return acc; };
  const canon = (v) => JSON.stringify(v === undefined ? null : v, [...keys(v, new Set())].sort());
  for (const k of Object.keys(want)) if (canon(state[k]) !== canon(want[k])) return false;
  if (mine !== null && (typeof me === "undefined" || !me || canon(me.page || []) !== canon(mine))) return false;
  return true;
}"""


# What axe does not judge, judged on the page as drawn; each finding as axe gives its own
# ({id, impact, nodes: [{target}]}).  Contrast as WCAG computes it; a control's edge is its
# border where it has one, else its fill, against the first opaque background behind it.
OWN_RULES = """() => {
  const rgb = (c) => { const m = c.match(/[\\d.]+/g).map(Number); return m.length > 3 && m[3] === 0 ? null : m.slice(0, 3); };
  const lum = (c) => { const [r, g, b] = c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const behind = (e) => { for (let p = e.parentElement; p; p = p.parentElement) {
    const c = rgb(getComputedStyle(p).backgroundColor); if (c) return c; } return [255, 255, 255]; };
  const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  const path = (e) => e.id ? "#" + e.id : e.tagName.toLowerCase() + [...e.attributes].filter((a) =>
    a.name.startsWith("data-") || a.name === "name").map((a) => `[${a.name}="${a.value}"]`).join("");
  const out = {};
  const add = (id, e, why) => { (out[id] = out[id] || []).push({ target: [path(e)], why }); };
  const controls = [...document.querySelectorAll("button, input, select, textarea")].filter(shown);
  for (const e of controls) {
    const s = getComputedStyle(e);
    const border = parseFloat(s.borderTopWidth) >= 1 && s.borderTopStyle !== "none" ? rgb(s.borderTopColor) : null;
    const edge = border || rgb(s.backgroundColor);
    const r = edge ? ratio(edge, behind(e)) : 1;
    if (r < 3) add("control-contrast", e, r.toFixed(2) + ":1");
  }
  const names = new Map();  // a button's name: what it sends, told apart from every other
  for (const b of controls.filter((e) => e.tagName === "BUTTON")) {
    const name = (b.getAttribute("aria-label") || b.textContent).trim();
    if (names.has(name)) add("button-name-unique", b, name); else names.set(name, b);
  }
  for (const svg of [...document.querySelectorAll("#chart svg")].filter(shown)) {
    const id = svg.getAttribute("aria-describedby"), summary = id && document.getElementById(id);
    if (!summary || !summary.textContent.trim()) add("chart-summary", svg, "no summary in text");
  }
  for (const row of document.querySelectorAll("tr.turn")) {  // the colour and the marker, and in words
    if (row.getAttribute("aria-current") !== "true") add("turn-by-colour", row, "not marked current");
  }
  for (const led of document.querySelectorAll(".led")) {
    if (!/: /.test(led.getAttribute("aria-label") || "")) add("led-by-colour", led, "on or off by colour alone");
  }
  if (document.documentElement.scrollWidth > innerWidth) {  // WCAG 1.4.10: no sideways scroll
    const wide = [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > innerWidth);
    for (const e of wide.slice(-3)) add("reflow", e, `${document.documentElement.scrollWidth}px in ${innerWidth}px`);
  }
  return Object.entries(out).map(([id, nodes]) => ({ id, impact: "serious", nodes }));
}"""


def audit(pages: list[Any]) -> list[list[dict[str, Any]]]:
    """axe-core's serious and critical violations on each page as it is now, and this
    file's own: axe (``axe-playwright-python``'s bundled axe.min.js) put in each page once,
    run on all of them at once (each page's renderer works while the others do)."""
    from axe_playwright_python.sync_playwright import Axe

    for page in pages:
        if not page.evaluate("typeof axe !== 'undefined'"):
            page.evaluate(Axe().axe_script)
        page.evaluate("() => { window.__audit = axe.run(document, {resultTypes: ['violations']}); }")
    out = []
    for page in pages:
        found = page.evaluate("window.__audit")["violations"]
        out.append([v for v in found if v["impact"] in SERIOUS] + page.evaluate(OWN_RULES))
    return out


class Table:
    """A table on simulated hardware and virtual time playing ``script``,
    serving its pages, with every page of ``PAGES`` open on it (one browser)."""

    def __init__(self, opened: dict[str, tuple[Page, Any]], state: Path, script: Path, lang: str,
                 address: str | None = None) -> None:
        s = load_script(script)
        cfg = config.load([ROOT / "config" / "companion.yaml"], {**s.overrides, "language": lang})
        self.log: list[dict[str, Any]] = []
        self.steps = [(kind, value) for _, kind, value in s.steps]
        # pages on: a game that needs every player's page waits for them (its pairing phase)
        self.sim = Simulation(cfg, state, self.log.append, draws=s.draws, read_side=WatchedReadSide(), pages=PAGES_ON)
        self.web = start_web(self.sim.app, cfg, "127.0.0.1", 0, virtual=self.sim.reader)
        self.web.pair_limit = RateLimit(50, 60.0)  # every phone on one loopback address
        self.url = self.web.address.rstrip("/")
        if address:  # what the pages show and the QR code says (a picture's, not this port)
            self.web.address = address
        self.paired: set[str] = set()
        self.at = 0  # the index of the script's next step
        self.at_pairing: Any = None  # called with the table as its phones are asked for, before they pair
        self.pages = opened
        for p, page in opened.values():
            page.context.clear_cookies()  # no pairing from the table before
            page.goto(self.url + p.path)

    def pump_until(self, done: Any, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < deadline, "the table did not get there"
            self.sim.loop.pump()
            time.sleep(0.01)

    def step(self, kind: str, value: Any) -> None:
        self.sim.step(kind, value)
        self.at += 1
        public = self.sim.loop.read_side.public()
        seated = {s["id"] for s in public.get("seats", [])}
        if public.get("phase") == "gathering":
            for p, page in self.pages.values():
                if p.seat is not None and p.seat in seated and p.seat not in self.paired:
                    self.pair_page(page, p.seat)
        elif public.get("phase") == "pairing":  # the rest of the table's phones, over plain HTTP
            if self.at_pairing is not None:
                self.at_pairing(self)
            for seat in sorted(seated - self.paired):
                self.pair_http(seat)

    def _tap_when_asked(self, seat: str, mark: int) -> None:
        self.pump_until(lambda: any(e.get("key") == "pairing.tap_card" for e in self.log[mark:]))
        self.sim.step("tap", f"player/{seat}")

    def pair_page(self, page: Any, seat: str) -> None:
        mark = len(self.log)
        page.click(f"#seats button[data-seat={seat}]")
        self._tap_when_asked(seat, mark)
        deadline = time.monotonic() + 5
        while not page.locator("#me").is_visible():
            assert time.monotonic() < deadline, f"{seat}'s phone did not pair"
            self.sim.loop.pump()
            page.wait_for_timeout(20)
        self.paired.add(seat)

    def pair_http(self, seat: str) -> None:
        client = httpx.Client(base_url=self.url)
        tok, mark, answer = token(client), len(self.log), []
        asking = threading.Thread(target=lambda: answer.append(
            client.post("/api/pair", json={"seat": seat}, headers={"X-CSRF-Token": tok}, timeout=10)))
        asking.start()
        self._tap_when_asked(seat, mark)
        self.pump_until(lambda: not asking.is_alive())
        assert answer and answer[0].status_code == 200, seat
        self.paired.add(seat)

    def phase(self) -> str:
        """The table's phase as a page draws it: phase, game, step, night, a result shown."""
        public = self.sim.loop.read_side.public()
        play: dict[str, Any] = public["play"] if isinstance(public.get("play"), dict) else {}
        head: dict[str, Any] = public["headline"] if isinstance(public.get("headline"), dict) else {}
        parts = [public.get("phase"), public.get("game"), play.get("step"), head.get("step"),
                 "night" if head.get("night") else None, "result" if public.get("result") else None,
                 "unpaired" if not self.paired else None]
        return "/".join(str(p) for p in parts if p)

    def caught_up(self, p: Page, page: Any) -> None:
        want = self.sim.loop.read_side.public()
        mine = self.sim.loop.read_side.private(p.seat).get("page", []) if p.seat in self.paired else None
        page.wait_for_function(CAUGHT_UP, arg=[want, mine], timeout=15_000)  # a loaded machine

    def close(self) -> None:
        for _, page in self.pages.values():
            page.goto("about:blank")  # its feeds closed before the server goes
        self.web.stop()
        self.sim.close()


def violations(table: Table, where: str, found: dict[str, list[str]], seen: set[tuple[str, str]]) -> None:
    """Audit each page once per phase: ``found``, rule id → where it was seen."""
    phase = table.phase()
    due = [(name, p, page) for name, (p, page) in table.pages.items() if (name, phase) not in seen]
    for name, p, page in due:
        seen.add((name, phase))
        table.caught_up(p, page)
    for (name, _, _), got in zip(due, audit([page for _, _, page in due]), strict=True):
        for v in got:
            targets = ", ".join(str(n["target"]) for n in v["nodes"][:3])
            found.setdefault(v["id"], []).append(f"{where} {phase} {name}: {v['impact']}, {len(v['nodes'])}× {targets}")


def open_page(context: Any, p: Page) -> Any:
    """``p`` in ``context``, before it goes anywhere: a real table's page answers 404 for the
    virtual table, as a daemon with no simulated reader does (the same server, both pages)."""
    page = context.new_page()
    if not p.virtual:
        page.route("**/api/virtual", lambda route: route.fulfill(status=404, body="Not Found"))
    return page


@pytest.fixture(scope="module")
def opened(browser: Any) -> Iterator[dict[str, tuple[Page, Any]]]:  # noqa: F811
    """Every page of ``PAGES`` in one browser, a context each (a phone's own cookie), kept
    from one table to the next (a context takes a second or more to make)."""
    pages: dict[str, tuple[Page, Any]] = {}
    for p in PAGES:
        pages[p.name] = (p, open_page(browser.new_context(viewport=p.viewport, bypass_csp=True), p))
    yield pages
    for _, page in pages.values():
        page.context.close()


@pytest.fixture
def table_of(opened: dict[str, tuple[Page, Any]], tmp_path: Path) -> Iterator[Any]:
    made: list[Table] = []

    def make(game: str, lang: str) -> Table:
        t = Table(opened, tmp_path / f"{game}-{lang}", GAMES[game], lang, address=ADDRESS)
        made.append(t)
        return t
    yield make
    for t in made:
        t.close()


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("game", list(GAMES))
def test_no_serious_violation_on_any_page_in_any_phase(table_of: Any, game: str, lang: str) -> None:
    table = table_of(game, lang)
    (_, first), found, seen = table.pages["public"], dict[str, list[str]](), set[tuple[str, str]]()
    sync_api.expect(first.locator("html")).to_have_attribute("lang", lang)
    violations(table, f"{game}/{lang}", found, seen)  # between games, before the first card
    for kind, value in table.steps:
        table.step(kind, value)
        violations(table, f"{game}/{lang}", found, seen)
    assert table.sim.loop.table.state.phase == "idle"  # played to its end: the result was audited too
    assert {name for name, _ in seen} == {p.name for p in PAGES}
    assert found == {}, "\n".join(f"{rule}:\n  " + "\n  ".join(where) for rule, where in found.items())


@pytest.fixture
def keyboard_table(browser: Any, tmp_path: Path) -> Iterator[tuple[Table, Any]]:  # noqa: F811
    """Seven Knights under way on the simulation's page, paired with red's seat: the
    page's own content (its seat, its controls), the scoreboard, and the virtual table."""
    p = Page("keyboard", "/", TV, seat=ME, virtual=True)
    page = open_page(browser.new_context(viewport=TV, bypass_csp=True), p)
    table = Table({"keyboard": (p, page)},
                  tmp_path, GAMES["seven-knights"], "en")
    try:
        steps = iter(table.steps)
        while table.sim.loop.table.state.phase != "playing":
            table.step(*next(steps))
        table.caught_up(*table.pages["keyboard"])
        sync_api.expect(page.locator("#components button").first).to_be_visible()
        yield table, page
    finally:
        table.close()
        page.context.close()


def from_the_top(page: Any) -> None:
    """Tab's next stop: the first control of the page, as on a page just opened (a
    blur alone leaves the browser's starting point where the last click was)."""
    page.evaluate("""() => { const top = document.createElement("span"); top.tabIndex = -1;
        document.body.prepend(top); top.focus(); }""")


def tab_order(page: Any, limit: int = 400) -> list[tuple[str, bool]]:
    """Each element Tab reaches from the top, once round: (what it is, in the virtual table)."""
    from_the_top(page)
    order: list[tuple[str, bool]] = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        at = page.evaluate("""() => { const e = document.activeElement;
            if (!e || e === document.body) return null;
            return [e.outerHTML.slice(0, 120), !!e.closest("#virtual")]; }""")
        if at is None or (at[0], at[1]) in order:
            return order
        order.append((at[0], at[1]))
    raise AssertionError("Tab never came round")


def test_the_virtual_table_comes_after_the_pages_own_content_for_a_keyboard(
        keyboard_table: tuple[Table, Any]) -> None:
    _, page = keyboard_table
    order = tab_order(page)
    inside = [v for _, v in order]
    assert True in inside and False in inside
    first_virtual = inside.index(True)
    assert all(inside[first_virtual:]), [what for what, v in order[first_virtual:] if not v]  # nothing of the page after
    assert any("data-press" in what for what, _ in order[:first_virtual]), order  # the seat's own controls before it


def test_hold_back_is_reachable_from_a_keyboard(keyboard_table: tuple[Table, Any]) -> None:
    """Back held (restart the step, or leave the game) was a press held with a pointer:
    from a keyboard, Tab reaches a control that holds it, and Enter sends the hold."""
    table, page = keyboard_table
    from_the_top(page)
    for _ in range(400):
        page.keyboard.press("Tab")
        if page.evaluate("!!document.activeElement.closest('[data-panel-hold]')"):
            break
    else:
        raise AssertionError("no control a keyboard reaches holds back")
    mark = len(table.log)
    page.keyboard.press("Enter")
    table.pump_until(lambda: any(e["event"] == "accepted" and e.get("input") == "hold-back"
                                 for e in table.log[mark:]), timeout=15)
    said = [e for e in table.log[mark:] if e["event"] == "say"]
    assert said and said[-1]["key"] == "table.confirm_game", said  # the table asks to confirm leaving


def test_a_page_opened_while_the_table_moves_draws_the_table_as_it_is_now(browser: Any,  # noqa: F811
                                                                           tmp_path: Path) -> None:
    """The page asks for the table (GET /api/table) and opens its feed at once; when the
    feed's snapshot of a newer table comes first, the older answer must not draw over it
    (nothing else would come to put it right until the table moved again: a phone's seat
    buttons missing, found by this file's pairing)."""
    p = Page("late", "/", TV)
    page = open_page(browser.new_context(viewport=TV, bypass_csp=True), p)
    held: list[tuple[Any, Any]] = []
    page.route("**/api/table", lambda route: held.append((route, route.fetch())))  # answered, not yet given
    table = Table({"late": (p, page)}, tmp_path, GAMES["seven-knights"], "en")
    try:
        deadline = time.monotonic() + 10
        while not held:
            assert time.monotonic() < deadline
            page.wait_for_timeout(20)
        table.step("tap", "game/seven-knights")  # the table moves: the feed brings it
        page.wait_for_function("state.phase === 'gathering'", timeout=10_000)
        route, answer = held[0]
        route.fulfill(response=answer)  # the answer from before the card
        page.wait_for_function("Object.keys(GAMES).length > 0", timeout=10_000)  # drawn from it
        page.wait_for_timeout(100)
        assert page.evaluate(CAUGHT_UP, [table.sim.loop.read_side.public(), None])
        sync_api.expect(page.locator("#step")).to_contain_text("Players, tap your cards")
    finally:
        table.close()
        page.context.close()
