"""The TV board tells One Night Werewolf's story, and its result reads as a table
needs it, in a real browser (Playwright, Debian's chromium), each finding by its
own test: each card shown at the reveal beside its player (never before), the
executed and the hunter's shot marked, the deck shown while it is built, the
result's "won"/"lost" and final roles by their names, and the phone's result
table at a phone's width.

One game is played per language — One Night Ultimate for six, three phones and
three pointing (examples/one-night/ultimate-6p-phones-and-taps.yaml: red, the
hunter, is executed and shoots yellow, a werewolf; purple holds the
doppelganger, who copied the villager) — on simulated hardware and virtual
time, the TV (1920×1080) and red's phone (360×740) open on it; the board is
read as drawn after every step, and the tests hold what it showed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from test_web_accessibility import Page, Table, open_page
from test_web_browser import SHOTS, browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)

from conftest import example_script

SCRIPT = example_script("one-night/ultimate-6p-phones-and-taps.yaml")
TV = Page("tv", "/tv", {"width": 1920, "height": 1080})
PHONE = Page("phone", "/", {"width": 360, "height": 740}, seat="red")
# Each final card as the table names it (its edition's names; the doppelganger with the role it became)
CARDS = {
    "en": {"red": "Hunter", "blue": "Tanner", "green": "Villager", "yellow": "Werewolf",
           "purple": "Doppelganger (Villager)", "orange": "Seer"},
    "ja": {"red": "ハンター", "blue": "吊人", "green": "村人", "yellow": "人狼",
           "purple": "ドッペルゲンガー（村人）", "orange": "占い師"},
}
DOPPELGANGER = {"en": "Doppelganger", "ja": "ドッペルゲンガー"}  # shown, the role it became still to come
WORDS = {"en": {"executed": "Executed", "shot": "Shot by the hunter", "won": "won", "lost": "lost", "robber": "Robber"},
         "ja": {"executed": "処刑", "shot": "ハンターに撃たれた", "won": "勝ち", "lost": "負け", "robber": "怪盗"}}
WINNERS = ("red", "green", "purple", "orange")

# The board as drawn: the players list (each row's card and marks), the deck, the result's rows
READ = """() => {
  const text = (e) => (e ? e.textContent.trim() : "");
  const rows = {};
  for (const r of document.querySelectorAll("#scores-section:not([hidden]) #scores tr[data-player]"))
    rows[r.dataset.player] = { card: text(r.querySelector(".card")), marks: text(r.querySelector(".marks")) };
  const deck = document.querySelector("#deck-section").hidden ? [] : [...document.querySelectorAll("#deck li")].map(text);
  const result = document.querySelector("#result-section").hidden ? [] :
    [...document.querySelectorAll("#result tr")].slice(1).map((r) => [...r.cells].map(text));
  return { rows, deck, result };
}"""


@dataclass
class Seen:
    """What the board showed after each step, beside what the table knew then."""

    lang: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    phone: dict[str, int] = field(default_factory=dict)


@pytest.fixture(scope="module", params=["en", "ja"])
def seen(browser: Any, tmp_path_factory: Any, request: Any) -> Iterator[Seen]:  # noqa: F811
    lang = request.param
    pages = {p.name: (p, open_page(browser.new_context(viewport=p.viewport), p)) for p in (TV, PHONE)}
    table = Table(pages, tmp_path_factory.mktemp(f"onw-{lang}"), SCRIPT, lang)
    out = Seen(lang)
    try:
        for kind, value in table.steps:
            table.step(kind, value)
            tv_page, tv = pages["tv"]
            table.caught_up(tv_page, tv)
            engine = table.sim.loop.table.engine
            state = engine.state if engine is not None else None
            out.steps.append({
                "input": f"{kind} {value}", "step": state.step if state else None,
                "revealed": dict(state.revealed) if state else {}, "copied": dict(state.copied) if state else {},
                "executed": list(state.executed) if state else [],
                "board": [line["text"] for line in table.sim.loop.read_side.public().get("board", [])
                          if ".board.deck_" in line["key"]],
                **tv.evaluate(READ)})
        SHOTS.mkdir(parents=True, exist_ok=True)
        tv.screenshot(path=str(SHOTS / f"tv-one-night-result-{lang}.png"))
        phone_page, phone = pages["phone"]
        table.caught_up(phone_page, phone)
        sync_api.expect(phone.locator("#result-section")).to_be_visible()
        out.phone = phone.evaluate("""() => ({ table: document.querySelector('#result').scrollWidth,
                                              page: document.documentElement.scrollWidth, width: innerWidth })""")
        phone.screenshot(path=str(SHOTS / f"phone-onw-result-{lang}.png"), full_page=True)
        yield out
    finally:
        table.close()
        for _, page in pages.values():
            page.context.close()


def playing(seen: Seen) -> list[dict[str, Any]]:
    """The steps after which the game's players list was on the board (the game under way)."""
    return [s for s in seen.steps if s["step"] is not None and s["rows"]]


