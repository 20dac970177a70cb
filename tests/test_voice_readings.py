"""Every Japanese line is read as we mean it, by both engines.

Open JTalk reads a line's text as written; espeak-ng reads its kana reading
(with numbers and counters turned into kana by ``voice.ja``).  The readings
test runs Open JTalk's analysis (``pyopenjtalk.g2p``) over both and requires
the same sounds: a mismatch is a wrong kana reading, or a word Open JTalk's
dictionary reads wrong (fixed in ``voice/openjtalk_dict.csv``).  Spelling
differences that sound alike are folded away first: long vowels written
ー / う / い, the particles は/へ/を, づ/ず, punctuation.

Numbers with counters are checked against readings written down by hand.
"""

from __future__ import annotations

import re
import tempfile

import pytest

from companion.app.catalogue import line_folders
from voice.cache import WavCache
from voice.ja import count, kana_numbers, number
from voice.lines import load_lines
from voice.player import NullPlayer
from voice.render import RenderSettings, ToneRenderer
from voice.tts_voice import TtsVoice, line_entries

E_ROW = "エケゲセゼテデネヘベペメレェ"
O_ROW = "オコゴソゾトドノホボポモヨロョォ"

# By hand: how a Japanese speaker says these (where two are usual, both).
COUNTED = {
    (1, "人"): ["ひとり"], (2, "人"): ["ふたり"], (3, "人"): ["さんにん"], (4, "人"): ["よにん"],
    (7, "人"): ["ななにん", "しちにん"], (10, "人"): ["じゅうにん"], (14, "人"): ["じゅうよにん"],
    (1, "分"): ["いっぷん"], (2, "分"): ["にふん"], (3, "分"): ["さんぷん"], (4, "分"): ["よんぷん"],
    (6, "分"): ["ろっぷん"], (8, "分"): ["はっぷん", "はちふん"], (10, "分"): ["じゅっぷん", "じっぷん"],
    (20, "分"): ["にじゅっぷん", "にじっぷん"],
    (0, "点"): ["ゼロてん", "れいてん"], (1, "点"): ["いってん"], (3, "点"): ["さんてん"],
    (7, "点"): ["ななてん"], (8, "点"): ["はってん"], (10, "点"): ["じゅってん", "じってん"],
    (3, "票"): ["さんびょう"], (6, "票"): ["ろっぴょう"], (2, "票"): ["にひょう"],
    (5, "枚"): ["ごまい"], (3, "番目"): ["さんばんめ"], (30, "秒"): ["さんじゅうびょう"],
}
KANA_COUNTER = {"人": "にん", "分": "ふん", "点": "てん", "票": "ひょう", "枚": "まい", "番目": "ばんめ",
                "秒": "びょう"}


def katakana(s: str) -> str:
    return "".join(chr(ord(c) + 0x60) if "ぁ" <= c <= "ゖ" else c for c in s)


def fold(kana: str) -> str:
    """Katakana as Open JTalk says it, without the spellings that sound alike."""
    k = re.sub(r"[、。，．！？!?・「」（）：:\s’'…]", "", katakana(kana))
    k = k.replace("ヲ", "オ").replace("ヅ", "ズ").replace("ヂ", "ジ")
    k = re.sub(f"([{E_ROW}])[イー]", r"\1", k)
    k = re.sub(f"([{O_ROW}])[ウー]", r"\1", k)
    k = re.sub("([ュ])[ウー]", r"\1", k).replace("ー", "")
    return k.replace("ハ", "ワ").replace("ヘ", "エ")


@pytest.fixture(scope="module")
def g2p():
    pyopenjtalk = pytest.importorskip("pyopenjtalk", reason="Open JTalk (the [voice] extra) is not installed")
    from voice.engines import OPENJTALK_OPTIONS, load_user_dict

    with tempfile.TemporaryDirectory() as tmp:
        load_user_dict(pyopenjtalk, tmp)  # as the engine runs it
        yield lambda text: fold(pyopenjtalk.g2p(text, kana=True, **OPENJTALK_OPTIONS))


