"""The page walk's machinery (tests/test_page_walk.py runs it): one evening on
one LiveTable, every seat's phone and the 1920×1080 TV open in one Chromium
the whole evening, each game driven by a seeded policy among the inputs the
table takes now, and at every step each page read as drawn (``PROBE``) and
held against the table: its controls against ``legal()``, its texts against
the table's present and language, its clocks against the deadline, the TV's
text size; by night a snapshot of every page; axe-core at each step's first
visit.  What fails is recorded per game and property (``Evening.found``), so
each property's test says which games pass."""

from __future__ import annotations

import copy
import fnmatch
import json
import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.app.live_table import LiveTable
from companion.core.events import Press, Refusal, Submit, Tap
from web.pairing import RateLimit

PHONE = {"width": 360, "height": 780}
HD = {"width": 1920, "height": 1080}
SEATS = ("red", "blue", "green", "yellow", "purple", "orange")
PROPERTIES = ("controls", "stale", "language", "clock", "tv_text", "axe", "secret", "past", "said_clock")
TV_MIN_PX = 24
# What a page keeps on purpose: the history (and a game log, however it is named).
HISTORY = "section:has(> #history), #history, #log, #game-log, [data-history], [data-log]"
# A Japanese page may show these in Latin letters: file formats, product names it links to,
# and VP (victory points: the rule book's own abbreviation).
LATIN_OK = re.compile(r"https?://\S+|(?<![A-Za-z])(?:JSON|QR|BG Stats|NFC|URL|VP)(?![A-Za-z])")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
KANA_KANJI = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]")
MSS = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])")
MINUTES_EN = re.compile(r"(?<!under )(?<!than )\b(\d+|one|two|three|four|five|a) minutes?\b(?! ago)", re.I)
UNDER_EN = re.compile(r"under a minute|less than a minute", re.I)
MINUTES_JA = re.compile(r"(?:残り|あと)\s*(\d+)\s*分(?!未満|を切)")
UNDER_JA = re.compile(r"1分(?:を)?(?:切|未満)")
WORDS = {"one": 1, "a": 1, "two": 2, "three": 3, "four": 4, "five": 5}
# A time said: "2 minutes 30", "one minute", "45 seconds"; 2分30秒, 1分, 45秒 (a number may be a fraction: caught)
NUM = r"\d+(?:\.\d+)?"
SAID_EN = re.compile(rf"\b(?:({NUM}|one|a) minutes?(?: ({NUM})(?: seconds?)?)?|({NUM}) seconds?)\b", re.I)
SAID_JA = re.compile(rf"(?:({NUM})分(?:({NUM})秒)?|({NUM})秒)")
LEFT_WORD = re.compile(r"\bleft\b|残り|あと", re.I)
STRIDE = 6  # within one step, the pages are checked every STRIDE inputs (every step change always)
# A game whose pages fall behind this many times is left there: each costs a page's
# whole wait, and one such failure already fails the walk (a red run stays short).
GIVE_UP = 3
SLACK_S = 2.5  # a page's second and the walk's own reading of it


# Each page as drawn: its visible text nodes (in the history or not, the font size, the
# box), its visible enabled controls, its language.  ``sr`` marks visually hidden text
# (a 1-pixel box): read by a screen reader, so its clock counts, its size does not.
PROBE = """(history) => {
  const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const text = n.textContent.replace(/\\s+/g, " ").trim();
    const e = n.parentElement;
    if (!text || !e || ["SCRIPT", "STYLE", "NOSCRIPT"].includes(e.tagName) || !shown(e)) continue;
    const r = e.getBoundingClientRect();
    out.push({ text, history: !!e.closest(history), px: parseFloat(getComputedStyle(e).fontSize),
               sr: r.width <= 1 || r.height <= 1, where: e.id ? "#" + e.id : (e.closest("[id]") ? "#" + e.closest("[id]").id + " " + e.tagName.toLowerCase() : e.tagName.toLowerCase()) });
  }
  const controls = [];
  for (const b of document.querySelectorAll("#controls button[data-press]"))
    if (shown(b) && !b.disabled) controls.push("press:" + b.dataset.press);
  for (const b of document.querySelectorAll("#submits button[data-field]"))
    if (shown(b) && !b.disabled) controls.push("submit:" + b.dataset.field);
  return { texts: out, controls: controls.sort(), lang: document.documentElement.lang };
}"""