def test_finding_each_card_shown_stands_beside_its_player_on_the_tv_and_never_before(seen: Seen) -> None:
    cards, checked = CARDS[seen.lang], 0
    for s in playing(seen):
        want = {p: "" for p in s["rows"]}
        for player in s["revealed"]:
            want[player] = cards[player] if player in s["copied"] or player != "purple" else DOPPELGANGER[seen.lang]
        assert {p: r["card"] for p, r in s["rows"].items()} == want, s["input"]
        checked += bool(s["revealed"])
    assert checked >= 6  # the reveal was watched card by card, to the last
    assert {p: r["card"] for p, r in playing(seen)[-1]["rows"].items()} == cards


def test_finding_the_executed_and_the_hunters_shot_are_marked_beside_the_players(seen: Seen) -> None:
    words = WORDS[seen.lang]
    for s in playing(seen):  # executed from the count on; the shot is not decided before the verdict
        assert {p: r["marks"] for p, r in s["rows"].items()} == {
            p: words["executed"] if p in s["executed"] else "" for p in s["rows"]}, s["input"]
    assert any(s["executed"] == ["red"] for s in playing(seen))
    result = {row[1].rstrip(" ★"): row[-1] for row in seen.steps[-1]["result"]}
    assert result == {"Red" if seen.lang == "en" else "赤": words["executed"],
                      "Yellow" if seen.lang == "en" else "黄色": words["shot"],
                      **{n: "" for n in (("Green", "Purple", "Orange", "Blue") if seen.lang == "en"
                                         else ("緑", "紫", "オレンジ", "青"))}}


def test_finding_the_deck_is_on_the_tv_while_it_is_built(seen: Seen) -> None:
    building = [s for s in seen.steps if s["step"] is None and s["board"]]
    assert len(building) >= 9  # a role card at a time, then the seats
    for s in building:
        assert s["deck"] == [line[:1].upper() + line[1:] for line in s["board"]], s["input"]
    assert WORDS[seen.lang]["robber"] in building[-1]["deck"]


def test_finding_the_result_reads_won_or_lost_and_each_final_role_by_its_name(seen: Seen) -> None:
    words, cards = WORDS[seen.lang], CARDS[seen.lang]
    rows = seen.steps[-1]["result"]
    assert [r[0] for r in rows] == [words["won"]] * 4 + [words["lost"]] * 2  # not "Place 5"
    assert sorted(r[2] for r in rows) == sorted(cards.values())  # no raw id ("doppelganger:villager")
    assert all(words["robber"] in s["deck"] for s in playing(seen))  # the edition's name: "Robber", not "Thief"


def test_finding_the_phones_result_table_fits_a_360_px_phone(seen: Seen) -> None:
    assert seen.phone["width"] == 360
    assert seen.phone["table"] <= 360 - 32 and seen.phone["page"] <= 360, seen.phone  # 1rem each side
