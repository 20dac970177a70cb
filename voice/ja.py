"""Japanese numbers with counters, for engines that read only kana.

espeak-ng reads a digit in Japanese as the bare number: "2にん" comes out
"にー にん" and "3ふん" "さん ふん", where a table hears ふたり and さんぷん.
Counters change the sound of the number before them (いっぷん, ろっぴょう,
はってん) and sometimes the whole word (ひとり, ふたり), so a line's kana
reading cannot spell them in its template: the number is only known when the
line is spoken.  ``kana_numbers`` rewrites every number in a text, with the
counter after it, into the kana a person says; the espeak engine applies it to
Japanese text (Open JTalk reads "2人" right by itself).

The counters the narration uses are ``COUNTERS``; ``voice.cache`` keeps a
number and its counter in one fragment, since the two sound as one word.
"""

from __future__ import annotations

import re

DIGITS = ("ゼロ", "いち", "に", "さん", "よん", "ご", "ろく", "なな", "はち", "きゅう")
TENS = {1: "じゅう", 2: "にじゅう", 3: "さんじゅう", 4: "よんじゅう", 5: "ごじゅう", 6: "ろくじゅう",
        7: "ななじゅう", 8: "はちじゅう", 9: "きゅうじゅう"}
HUNDREDS = {1: "ひゃく", 2: "にひゃく", 3: "さんびゃく", 4: "よんひゃく", 5: "ごひゃく", 6: "ろっぴゃく",
            7: "ななひゃく", 8: "はっぴゃく", 9: "きゅうひゃく"}

# counter as written, in the text or in a kana reading → its plain kana
COUNTER_KANA = {
    "人": "にん", "にん": "にん",
    "分": "ふん", "ふん": "ふん", "ぷん": "ふん",
    "点": "てん", "てん": "てん",
    "票": "ひょう", "ひょう": "ひょう", "ぴょう": "ひょう",
    "回": "かい", "かい": "かい",
    "枚": "まい", "まい": "まい",
    "秒": "びょう", "びょう": "びょう",
    "番目": "ばんめ", "ばんめ": "ばんめ",
    "個": "こ", "こ": "こ",  # Demagogos' gems
}
COUNTERS = tuple(sorted(COUNTER_KANA, key=len, reverse=True))  # longest first, for matching
# The last unit of the number (1–9, or 10 for a round ten) and the counter, said
# together, where that is not simply the number's kana + the counter's.
_UNIT = {
    "にん": {4: "よにん"},
    "ふん": {1: "いっぷん", 3: "さんぷん", 4: "よんぷん", 6: "ろっぷん", 8: "はっぷん", 10: "じゅっぷん"},
    "てん": {1: "いってん", 8: "はってん", 10: "じゅってん"},
    "ひょう": {1: "いっぴょう", 3: "さんびょう", 6: "ろっぴょう", 8: "はっぴょう", 10: "じゅっぴょう"},
    "かい": {1: "いっかい", 6: "ろっかい", 8: "はっかい", 10: "じゅっかい"},
    "こ": {1: "いっこ", 6: "ろっこ", 8: "はっこ", 10: "じゅっこ"},
}
_NUMBER = re.compile(r"(\d+)(" + "|".join(map(re.escape, COUNTERS)) + ")?")


def number(n: int) -> str:
    """0–9999 in kana (ごひゃくさんじゅうに); larger numbers digit by digit."""
    if n < 10:
        return DIGITS[n]
    if n >= 10000:
        return "".join(DIGITS[int(d)] for d in str(n))
    out = ""
    thousands, rest = divmod(n, 1000)
    if thousands:
        out += {1: "せん", 3: "さんぜん", 8: "はっせん"}.get(thousands, DIGITS[thousands] + "せん")
    hundreds, rest = divmod(rest, 100)
    if hundreds:
        out += HUNDREDS[hundreds]
    tens, ones = divmod(rest, 10)
    if tens:
        out += TENS[tens]
    if ones:
        out += DIGITS[ones]
    return out


def count(n: int, counter: str) -> str:
    """``n`` followed by ``counter``, as said: count(2, "人") == "ふたり"."""
    kana = COUNTER_KANA[counter]
    if kana == "にん" and n in (1, 2):
        return ("ひとり", "ふたり")[n - 1]
    if n == 0 or n >= 10000 or n % 100 == 0:
        return number(n) + kana
    if n % 10:
        unit, stem = n % 10, number(n - n % 10) if n >= 10 else ""
        plain = DIGITS[unit] + kana
    else:  # a round ten: じゅっぷん, にじゅってん
        tens = n % 100 // 10
        unit, stem = 10, (number(n - n % 100) if n >= 100 else "") + (DIGITS[tens] if tens > 1 else "")
        plain = "じゅう" + kana
    return stem + _UNIT.get(kana, {}).get(unit, plain)


def kana_numbers(text: str) -> str:
    """Every number in ``text`` (with the counter after it, if any) as said."""

    def say(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return count(n, m.group(2)) if m.group(2) else number(n)

    return _NUMBER.sub(say, text)


# How a Japanese speaker names Latin letters and digits one by one (a host name
# to type: Open JTalk would read "companion" as best it could, espeak-ng not at
# all).  c is シイ: Open JTalk reads シー as the loanword スィー ("sea").
LETTERS = dict(zip("abcdefghijklmnopqrstuvwxyz", (
    "エー", "ビー", "シイ", "ディー", "イー", "エフ", "ジー", "エイチ", "アイ", "ジェー", "ケー", "エル", "エム",
    "エヌ", "オー", "ピー", "キュー", "アール", "エス", "ティー", "ユー", "ブイ", "ダブリュー", "エックス",
    "ワイ", "ゼット"), strict=True))
SIGNS = {"-": "ハイフン", "_": "アンダーバー", ".": "ドット", ":": "コロン"}


def spelled(text: str) -> str:
    """``text`` said letter by letter in katakana (digits one by one too), for
    both engines alike: "pi-4" → "ピー・アイ・ハイフン・ヨン"."""
    digits = ("ゼロ", "イチ", "ニ", "サン", "ヨン", "ゴ", "ロク", "ナナ", "ハチ", "キュウ")
    said = [LETTERS.get(c) or SIGNS.get(c) or (digits[int(c)] if c.isdigit() else c) for c in text.lower()]
    return "・".join(said)