def filled(template: str, value: str = "3") -> str:
    return re.sub(r"\{\w+\}", value, template)


def test_every_japanese_line_is_read_as_its_kana_reading_says(g2p):
    wrong = []
    for key, (text, reading) in load_lines("ja", line_folders()).items():
        said_as_written = g2p(filled(text))
        said_from_kana = g2p(kana_numbers(filled(reading)))
        if said_as_written != said_from_kana:
            wrong.append(f"{key}: text → {said_as_written}; kana → {said_from_kana}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("word,reading", [("人狼", "じんろう"), ("怪盗", "かいとう"), ("占い師", "うらないし"),
                                          ("ワンナイト人狼", "わんないとじんろう"), ("長押し", "ながおし")])
def test_the_words_of_our_games_are_read_right_by_open_jtalk(g2p, word, reading):
    assert g2p(word) == fold(reading)


@pytest.mark.parametrize("n,counter", sorted(COUNTED))
def test_numbers_with_counters_in_kana_for_espeak(n, counter):
    assert count(n, counter) in COUNTED[n, counter]
    assert kana_numbers(f"{n}{KANA_COUNTER[counter]}") == count(n, counter)  # as the reading spells it


@pytest.mark.parametrize("n,counter", sorted(COUNTED))
def test_numbers_with_counters_as_open_jtalk_reads_them(g2p, n, counter):
    assert g2p(f"{n}{counter}") in [fold(r) for r in COUNTED[n, counter]]


def test_numbers_alone_in_kana():
    assert [number(n) for n in (0, 3, 10, 11, 20, 42, 99, 100, 300, 608, 1000, 3800)] == [
        "ゼロ", "さん", "じゅう", "じゅういち", "にじゅう", "よんじゅうに", "きゅうじゅうきゅう", "ひゃく",
        "さんびゃく", "ろっぴゃくはち", "せん", "さんぜんはっぴゃく"]
    assert kana_numbers("このゲームは3にんから7にんです。いまは2にんです。") == \
        "このゲームはさんにんからななにんです。いまはふたりです。"


def test_an_assembled_line_keeps_a_number_and_its_counter_in_one_fragment(tmp_path):
    cache = WavCache(tmp_path, ToneRenderer())
    pieces = cache.plan("このゲームは{high}人までです。", "このゲームは2人までです。", lang="ja")
    assert [p.text for p in pieces or [] if p.text] == ["このゲームは", "2人", "までです。"]
    kana = cache.plan("このゲームは{high}にんまでです。", "このゲームは2にんまでです。", lang="ja")
    assert [p.text for p in kana or [] if p.text] == ["このゲームは", "2にん", "までです。"]
    english = cache.plan("{n} players.", "2 players.", lang="en")
    assert [p.text for p in english or [] if p.text] == ["2", "players."]


def test_open_jtalk_is_handed_the_text_as_written_and_espeak_the_kana(tmp_path):
    """Which string each engine gets, on a cue and in an assembled line (no
    engine needed: the tone renderer records what it was given)."""
    from voice.base import Line

    for engine, expect in [("openjtalk", ["取り消しました。", "このゲームは", "2人", "までです。"]),
                           ("espeak", ["とりけしました。", "このゲームは", "2にん", "までです。"])]:
        renderer = ToneRenderer(RenderSettings(engines={"ja": engine}))
        voice = TtsVoice(cache=WavCache(tmp_path / engine, renderer), player=NullPlayer(), packs={},
                         entries=line_entries(line_folders()))
        voice.prepare(Line("undo.done", "取り消しました。", "ja", "とりけしました。"))
        line = Line("refuse.too_many_players", "このゲームは2人までです。", "ja", "このゲームは2にんまでです。",
                    {"high": 2})
        voice.prepare(line)
        assert [text for text, _ in renderer.calls] == expect, engine
