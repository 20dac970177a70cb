"""Seven Knights Bewitched: the narration lines cover every line and refusal
the engine speaks, each fills with the params the engine gives, and the
Japanese ``kana`` reading is kana only (espeak-ng cannot read kanji)."""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Any

import pytest
import yaml

from companion.core.engine import Setup
from companion.core.events import Refusal, Say
from companion.games.seven_knights.engine import SevenKnights
from companion.games.seven_knights.tests.test_seven_knights import (
    COLOURS,
    FULL_GAME,
    VERDICTS,
    feed,
    make,
    parse,
    walk_every_step,
    walk_to_the_witch_holder,
)

ROOT = Path(__file__).resolve().parents[4]
# Every line the table may say: the shared file and each game's own (as the narrator reads them).
EN = {k: v for f in (ROOT / "voice/lines/en.yaml", *sorted(ROOT.glob("companion/games/*/lines/en.yaml")))
      for k, v in yaml.safe_load(f.read_text(encoding="utf-8")).items()}
JA = {k: v for f in (ROOT / "voice/lines/ja.yaml", *sorted(ROOT.glob("companion/games/*/lines/ja.yaml")))
      for k, v in yaml.safe_load(f.read_text(encoding="utf-8")).items()}

# (players, rule cards, inputs first, refused input): one case per engine refusal key
ROUND = ("k1", "next", "k1", "k2", "k3", "k4", "witch", "next", "next", "next")  # basic, 4 players
REFUSALS: list[tuple[int, tuple[str, ...], tuple[str, ...], str]] = [
    (5, (), ("next", "next", "next"), "k7"),  # not_in_tile_set
    (4, ("special",), ("next", "next", "next"), "witch"),  # witch_not_dealt
    (5, (), (), "skb/knight/0"),  # unknown_tile
    (5, (), (), "dt/box/1"),  # not_this_game
    (5, (), (), "orange"),  # unknown_player
    (5, (), (), "red"),  # not_now
    (5, (), ("k1",), "k2"),  # captain_ready
    (5, (), ("next", "next", "next"), "next"),  # captain_tile_first
    (5, (), ("next", "next", "red"), "next"),  # election_unfinished
    (5, (), ("next", "next", "red", "red"), "red"),  # already_recommended
    (5, (), ("next", "next", *[w for p in COLOURS[:5] for w in (p, "red")]), "blue"),  # only_captain_concedes
    (5, (), ("k1", "next"), "next"),  # captain_tile_missing
    (5, (), ("k1", "next", "k1"), "k1"),  # tile_twice
    (4, ("advanced",), ("k1", "next", "k1", "k2", "k3", "k4", "k5"), "k6"),  # too_many_tiles (5 on the table)
    (5, (), ("k1", "next", "k1", "next"), "next"),  # left_out_missing
    (6, (), ("k1", "next", "k1", "k2", "k3", "k4", "witch", "k5", "next"), "next"),  # witch_holder_must_tap
    (6, (), ("k1", "next", "red", "red"), "next"),  # witch_dealt (every tile dealt, the captain conceded)
    (6, (), walk_to_the_witch_holder(), "yellow"),  # captain_holds_a_knight
    (5, (), ("k1", "next", "k1", "k2", "k3", "k4", "k5", "witch", "next", "red"), "red"),  # player_twice
    (4, (), (ROUND * 3)[:-1], "next"),  # game_over
]
SETUP_REFUSALS = [(4, ("basic", "special")), (4, ("easy",)), (5, ("special",))]