# What the page has not yet drawn of the read side's present: the public snapshot's
# keys and, on a paired phone, the seat's private ones ("me.…": its lines and legal inputs).
# ``unkept``: the keys the page does not keep (the clock, which it counts itself; the
# game log on the TV, which shows none).
BEHIND = """([want, mine, unkept]) => {
  if (typeof state === "undefined") return [];
  const keys = (o, acc) => { if (o && typeof o === "object")
    for (const [k, v] of Object.entries(o)) { acc.add(k); keys(v, acc); } return acc; };
  const canon = (v) => JSON.stringify(v === undefined ? null : v, [...keys(v, new Set())].sort());
  // the game log as its lines read (the page keeps what the feed said, the snapshot what the server kept)
  const norm = (k, v) => (k === "log" ? (v || []).map((l) => l.text) : v);
  const behind = Object.keys(want).filter((k) => !unkept.includes(k) && canon(norm(k, state[k])) !== canon(norm(k, want[k])));
  if (mine === null) return behind;
  if (typeof me === "undefined" || !me) return [...behind, "me"];
  return [...behind, ...Object.keys(mine).filter((k) => canon(me[k]) !== canon(mine[k])).map((k) => "me." + k)];
}"""
CAUGHT_UP = f"(args) => ({BEHIND})(args).length === 0"


@dataclass
class Game:
    """One game of the evening: its id in the report, the table's language, the
    cards tapped at the table before its start, its seats; ``deal``: One Night's
    night snapshots are compared between the games of one deal name."""

    id: str
    lang: str
    setup: tuple[str, ...]
    seats: tuple[str, ...]
    max_steps: int = 160
    deal: str | None = None


@dataclass
class Played:
    steps: int = 0  # inputs the policy gave
    states: set[tuple[Any, ...]] = field(default_factory=set)  # (phase, step, round) met
    finished: bool = False
    seconds: float = 0.0
    inputs: dict[str, int] = field(default_factory=dict)  # how each input went: phone, table, panel
    night: dict[str, list[str]] = field(default_factory=dict)  # page → its distinct snapshots by night
    audits: int = 0
    behind: int = 0  # checks at which the pages did not catch up with the table
    said_times: int = 0  # times the speaker said, held against the clocks


