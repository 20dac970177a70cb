"""The narration files hold every key the engine says or refuses
with, in both languages, with the same placeholders, and kana readable by espeak-ng."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
import yaml

from companion.core.events import Say
from companion.games.one_night import engine as one_night
from companion.games.one_night import rules as one_night_rules
from companion.games.one_night.night import night_script, turns
from companion.games.one_night.roles import EDITIONS, ROLES, in_edition
from companion.games.one_night.rules import Options

ROOT = Path(__file__).resolve().parents[4]
LINES = ROOT / "companion" / "games" / "one_night" / "lines"  # the game's own lines


def engine_keys() -> set[str]:
    # the game's code: its engine, its read side (views.py), its rules
    source = "".join(path.read_text() for path in sorted(Path(one_night.__file__).parent.glob("*.py")))
    keys = set(re.findall(r'"(onw\.[a-z_.]+[a-z_])"', source))
    for edition in EDITIONS:  # every edition's night, with every role of its box
        for seg in night_script({r: ROLES[r].copies for r in in_edition(edition)}, Options(edition=edition),
                                [0] * len(turns({r: ROLES[r].copies for r in in_edition(edition)}, edition)))[:-1]:
            keys |= {o.key for o in seg.outputs if isinstance(o, Say)}
    keys -= {e.prefix for e in EDITIONS.values()}  # the editions' prefixes, not lines
    keys |= {f"onw.vote.{n}" for n in one_night_rules.VOTE_COUNT}
    keys |= {"onw.discussion.start_one"}
    return keys


def load(lang: str) -> dict[str, object]:
    data = yaml.safe_load((LINES / f"{lang}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_key_the_engine_uses_has_a_line(lang: str) -> None:
    lines = {k: v for k, v in load(lang).items() if k.startswith("onw.")}
    assert engine_keys() - set(lines) == set()
    assert set(lines) - engine_keys() == set()


def test_japanese_lines_have_kana_only_readings_with_the_english_placeholders() -> None:
    en, ja = load("en"), load("ja")
    for key, line in ja.items():
        if not key.startswith("onw."):
            continue
        assert isinstance(line, dict) and set(line) == {"text", "kana"}, key
        assert not re.search(r"[\u4e00-\u9fff]", line["kana"]), key  # no kanji for espeak-ng
        assert fields(line["text"]) == fields(line["kana"]), key
        assert isinstance(en[key], str), key
        assert fields(line["text"]) == fields(str(en[key])), key


def test_spec_lines_are_used_word_for_word() -> None:
    ja = load("ja")
    for key, text in {
        "onw.night.start": "夜が来ました。みなさん眠ってください。",
        "onw.seer.wake": "占い師の人は占いを始めてください。",
        "onw.werewolf.wake": "人狼は仲間を確認してください。",
        "onw.thief.wake": "怪盗は誰かの心を盗んでください。",
        "onw.night.morning": "朝になったので全員目を覚ましてください。",
        "onw.discussion.start": "それでは誰を処刑するか会議をします。制限時間は{minutes}分です。",
    }.items():
        line = ja[key]
        assert isinstance(line, dict) and line["text"].startswith(text)


def test_japanese_night_says_what_the_seed_says_keep_tapping_then_stop_and_do_not_look() -> None:
    """Seed 003: 机を指で叩くなどして音を立て続けます (all night); in the morning
    音を鳴らすのを止め … 再度自分のカードは確認できません — as the English lines say."""
    ja, en = load("ja"), load("en")
    night, morning = ja["onw.night.start"], ja["onw.night.morning"]
    assert isinstance(night, dict) and isinstance(morning, dict)
    assert "机を指で叩く" in night["text"] and "音を立て続け" in night["text"]
    assert "音を鳴らすのを止め" in morning["text"] and "再度自分のカードは確認できません" in morning["text"]
    assert "keep tapping" in str(en["onw.night.start"])
    assert "stop tapping" in str(en["onw.night.morning"]) and "look at their card" in str(en["onw.night.morning"])


@pytest.mark.parametrize(("seconds", "en", "ja"), [
    (30, "Discuss who to execute. You have 30 seconds.", "制限時間は30秒です。"),
    (60, "Discuss who to execute. You have one minute.", "制限時間は1分です。"),
    (90, "Discuss who to execute. You have one minute 30.", "制限時間は1分30秒です。"),
    (180, "Discuss who to execute. You have 3 minutes.", "制限時間は3分です。"),
    (150, "Discuss who to execute. You have 2 minutes 30.", "制限時間は2分30秒です。"),
])
def test_the_discussion_s_length_is_said_as_the_clocks_show_it(seconds: float, en: str, ja: str) -> None:
    """A half-minute setting (discussion_min 0.5, 1.5) starts the clocks at 0:30 or 1:30:
    said "30 seconds" and "one minute 30" (1分30秒), never "0.5 minutes"."""
    start = one_night_rules.start_line(seconds)
    assert said(start, "en") == en and said(start, "ja").endswith(ja)


@pytest.mark.parametrize(("left", "en", "ja"), [
    (10, "10 seconds left.", "残り10秒です。"),
    (60, "One minute left.", "残り1分です。"),
    (70, "One minute 10 left.", "残り1分10秒です。"),
    (120, "2 minutes left.", "残り2分です。"),
    (130, "2 minutes 10 left.", "残り2分10秒です。"),
])
def test_the_time_left_is_said_as_the_clocks_show_it(left: float, en: str, ja: str) -> None:
    """Going on after a pause with one more minute asked at 0:10 the clocks show 1:10:
    "One minute 10 left." (残り1分10秒), not "70 seconds"."""
    line = one_night_rules.warning_line(left)
    assert (said(line, "en"), said(line, "ja")) == (en, ja)


def said(line: Say, lang: str) -> str:
    text = load(lang)[line.key]
    return str(text["text"] if isinstance(text, dict) else text).format(**line.params)