def spoken() -> list[tuple[str, dict[str, Any]]]:
    """Every line and refusal the engine speaks across the scripted games, and the board lines it shows."""
    lines: list[tuple[str, dict[str, Any]]] = []
    scripts: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = [
        (5, (), w) for w in walk_every_step()]
    scripts += [(5, (), tuple(w for words in FULL_GAME for w in words))]
    scripts += [(5, (), (v[0], *v[1], "next", *v[2], *v[3], "next")) for v in VERDICTS]
    scripts += [(n, (rule,), ("next", "next", "k1", "next", "k1", "k2", "k3", "k4", "next"))
                for n, rule in [(3, "special"), (4, "special"), (4, "advanced"), (6, "advanced"),
                                (7, "advanced"), (5, "cooperative"), (8, "basic")]]
    scripts += [(5, ("cooperative",), ("k1", "next", "k2", "k1", "next", "k3", "k4", "k5"))]
    scripts += [(5, ("cooperative",), ("k1", "next", "k1", "k2", "k3", "k4", "k5", "next"))]
    scripts += [(6, (), (*walk_to_the_witch_holder(), "green"))]
    scripts += [(6, (), ("next", "next", "red", "red", "blue", "yellow", "green", "red", "yellow", "red",
                         "purple", "red", "orange", "red", "k1", "k1", "k2", "k3", "k4", "k5", "next", "witch",
                         "blue", "yellow", "next"))]  # a conduct note
    scripts += [(5, (), ("k1", "next", "red", "red", "next")), (5, (), ("next", "next", "red")),
                (5, (), ("next", "next", "red", "red", "blue"))]
    for n, rules, words in scripts:
        engine = SevenKnights(Setup(players=COLOURS[:n], rules=rules))
        outputs = engine.start()
        for word in words:
            try:
                outputs += engine.handle(parse(word))
            except Refusal:
                break
            outputs += engine.prompt() + engine.resume()
            lines += list(engine.view().lines)  # the board's lines (the pages', never spoken)
        lines += [(o.key, dict(o.params)) for o in outputs if isinstance(o, Say)]
    # an overridden basic set with two tiles over: both go to the centre
    override = {"tile_sets": {"basic": {4: [f"skb/knight/{i}" for i in range(1, 7)]}}}
    outputs = SevenKnights(Setup(players=COLOURS[:4], options=override)).start()
    lines += [(o.key, dict(o.params)) for o in outputs if isinstance(o, Say)]
    for n, rules, words, bad in REFUSALS:
        engine = make(n, rules)
        feed(engine, *words)
        with pytest.raises(Refusal) as exc:
            engine.handle(parse(bad))
        lines.append((exc.value.key, dict(exc.value.params)))
    for n, rules in SETUP_REFUSALS:
        with pytest.raises(Refusal) as exc:
            SevenKnights.check_setup(COLOURS[:n], rules, {})
        lines.append((exc.value.key, dict(exc.value.params)))
    return [(key, params) for key, params in lines if key.startswith("skb.")]


SPOKEN = spoken()


def test_every_spoken_line_and_refusal_is_drafted_in_both_languages() -> None:
    used = {key for key, _ in SPOKEN}
    assert used <= set(EN), sorted(used - set(EN))
    assert used <= set(JA), sorted(used - set(JA))


def test_no_drafted_line_is_unused() -> None:
    """The scripts above reach every drafted line, so the checks below cover all."""
    ours = {k for k in EN if k.startswith("skb.")}
    assert ours == {k for k in JA if k.startswith("skb.")} == {key for key, _ in SPOKEN}


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("key", sorted(EN))
def test_lines_share_placeholders_and_fill_with_the_engine_params(key: str) -> None:
    texts = [EN[key], JA[key]["text"], JA[key]["kana"]]
    assert placeholders(texts[0]) == placeholders(texts[1]) == placeholders(texts[2])
    for spoken_key, params in SPOKEN:
        if spoken_key == key:
            for text in texts:
                text.format(**params)


KANA_ONLY = re.compile(r"[\u3040-\u309f\u30a0-\u30ff\u3000-\u303f\uff01-\uff1f・ー！？、。「」\s]*")


@pytest.mark.parametrize("key", sorted(JA))
def test_japanese_kana_reading_has_no_kanji_digits_or_latin(key: str) -> None:
    kana = re.sub(r"\{[^}]*\}", "", JA[key]["kana"])
    assert KANA_ONLY.fullmatch(kana), kana


SENTENCE_STARTS_LOWER = re.compile(r"(^|[.!?。！？]\s*)[a-z]")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_no_sentence_starts_with_a_lower_case_name(lang: str) -> None:
    """A colour or a config name (lower case) filled in at the start of a
    sentence is capitalised: "red, seat 1." → "Red, seat 1."."""
    from companion.app.catalogue import narrator as table_narrator

    narrate = table_narrator()
    lines = [*SPOKEN, ("table.player_seated", {"player": "red", "n": 1}),
             ("table.player_seated", {"player": "alice", "n": 2})]
    for key, params in lines:
        line = narrate(key, params, lang)
        assert not SENTENCE_STARTS_LOWER.search(line.text), (key, line.text)
    assert narrate("table.player_seated", {"player": "red", "n": 1}, "en").text == "Red, seat 1."