def strings(obj: Any, out: set[str]) -> set[str]:
    """Every string in a JSON-like value."""
    if isinstance(obj, str):
        out.add(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            strings(v, out)
    elif isinstance(obj, list | tuple):
        for v in obj:
            strings(v, out)
    return out


def a_line(s: str) -> bool:
    """A string worth remembering as a line a page might keep too long: a sentence, not a name or a number."""
    return len(s) >= 12 and " " in s.strip() or len(s) >= 6 and len(KANA_KANJI.findall(s)) >= 5


class Evening:
    def __init__(self, browser: Any, state: Path, seed: int = 11) -> None:
        night = {"one-night": {"window_s": 1, "pace": 0.25, "discussion_min": 0.5, "jitter_s": [0.0, 0.4]}}
        self.live = LiveTable(state, seed=seed, game_settings=night, web={"pair_window_s": 5})
        self.live.web.pair_limit = RateLimit(100, 60.0)  # every phone on one loopback address
        self.browser = browser
        self.rng = random.Random(f"page-walk:{seed}")  # the policy's
        self.audit_rng = random.Random(f"page-walk-axe:{seed}")  # which phone is audited: the policy's own stays
        self.tv = self._page(HD, "/tv")
        self.phones: dict[str, Any] = {}
        self.found: dict[tuple[str, str], list[str]] = {}  # (property, game) → what failed
        self.played: dict[str, Played] = {}
        self.lines: set[str] = set()  # every line any page was given so far this evening
        self.told_at: dict[str, float] = {}  # a told or said line → when (the page's word of the moment fades)
        self.game: Game | None = None
        self.audited: set[tuple[Any, ...]] = set()
        self.mark = 0  # events handled by the walk so far
        self.sent: set[tuple[Any, ...]] = set()  # (step, seat, field) sent in the current step
        self.sent_in: tuple[Any, ...] = ()
        self.spent: dict[str, float] = {}  # seconds in each part of the checks (the report's budget)
        # what the table told one seat alone (every ``tell``: a secret), and the lines told or refused
        # that answered an earlier step (``past``) or the one the pages are on (``answered``)
        self.secrets: set[str] = set()
        self.past: set[str] = set()
        self.answered: set[str] = set()
        self.answered_at: tuple[Any, ...] | None = None  # the step (game, phase, step, round, language)
        self.heard = 0  # events whose said times were held against the clocks so far

    # ------------------------------------------------------------ the table
    def on_loop(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` on the loop's thread (the table is the loop's alone)."""
        return self.live.on_loop(fn, timeout=10)

    def fail(self, prop: str, what: str) -> None:
        assert self.game is not None
        got = self.found.setdefault((prop, self.game.id), [])
        if what not in got:
            got.append(what)

    def _page(self, viewport: dict[str, int], path: str) -> Any:
        page = self.browser.new_context(viewport=viewport).new_page()
        page.route("**/api/virtual", lambda route: route.fulfill(status=404, body="Not Found"))  # a real table's
        page.goto(self.live.url + path)
        return page

    def pair(self, seat: str) -> None:
        """A phone for ``seat``: its page picks the seat, the card's tap proves it."""
        page = self.phones.get(seat) or self._page(PHONE, "/")
        self.phones[seat] = page
        page.wait_for_selector(f"#seats button[data-seat={seat}]")
        page.click(f"#seats button[data-seat={seat}]")
        self.live.await_pairing(seat)
        self.live.tap(f"player/{seat}")
        page.wait_for_selector("#me", state="visible", timeout=10_000)

    def paired(self) -> set[str]:
        return set(self.live.web.pairings.paired_seats())

    # ------------------------------------------------------------- a game
    def play(self, game: Game) -> Played:
        self.game, played = game, Played()
        self.played[game.id] = played
        started = time.perf_counter()
        lang_now = self.on_loop(lambda: self.live.loop.table.lang)
        if lang_now != game.lang:
            self.live.tap(f"lang/{game.lang}")
        for identity in game.setup:
            self.live.tap(identity)
        for seat in game.seats:
            if seat not in self.paired():
                self.pair(seat)
        self.live.press("next")
        self.live.settle()
        assert self.on_loop(lambda: self.live.loop.table.state.phase) == "playing", game.id
        checked: tuple[Any, ...] | None = None
        since = 0  # inputs since the last check
        for _ in range(game.max_steps):
            now = self.now()
            here = (now["phase"], now["step"], now["round"])
            if here != checked or since >= STRIDE or now["night"]:  # the budget: every step, and every few inputs
                self.check(played)
                checked, since = here, 0
            if played.behind >= GIVE_UP:
                self.fail("controls", f"{self.where()}: left after {GIVE_UP} checks whose pages did not catch up")
                break
            if now["phase"] != "playing":
                played.finished = True
                break
            if self.move(played):
                since += 1
            else:
                self.wait_for_the_table(played)
        else:
            played.finished = self.on_loop(lambda: self.live.loop.table.state.phase) != "playing"
        for _ in range(3):  # not over in its budget: left (back held, next to confirm), so the evening goes on
            if self.on_loop(lambda: self.live.loop.table.state.phase) != "playing":
                break
            self.live.press("hold-back", "next")
        if played.finished:
            self.check(played)  # the result, as the pages show it between games
        played.seconds = time.perf_counter() - started
        return played

    def now(self) -> dict[str, Any]:
        """The table's present, read on its thread: phase, step, round, whose press is
        taken, each seat's fields, the candidates' verdicts tried on a copy."""
        loop = self.live.loop

        def read() -> dict[str, Any]:
            table = loop.table
            engine = table.engine
            legal = table.legal(None)
            seats = list(self.phones)  # a phone of a seat not in this game may press too, where anyone may
            return {"phase": table.state.phase, "lang": table.lang,
                    "step": engine.state.step if engine is not None else None,
                    "round": getattr(engine.state, "round", None) if engine is not None else None,
                    "buttons": tuple(legal.buttons), "taps": tuple(legal.taps),
                    "components": tuple(engine.components) if engine is not None else (),
                    "players": tuple(table.state.seats) if hasattr(table.state, "seats") else (),
                    "may_press": {s: table.may_press(s) for s in seats},
                    "submits": {s: dict(table.legal(s).submits) for s in seats},
                    "night": bool(table.headline()["night"])}
        return dict(self.on_loop(read))

    def try_on_copy(self, inputs: list[Any]) -> list[tuple[bool, bool]]:
        """Each input on a copy of the table: (accepted, leads to another step or phase)."""
        def trial() -> list[tuple[bool, bool]]:
            out = []
            table = self.live.loop.table
            where = (table.state.phase, table.engine.state.step if table.engine is not None else None)
            for inp in inputs:
                cur = copy.deepcopy(table)
                try:
                    cur.handle(inp)
                except Refusal:
                    out.append((False, False))
                    continue
                out.append((True, (cur.state.phase, cur.engine.state.step if cur.engine is not None else None)
                            != where))
            return out
        return list(self.on_loop(trial))

    def moves(self, now: dict[str, Any]) -> list[tuple[str, str | None, Any, Any]]:
        """The inputs the table takes now, as (how, seat, what, the table's input): a
        seat's press and fields on its phone, a card on the reader, a press on the panel
        where no phone may press."""
        out: list[tuple[str, str | None, Any, Any]] = []
        pressers = [s for s, ok in now["may_press"].items() if ok and s in self.game.seats]  # type: ignore[union-attr]
        for b in ("next", "back"):
            if b in now["buttons"]:
                if pressers:
                    seat = self.rng.choice(pressers)
                    out.append(("phone-press", seat, b, Press(b)))
                else:
                    out.append(("panel", None, b, Press(b)))
        for seat, asks in now["submits"].items():
            for name, ask in asks.items():
                if ask.choices and ask.high:
                    value: Any = {"to": self.rng.choice(ask.choices), "gems": self.rng.randint(max(ask.low, 1), ask.high)}
                elif ask.choices:
                    value = self.rng.choice(ask.choices)
                else:
                    value = self.rng.randint(ask.low, ask.high)
                out.append(("phone-submit", seat, (name, value), Submit(seat, name, value)))
        universe = (*now["components"], *(f"player/{s}" for s in self.game.seats))  # type: ignore[union-attr]
        for identity in universe:
            if any(fnmatch.fnmatchcase(identity, t) for t in now["taps"] if t != "lang/*"):
                out.append(("tap", None, identity, Tap(identity)))
        return out

    def move(self, played: Played) -> bool:
        self.hear()  # what the table said on its own (a timer) since, before an input moves it on
        now = self.now()
        candidates = self.moves(now)
        if not candidates:
            return False
        verdicts = self.try_on_copy([c[3] for c in candidates])
        weighted = []
        for c, (ok, onward) in zip(candidates, verdicts, strict=True):
            if not ok:
                continue
            w = 4.0 if onward else 1.0
            if c[0] == "phone-submit" and (now["step"], c[1], c[2][0]) in self.sent:
                w = 0.1  # sent already in this step (a bid changed): the others' turn first
            if c[2] == "back" or c[0] == "phone-submit" and c[2][0] in ("gift", "more_time", "pause"):
                w = 0.05  # leads nowhere new
            weighted.append((c, w))
        if not weighted:
            return False
        how, seat, what, _ = self.rng.choices([c for c, _ in weighted], [w for _, w in weighted])[0]
        if (now["phase"], now["step"]) != self.sent_in:
            self.sent, self.sent_in = set(), (now["phase"], now["step"])
        if how == "phone-submit":
            self.sent.add((now["step"], seat, what[0]))
        played.steps += 1
        played.inputs[how] = played.inputs.get(how, 0) + 1
        if how == "phone-press":
            self.press_on_phone(seat, what)
        elif how == "phone-submit":
            self.submit_on_phone(seat, *what)
        elif how == "tap":
            self.live.tap(what)
        else:
            self.live.press(what)
        self.live.settle()
        self.hear()
        return True

    def press_on_phone(self, seat: str, button: str) -> None:
        page = self.phones[seat]
        control = page.locator(f"#controls button[data-press={button}]")
        if not self.seat_caught_up(seat, f"{button} on {seat}'s phone"):
            enabled = False
        elif not (enabled := control.is_enabled()):
            self.fail("controls", f"{self.where()}: {seat}'s phone: {button} is taken from this seat but "
                                  "its button is disabled: pressed on the panel instead")
        if not enabled:
            self.live.press(button)
            return
        with page.expect_response(lambda r: r.url.endswith("/api/press"), timeout=10_000):
            control.click()
            if page.locator("#press-confirm").is_visible():  # it ends a step for everyone: asked first
                page.click("#press-confirm button.yes")

    def submit_on_phone(self, seat: str, name: str, value: Any) -> None:
        page = self.phones[seat]
        form = page.locator(f'#submits form[data-field="{name}"]')
        if not self.seat_caught_up(seat, f"{name} on {seat}'s phone"):
            shown = False
        elif not (shown := form.count() > 0):
            self.fail("controls", f"{self.where()}: {seat}'s phone has no form for {name}, which the table takes")
        if not shown:
            self.live.loop.submit(Submit(seat, name, value))
            return
        if isinstance(value, dict):
            form.locator(f"select[name={name}]").select_option(str(value["to"]))
            form.locator(f"input[name={name}-amount]").fill(str(value["gems"]))
        elif form.locator(f"select[name={name}]").count():
            form.locator(f"select[name={name}]").select_option(str(value))
        elif form.locator(f"input[name={name}]").count():  # a button (kind: button) sends its one value
            form.locator(f"input[name={name}]").fill(str(value))
        with page.expect_response(lambda r: r.url.endswith("/api/submit"), timeout=10_000):
            form.locator(f'button[data-field="{name}"]').click()
            yes = form.locator(".confirm button.yes")
            if yes.count():
                yes.click()

    def wait_for_the_table(self, played: Played) -> None:
        """Nothing to give: the table is on its own (the night, the count): until it moves."""
        version = self.version()
        deadline = time.monotonic() + 30
        while self.version() == version:
            if self.now()["night"]:
                self.night_snapshot(played)
            assert time.monotonic() < deadline, f"{self.where()}: nothing to do and the table did not move"
            time.sleep(0.05)
        self.hear()

    def hear(self) -> None:
        """Each time the speaker said since the last hearing, held against the deadline the
        pages count to just after it: heard before and after each input and each move of
        the table's own, so no input has moved the clocks since."""
        events = self.live.events[self.heard:]
        self.heard += len(events)
        engine = self.on_loop(lambda: self.live.loop.table.engine)
        keys = set(getattr(engine, "clock_lines", ()))
        # an event's ``t`` is seconds on the loop's monotonic clock since its outputs began
        wall_of_t = self.live.loop.out._t0 + time.time() - time.monotonic()
        said = [(e["text"], wall_of_t + float(e["t"])) for e in events
                if e.get("event") == "say" and not e.get("aside") and isinstance(e.get("text"), str)
                and (e.get("key") in keys or LEFT_WORD.search(e["text"]) and said_times(e["text"]))]
        if said and self.game is not None:
            self.played[self.game.id].said_times += sum(len(said_times(text)) for text, _ in said)
            public = self.public()
            for what in said_clock_problems(said, *clock_of(public)):
                self.fail("said_clock", f"{self.where()}: {what}")

    def version(self) -> tuple[int, int]:
        """What moves when the table does: the pages' snapshot, and the lines said."""
        return self.live.web.public_version, len(self.live.events)

    def public(self) -> dict[str, Any]:
        """The public snapshot as the pages are sent it (the read side's, with the
        last line said, the result's words, the address)."""
        return dict(self.live.web.public_state(history=False))

    def where(self) -> str:
        public = self.public()
        head = public.get("headline") or {}
        play = public.get("play") if isinstance(public.get("play"), dict) else {}
        return f"{self.game.id if self.game else '-'} #{self.played[self.game.id].steps if self.game else 0} " \
               f"{public.get('phase')}/{(play or {}).get('step') or head.get('step') or '-'}"

    # ------------------------------------------------------------- the checks
    def pages(self) -> dict[str, Any]:
        return {"tv": self.tv, **{f"phone:{s}": p for s, p in self.phones.items()}}

    def catch_up(self) -> str | None:
        """Wait until every page has drawn the table's present (the table may move on
        meanwhile: asked again); None once they have, else which page was behind in what."""
        return self._caught_up(self.pages())

    def _caught_up(self, pages: dict[str, Any]) -> str | None:
        behind = "the table kept moving"
        for _ in range(4):
            version = self.version()
            public = self.public()
            ok = True
            for name, page in pages.items():
                seat = name.removeprefix("phone:") if name.startswith("phone:") else None
                mine, unkept = None, ["clock"] if seat else ["clock", "log"]
                if seat in self.paired():
                    mine = {k: v for k, v in self.live.loop.read_side.private(seat).items() if k != "seat"}
                try:  # polled every 30 ms: an animation frame comes late on a loaded machine
                    page.wait_for_function(CAUGHT_UP, arg=[public, mine, unkept], timeout=4000, polling=30)
                except Exception:  # noqa: BLE001 - the table moved on, or the page is behind: asked again
                    behind = f"{name} behind in {', '.join(page.evaluate(BEHIND, [public, mine, unkept])) or '-'}"
                    ok = False
                    break
            if ok and self.version() == version:
                return None
        return behind

    def seat_caught_up(self, seat: str, what: str) -> bool:
        """Whether ``seat``'s phone has drawn the table's present, before its controls are
        judged: a page still behind is behind (as at a check), not a control it lacks."""
        behind = self._caught_up({f"phone:{seat}": self.phones[seat]})
        if behind is not None:
            self.played[self.game.id].behind += 1  # type: ignore[union-attr]
            self.fail("controls", f"{self.where()}: before {what}: the page did not catch up with the table ({behind})")
        return behind is None

    def check(self, played: Played) -> None:
        now = self.now()
        played.states.add((now["phase"], now["step"], now["round"]))
        if now["night"]:
            self.night_snapshot(played)
            return
        t0 = time.perf_counter()
        behind = self.catch_up()
        self.spent["catch_up"] = self.spent.get("catch_up", 0) + time.perf_counter() - t0
        if behind is not None:
            played.behind += 1
            self.fail("controls", f"{self.where()}: the pages did not catch up with the table ({behind})")
            return
        seen, now = self.version(), self.now()  # the present the pages have caught up with
        before = time.time()
        drawn = {name: page.evaluate(PROBE, HISTORY) for name, page in self.pages().items()}
        after = time.time()
        self.spent["probe"] = self.spent.get("probe", 0) + after - before
        public = self.public()
        self.live.settle()  # a timer's move under the reading has reached the pages' snapshot by now
        if self.version() != seen or self.now() != now:
            return  # the table moved under the reading (a timer): the next step reads again
        present = strings(public, set())
        for seat in self.phones:
            present |= strings(self.live.loop.read_side.private(seat), set())
        self.remember_events(after, (self.game.id, now["phase"], now["step"], now["round"], now["lang"]))  # type: ignore[union-attr]
        recent = {t for t, at in self.told_at.items() if after - at <= 5.0}  # the word of the moment, fading
        self.check_controls(now, drawn)
        self.check_stale(drawn, present | recent)
        self.check_language(now["lang"], drawn)
        self.check_clock(public, drawn, (before + after) / 2)
        self.check_tv_text(drawn["tv"])
        for what in secret_problems(drawn, self.secrets):
            self.fail("secret", f"{self.where()}: {what}")
        for what in stale_problems(drawn, self.past - self.answered, present):
            self.fail("past", f"{self.where()}: {what}")
        for s in present:
            if a_line(s):
                self.lines.add(s)
        key = (self.game.id, now["phase"], now["step"])  # type: ignore[union-attr]
        if key not in self.audited:  # axe at each step's first visit
            self.audited.add(key)
            played.audits += 1
            t0 = time.perf_counter()
            self.check_axe()
            self.spent["axe"] = self.spent.get("axe", 0) + time.perf_counter() - t0

    def remember_events(self, at: float, step: tuple[Any, ...]) -> None:
        """The lines since the last check; ``step``: the one the pages are on now.  A step
        changes by one input at most between two checks (each change is checked): the lines
        told or refused since a change answered the step before it."""
        events = self.live.events[self.mark:]
        self.mark += len(events)
        answers, refused = set(), False
        for e in events:
            text = e.get("text") if isinstance(e.get("text"), str) else None
            if e.get("event") == "tell" and text:
                self.secrets.add(text)
            if e.get("event") == "rejected":  # a submit's refusal has its sentence; a press's is said next
                refused = not text
            if text and (e.get("event") in ("tell", "rejected") or e.get("event") == "say" and refused):
                answers.add(text)
                refused = False
        if step != self.answered_at:
            self.past |= self.answered | answers
            self.answered, self.answered_at = set(), step
        else:
            self.answered |= answers
        for e in events:
            if e.get("event") in ("say", "tell", "rejected") and isinstance(e.get("text"), str):
                self.told_at[e["text"]] = at
                if a_line(e["text"]):
                    self.lines.add(e["text"])

    def check_controls(self, now: dict[str, Any], drawn: dict[str, Any]) -> None:
        for what in controls_problems(now, drawn, self.paired()):
            self.fail("controls", f"{self.where()}: {what}")

    def check_stale(self, drawn: dict[str, Any], present: set[str]) -> None:
        for what in stale_problems(drawn, self.lines, present):
            self.fail("stale", f"{self.where()}: {what}")

    def check_language(self, lang: str, drawn: dict[str, Any]) -> None:
        for what in language_problems(lang, drawn):
            self.fail("language", f"{self.where()}: {what}")

    def check_clock(self, public: dict[str, Any], drawn: dict[str, Any], at: float) -> None:
        deadline, paused_s = clock_of(public)
        for what in clock_problems(deadline, drawn, at, paused_s):
            self.fail("clock", f"{self.where()}: {what}")

    def check_tv_text(self, tv: dict[str, Any]) -> None:
        for what in tv_text_problems(tv):
            self.fail("tv_text", f"{self.where()}: {what}")

    def check_axe(self) -> None:
        from axe_playwright_python.sync_playwright import Axe

        seat = self.audit_rng.choice(sorted(self.phones))  # the TV and one phone each time (the budget)
        pages = {"tv": self.tv, f"phone:{seat}": self.phones[seat]}
        for page in pages.values():
            if not page.evaluate("typeof axe !== 'undefined'"):
                page.evaluate(Axe().axe_script)
            page.evaluate("() => { window.__audit = axe.run(document, {resultTypes: ['violations']}); }")
        for name, page in pages.items():
            for v in page.evaluate("window.__audit")["violations"]:
                if v["impact"] in ("serious", "critical"):
                    targets = ", ".join(str(n["target"]) for n in v["nodes"][:3])
                    self.fail("axe", f"{self.where()}: {name}: {v['id']} ({v['impact']}) {targets}")

    def night_snapshot(self, played: Played) -> None:
        """Each page by night, once it has drawn the table's present: its visible text
        and enabled controls, kept when new."""
        seen = self.version()
        if self.catch_up() is not None:
            return  # the table moved on meanwhile (the next turn, or the day)
        snaps = {}
        for name, page in self.pages().items():
            if name.startswith("phone:") and name.removeprefix("phone:") not in self.game.seats:  # type: ignore[union-attr]
                continue
            drawn = page.evaluate(PROBE, HISTORY)
            snaps[name] = json.dumps([[t["text"] for t in drawn["texts"]], drawn["controls"]], ensure_ascii=False)
        if self.version() != seen or not self.now()["night"]:
            return  # read while the table moved (the day may have come): not a night's snapshot
        for name, snap in snaps.items():
            kept = played.night.setdefault(name, [])
            if snap not in kept:
                kept.append(snap)

    def close(self) -> None:
        for page in self.pages().values():
            page.goto("about:blank")
            page.context.close()
        self.live.close()


# ------------------------------------------------------------ the properties
# Each a pure function of the pages as drawn (``PROBE``'s answers by page name) and the
# table's present: what fails, in words (the walk adds where).
def controls_problems(now: dict[str, Any], drawn: dict[str, Any], paired: set[str]) -> list[str]:
    """A phone's enabled controls are what the table takes from its seat now, all of
    it: next/back where the table lists them and the seat may press, repeat (the
    loop's, from any seat) where the table lists it, each field the seat may send."""
    out = []
    for name, page in drawn.items():
        seat = name.removeprefix("phone:")
        if not name.startswith("phone:") or seat not in paired:
            continue
        want = {f"press:{b}" for b in ("next", "back") if b in now["buttons"] and now["may_press"].get(seat)}
        want |= {"press:repeat"} if "repeat" in now["buttons"] else set()
        want |= {f"submit:{f}" for f in now["submits"].get(seat, {})}
        got = set(page["controls"])
        if got - want:
            out.append(f"{seat}'s phone offers {sorted(got - want)}, which the table does not take from it")
        if want - got:
            out.append(f"{seat}'s phone lacks {sorted(want - got)}, which the table takes from it")
    return out


def stale_problems(drawn: dict[str, Any], lines: set[str], present: set[str]) -> list[str]:
    """No line a page was given before (``lines``) and gone from the table's present is
    shown outside the history (a present text that contains it is the present's)."""
    gone = [line for line in lines if line not in present]
    out = []
    for name, page in drawn.items():
        for t in page["texts"]:
            if t["history"]:
                continue
            for line in gone:
                if line in t["text"] and not any(line in p and p in t["text"] for p in present if len(p) > len(line)):
                    out.append(f"{name} {t['where']}: {line!r}")
    return out


def secret_problems(drawn: dict[str, Any], secrets: set[str]) -> list[str]:
    """No text a seat was told alone (``secrets``) is visible on any page, its own
    included: there it is held (the secrets' button), never shown unheld."""
    return [f"{name} {t['where']}: {secret!r}" for name, page in drawn.items()
            for t in page["texts"] for secret in secrets if secret in t["text"]]


def language_problems(lang: str, drawn: dict[str, Any]) -> list[str]:
    """Every visible text in the table's language: in Japanese no Latin word (but
    URLs and file formats), in English no kana or kanji."""
    out = []
    for name, page in drawn.items():
        if page["lang"] != lang:
            out.append(f"{name}: <html lang={page['lang']}> on a {lang} table")
        for t in page["texts"]:
            text = t["text"]
            if LATIN_WORD.search(LATIN_OK.sub(" ", text)) if lang == "ja" else KANA_KANJI.search(text):
                out.append(f"{name} {t['where']}: {text!r}")
    return out


def clock_of(public: dict[str, Any]) -> tuple[float | None, float | None]:
    """The clock the table gives its pages: the headline's deadline, and paused (no
    deadline) the time it goes on from, the play's ``paused_s``."""
    play = public.get("play") if isinstance(public.get("play"), dict) else {}
    return (public.get("headline") or {}).get("deadline"), (play or {}).get("paused_s")


def clock_problems(deadline: float | None, drawn: dict[str, Any], at: float,
                   paused_s: float | None = None) -> list[str]:
    """Every remaining time shown (m:ss, "N minutes", "under a minute", 残りN分) agrees
    with the deadline the table gives at ``at`` (wall clock), or paused with the time
    it stands at (``paused_s``); none without either."""
    left = time_left(deadline, at, paused_s)
    out = []
    for name, page in drawn.items():
        for t in page["texts"]:
            text = t["text"]
            if t["history"]:
                continue
            said = [int(m) * 60 + int(s) for m, s in MSS.findall(text)]
            minutes = [WORDS[n.lower()] if n.lower() in WORDS else int(n) for n in MINUTES_EN.findall(text)]
            minutes += [int(n) for n in MINUTES_JA.findall(text)]
            under = bool(UNDER_EN.search(text) or UNDER_JA.search(text))
            if not (said or minutes or under):
                continue
            if left is None:
                if said or under or (minutes and re.search(r"left|残り|あと", text)):
                    out.append(f"{name} {t['where']}: {text!r} with no deadline drawn")
                continue
            wrong = [s for s in said if abs(s - left) > SLACK_S]
            wrong += [n for n in minutes if not (n * 60 <= left + SLACK_S and left - SLACK_S < (n + 1) * 60)]
            if wrong or under and left - SLACK_S >= 60:
                out.append(f"{name} {t['where']}: {text!r} but {left:.0f} s are left")
    return out


def said_times(text: str) -> list[tuple[float | None, float | None]]:
    """The times a line says, each as (minutes, seconds), either None where not said."""
    out = []
    for m in (*SAID_EN.finditer(text), *SAID_JA.finditer(text)):
        minutes, rest, alone = m.groups()
        n = None if minutes is None else float(WORDS.get(minutes.lower(), minutes))
        out.append((n, float(rest) if rest else float(alone) if alone else None))
    return out


def clock_form(seconds: float) -> str:
    """m:ss as the pages draw the time left (whole seconds, rounded up)."""
    shown = max(0, math.ceil(seconds - 1e-6))
    return f"{shown // 60}:{shown % 60:02d}"


def time_left(deadline: float | None, at: float, paused_s: float | None) -> float | None:
    """The time the clocks show at ``at``: to the deadline, or paused the time they stand at."""
    if deadline is not None:
        return max(0.0, deadline - at)
    return float(paused_s) if isinstance(paused_s, int | float) else None


def said_clock_problems(said: list[tuple[str, float]], deadline: float | None,
                        paused_s: float | None = None) -> list[str]:
    """Each time the speaker said (its line, the wall-clock moment) equals the clocks the
    pages show then (the time left to ``deadline``, or paused ``paused_s``), and in the clock's form: whole
    minutes said as minutes (1:00 "one minute", 1分; 1:30 "one minute 30", 1分30秒),
    seconds alone only under a minute, no fraction."""
    out = []
    for text, at in said:
        for minutes, seconds in said_times(text):
            total = (minutes or 0) * 60 + (seconds or 0)
            left = time_left(deadline, at, paused_s)
            if left is None:
                out.append(f"said {text!r} ({total:g} s) with no clock shown")
                continue
            whole = all(v is None or float(v).is_integer() for v in (minutes, seconds))
            form = whole and (total < 60 if minutes is None else minutes >= 1 and (seconds is None or 0 < seconds < 60))
            if not form or abs(total - left) > SLACK_S:
                out.append(f"said {text!r} ({total:g} s{'' if form else ', not as a clock says it'}) "
                           f"while the clocks show {clock_form(left)}")
    return out


def tv_text_problems(tv: dict[str, Any]) -> list[str]:
    """No visible text on the TV below ``TV_MIN_PX`` (screen-reader text aside)."""
    return [f"tv {t['where']}: {t['px']:g} px: {t['text'][:60]!r}"
            for t in tv["texts"] if not t["sr"] and t["px"] < TV_MIN_PX]


def night_problems(first: dict[str, list[str]], second: dict[str, list[str]]) -> list[str]:
    """By night each page the same in two deals (its distinct snapshots, in order), and
    every phone the same as every other."""
    out = []
    if not first or not second:
        return ["no night was seen"]
    for page in sorted(set(first) | set(second)):
        if first.get(page) != second.get(page):
            out.append(f"{page}: {first.get(page)} ≠ {second.get(page)}")
    for night in (first, second):
        phones = {p: snaps for p, snaps in night.items() if p.startswith("phone:")}
        if len({tuple(s) for s in phones.values()}) > 1:
            out.append(f"the phones differ by night: {phones}")
    return out
