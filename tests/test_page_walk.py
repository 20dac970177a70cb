"""The page walk: the pages proved the way the legality walk (test_legal_perft.py)
proves the engines.  One evening on one LiveTable (a real clock): Seven Knights,
Demagogos' Trap, One Night (the seed's edition) and Madness Hour in Japanese, and
One Night Ultimate twice with the same deck (two deals) — every seat's phone,
paired through the virtual reader, and the 1920×1080 TV open in one Chromium the
whole evening, so a line left from an earlier game is caught.  Each game is played
by a seeded policy among the inputs the table takes now (each tried on a copy of
the table first: onward more often, back and gifts seldom): a seat's press and
fields on its phone's own controls, cards on the reader, the panel where no phone
may press.  At every step every page is read as drawn (tests/pagewalk.py) and:

- controls: each phone's enabled controls are exactly what the table takes from
  that seat now (its buttons where it may press, its fields, repeat);
- stale: no line a page was given at an earlier step or game, and gone from the
  table's present, is shown outside the history (a told line fades: 5 s);
- language: every visible text is in the table's language (ja: no Latin words
  but URLs and file formats; en: no kana or kanji);
- clock: every remaining time shown agrees with the deadline the table gives;
- tv_text: no visible text on the TV below 24 px;
- axe: axe-core finds nothing serious or critical (each step's first visit);
- secret: no text the table told one seat alone is visible on any page, its own
  included (there it is held: the secrets' button), not even for a moment;
- past: no line told or refused in answer to an earlier step (or round, game,
  language) is shown outside the history;
- said_clock: every time the speaker says (a turn's or discussion's warning, its
  start, its resumption) equals the clocks the pages show at that moment, in the
  clock's form: 1:00 "one minute" (1分), 1:30 "one minute 30" (1分30秒), seconds
  alone only under a minute;
- by night every page is the same for two deals, and every phone as every other.

The evening is walked once (the first test that needs it) and each property's
test, one per game, asserts what the walk recorded.  Run with ``-s`` to see the
states visited per game and the walk's wall time."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from pagewalk import (
    SEATS,
    Evening,
    Game,
    clock_problems,
    controls_problems,
    language_problems,
    night_problems,
    said_clock_problems,
    secret_problems,
    stale_problems,
    tv_text_problems,
)
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)

FIVE = SEATS[:5]
_ONW_SEED = ("onw/werewolf/1", "onw/werewolf/2", "onw/seer/1", "onw/thief/1", "onw/madman/1", "onw/tanner/1",
             "onw/villager/1")
_ONW_ULTIMATE = ("rules/ultimate", "onw/doppelganger/1", "onw/werewolf/1", "onw/werewolf/2", "onw/seer/1",
                 "onw/robber/1", "onw/troublemaker/1", "onw/hunter/1", "onw/villager/1")

# Daybreak in Ultimate's pool: the alpha wolf (5 players + 3 + its centre werewolf card), the PI,
# the bodyguard (a counted vote's executed named after the reveal) and the curator (artifacts)
_ONW_DAYBREAK = ("rules/ultimate", "onw/alpha-wolf/1", "onw/werewolf/1", "onw/pi/1", "onw/bodyguard/1",
                 "onw/curator/1", "onw/seer/1", "onw/robber/1", "onw/villager/1", "onw/hunter/1")


def players(seats: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"player/{s}" for s in seats)


EVENING = (
    Game("seven-knights", "en", ("game/seven-knights", *players(FIVE)), FIVE),
    Game("demagogos", "en", ("game/demagogos", *players(SEATS)), SEATS, max_steps=400),
    Game("one-night", "ja", ("game/one-night", *_ONW_SEED, *players(FIVE)), FIVE),
    Game("madness-hour", "ja", ("game/madness-hour", *players(SEATS[:4])), SEATS[:4]),
    Game("one-night-ultimate", "en", ("game/one-night", *_ONW_ULTIMATE, *players(FIVE)), FIVE, deal="ultimate"),
    Game("one-night-ultimate-again", "en", ("game/one-night", *_ONW_ULTIMATE, *players(FIVE)), FIVE,
         deal="ultimate"),
    Game("one-night-daybreak", "ja", ("game/one-night", *_ONW_DAYBREAK, *players(FIVE)), FIVE),
)
IDS = [g.id for g in EVENING]


@pytest.fixture(scope="module")
def evening(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Evening]:  # noqa: F811
    started = time.perf_counter()
    walk = Evening(browser, tmp_path_factory.mktemp("page-walk"))
    try:
        for game in EVENING:
            walk.play(game)
        total = time.perf_counter() - started
        print("\npage walk:")
        for gid, p in walk.played.items():
            print(f"  {gid}: {p.steps} inputs {p.inputs}, {len(p.states)} states (phase, step, round), "
                  f"{p.audits} audits, {p.said_times} said times, finished={p.finished}, {p.seconds:.1f} s"
                  + (f", by night {len(p.night)} pages, {sorted({len(v) for v in p.night.values()})} snapshots each"
                     if p.night else ""))
        print(f"  the evening: {total:.1f} s; the checks' parts: "
              + ", ".join(f"{k} {v:.1f} s" for k, v in walk.spent.items()))
        for (prop, gid), what in sorted(walk.found.items()):
            print(f"  FAIL {prop} [{gid}] ({len(what)}):")
            for w in what[:25]:
                print(f"    {w}")
        yield walk
    finally:
        walk.close()


def recorded(evening: Evening, prop: str, game: str) -> None:
    what = evening.found.get((prop, game), [])
    assert not what, f"{len(what)} failures:\n" + "\n".join(what[:40])


@pytest.mark.parametrize("game", IDS)
def test_walk_plays_each_game_to_its_end(evening: Evening, game: str) -> None:
    played = evening.played[game]
    assert played.finished, f"{game}: not finished in {played.steps} inputs; states {sorted(map(str, played.states))}"


@pytest.mark.parametrize("game", IDS)
def test_walk_controls_match_legal(evening: Evening, game: str) -> None:
    recorded(evening, "controls", game)


@pytest.mark.parametrize("game", IDS)
def test_walk_no_stale_text_outside_the_history(evening: Evening, game: str) -> None:
    recorded(evening, "stale", game)


@pytest.mark.parametrize("game", IDS)
def test_walk_every_text_in_the_table_s_language(evening: Evening, game: str) -> None:
    recorded(evening, "language", game)


@pytest.mark.parametrize("game", IDS)
def test_walk_one_clock(evening: Evening, game: str) -> None:
    recorded(evening, "clock", game)


@pytest.mark.parametrize("game", IDS)
def test_walk_tv_text_at_least_24px(evening: Evening, game: str) -> None:
    recorded(evening, "tv_text", game)


@pytest.mark.parametrize("game", IDS)
def test_walk_axe_no_serious_violation(evening: Evening, game: str) -> None:
    recorded(evening, "axe", game)


@pytest.mark.parametrize("game", IDS)
def test_walk_no_secret_shown_unheld(evening: Evening, game: str) -> None:
    recorded(evening, "secret", game)


@pytest.mark.parametrize("game", IDS)
def test_walk_no_told_line_or_refusal_outlives_its_step(evening: Evening, game: str) -> None:
    recorded(evening, "past", game)


@pytest.mark.parametrize("game", IDS)
def test_walk_said_times_are_the_clocks(evening: Evening, game: str) -> None:
    if game.startswith(("madness-hour", "one-night")):  # a timed discussion: its start at least was heard
        assert evening.played[game].said_times, f"{game}: no time said was held against the clocks"
    recorded(evening, "said_clock", game)


@pytest.mark.parametrize("deal", sorted({g.deal for g in EVENING if g.deal}))
def test_walk_by_night_every_page_is_the_same_for_two_deals(evening: Evening, deal: str) -> None:
    """By night a page shows nothing that could differ between deals: each page the same
    in both games of the deal, and every phone the same as every other."""
    first, second = (evening.played[g.id] for g in EVENING if g.deal == deal)
    problems = night_problems(first.night, second.night)
    assert not problems, "\n".join(problems)


# ------------------------------------------- the checks can fail (what the issue saw, drawn by hand)
def drawn(*texts: str, history: bool = False, px: float = 30, lang: str = "en",
          controls: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"texts": [{"text": t, "history": history, "px": px, "sr": False, "where": "#x"} for t in texts],
            "controls": list(controls), "lang": lang}


def test_the_walk_s_checks_catch_what_the_review_saw() -> None:
    """Each property's check, on pages drawn as the review found them, fails; on the
    same pages drawn right, passes (a check that cannot fail proves nothing)."""
    ask = {"more_time": object()}
    now = {"buttons": ("next", "repeat"), "may_press": {"red": False}, "submits": {"red": ask}}
    # any phone ended the discussion for everyone, and back was offered where only next was
    assert len(controls_problems(now, {"phone:red": drawn(controls=("press:back", "press:next", "press:repeat"))},
                                 {"red"})) == 2
    assert controls_problems(now, {"phone:red": drawn(controls=("press:repeat", "submit:more_time"))}, {"red"}) == []
    # the last game's secret on a lit phone; kept in the history it is the past
    boxes = "Treasures lie in boxes 1 and 6."
    assert stale_problems({"phone:red": drawn(boxes)}, {boxes}, set())
    assert not stale_problems({"phone:red": drawn(boxes, history=True)}, {boxes}, set())
    assert not stale_problems({"phone:red": drawn(boxes)}, {boxes}, {boxes})
    # the sage's boxes on the status line of a lit phone (held, they are not drawn)
    assert secret_problems({"phone:red": drawn("Treasures lie in boxes 2 and 5.")}, {"Treasures lie in boxes 2 and 5."})
    assert not secret_problems({"phone:red": drawn("The table told you something: hold to see it.")},
                               {"Treasures lie in boxes 2 and 5."})
    # round 1's refusal in round 2 (the past check is the stale one, given the lines of earlier steps)
    refusal = "A VP bid is from 3, the top bid, to your 7 gems."
    assert stale_problems({"phone:red": drawn(refusal)}, {refusal}, set())
    # English on a Japanese table (a URL is no word); Japanese on an English one
    assert language_problems("ja", {"phone:red": drawn("Your bid: 2.", lang="ja")})
    assert not language_problems("ja", {"phone:red": drawn("入札: 2。", "http://127.0.0.1:8080/", lang="ja")})
    assert language_problems("en", {"tv": drawn("Yellow 黄色")})
    # two clocks: 0:28 under "one minute left"; 1:29 read as "2 minutes left"
    assert clock_problems(100.0 + 28, {"tv": drawn("0:28", "残り1分です")}, 100.0)
    assert clock_problems(100.0 + 89, {"tv": drawn("1:29", "2 minutes left")}, 100.0)
    assert not clock_problems(100.0 + 89, {"tv": drawn("1:29", "1 minute left")}, 100.0)
    assert not clock_problems(100.0 + 28, {"tv": drawn("0:28", "under a minute left", "残り1分未満")}, 100.0)
    assert clock_problems(None, {"tv": drawn("0:28")}, 100.0)  # a clock with no deadline
    # said times against the clocks (a deadline 100 s on from the line): 1:00 said as "60 seconds",
    # 1:46 as "2 minutes", 0:30 as "0.5 minutes", 1:30 as 90秒; a time said with no clock shown
    assert said_clock_problems([("60 seconds left.", 100.0)], 160.0)
    assert said_clock_problems([("2 minutes left in this turn.", 100.0)], 206.0)
    assert said_clock_problems([("Discuss who to execute. You have 0.5 minutes.", 100.0)], 130.0)
    assert said_clock_problems([("残り90秒です。", 100.0)], 190.0)
    assert said_clock_problems([("One minute left.", 100.0)], None)
    assert not said_clock_problems([("One minute left.", 100.0), ("残り1分です。", 100.0)], 160.0)
    assert not said_clock_problems([("Investigators, you have one minute 30: keep the Girl alive, or kill her?",
                                     100.0), ("残り1分30秒です。", 100.0)], 190.0)
    assert not said_clock_problems([("2 minutes 30 left.", 150.0), ("45 seconds left.", 255.0)], 300.0)
    # the cave's captions at 16 px, "On the table" at 22 px
    assert len(tv_text_problems({"texts": drawn("closed", px=16)["texts"] + drawn("On the table", px=22)["texts"]})) == 2
    assert not tv_text_problems(drawn("The cave", px=24))
    # by night a page that differs between deals, or from another phone
    assert night_problems({"phone:red": ["a"], "phone:blue": ["a"]}, {"phone:red": ["b"], "phone:blue": ["b"]})
    assert night_problems({"phone:red": ["a"], "phone:blue": ["b"]}, {"phone:red": ["a"], "phone:blue": ["b"]})
    assert not night_problems({"phone:red": ["a"], "phone:blue": ["a"], "tv": ["t"]},
                              {"phone:red": ["a"], "phone:blue": ["a"], "tv": ["t"]})


def test_finding_a_paused_clock_is_held_against_the_time_it_stands_at() -> None:
    """Paused, the table gives no deadline but the time it goes on from (the play's
    ``paused_s``): the clocks standing at it pass, a clock off it or counting with
    no pause and no deadline fails."""
    paused = {"tv": drawn("Paused 0:30", "under a minute left"), "phone:red": drawn("一時停止中 0:30", "残り1分未満")}
    assert not clock_problems(None, paused, 100.0, paused_s=30.0)
    assert clock_problems(None, paused, 100.0, paused_s=90.0)
    assert clock_problems(None, paused, 100.0)
