"""Narration lines: complete in both languages, fillable, and speakable by
espeak-ng (Japanese readings in kana only)."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from companion.app import config
from companion.app.catalogue import line_folders
from companion.app.simulate import Simulation, load_script
from conftest import example_scripts
from voice.lines import Narrator, load_lines

ROOT = Path(__file__).resolve().parent.parent
LINES = line_folders()  # the shared lines and every game's
KANJI = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")


def fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def test_both_languages_have_the_same_keys() -> None:
    en, ja = load_lines("en", LINES), load_lines("ja", LINES)
    assert set(en) - set(ja) == set(), "missing in ja"
    assert set(ja) - set(en) == set(), "missing in en"


@pytest.mark.parametrize("key", sorted(load_lines("ja", LINES)))
def test_japanese_reading_is_kana_only_with_the_same_fields(key: str) -> None:
    text, kana = load_lines("ja", LINES)[key]
    assert not KANJI.search(kana), f"{key}: kanji in the reading: {kana}"
    assert fields(text) == fields(kana) == fields(load_lines("en", LINES)[key][0]), key


@pytest.mark.parametrize("script", example_scripts(), ids=lambda p: p.name)
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_line_a_game_says_exists(script: Path, lang: str, tmp_path: Path) -> None:
    overrides, steps, _ = load_script(script)
    cfg = config.load([ROOT / "config" / "companion.yaml"], {**overrides, "language": lang})
    sim = Simulation(cfg, tmp_path, lambda ev: None)
    try:
        for _, kind, value in steps:
            sim.step(kind, value)
        narrator = sim.loop.narrate
        assert isinstance(narrator, Narrator)
        assert narrator.misses == set()
        lines = sim.voice.lines
        assert lines and all(not KANJI.search(line.reading) for line in lines if line.lang == "ja")
    finally:
        sim.close()


def test_names_and_lists_are_translated() -> None:
    n = Narrator()
    line = n.render("table.standings", {"scores": [("red", 3), ("blue", 1)]}, "ja")
    assert line.text == "今夜の合計：赤3点、青1点。"
    assert line.reading == "こんやのごうけい、あか3てん、あお1てん。"
    en = n.render("table.standings", {"scores": {"red": 3, "blue": 1, "green": 0}}, "en")
    assert en.text == "Tonight's totals: Red 3, Blue 1 and Green 0."


def test_unknown_key_falls_back_and_is_recorded() -> None:
    n = Narrator()
    line = n.render("no.such.line", {}, "ja")
    assert line.text == "no.such.line" and ("ja", "no.such.line") in n.misses


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_finding_a_game_in_progress_is_named_by_its_name_not_its_id(lang: str) -> None:
    """Another game card tapped during a game was refused with "Seven-knightsの途中です":
    the refusal names the game as the table says it, in its language."""
    from companion.core.events import Press, Refusal, Tap
    from companion.core.table import Table
    from companion.games import GAMES

    table = Table({g.game: g for g in GAMES}, lang=lang)
    said = ""
    for inp in [Tap("game/seven-knights"), *(Tap(f"player/{c}") for c in ("red", "blue", "green", "yellow")),
                Press("next"), Tap("game/one-night")]:
        try:
            table.handle(inp)
        except Refusal as refusal:
            said = Narrator(line_folders()).render(refusal.key, refusal.params, lang).text
    name = "ミュルマミウスの虜" if lang == "ja" else "Seven Knights Bewitched"
    assert name in said and "seven-knights" not in said.lower()
