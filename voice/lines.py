"""Narration lines: data files, one per language, keyed by stable ids.

``voice/lines/en.yaml`` maps a key to an English template; ``ja.yaml`` maps a
key to ``{text, kana}`` — the kana reading is what espeak-ng speaks, since it
reads no kanji.  Templates use ``str.format`` fields.  Parameter values are
translated when the language has a ``name.<value>`` line for them (player
colours, tiles, roles, games), lists are joined the language's way, and
``{player: points}`` mappings read as a score list.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from voice.base import Line

LINES_DIR = Path(__file__).resolve().parent / "lines"
# A game package may carry its own lines (companion/games/<game>/lines/<lang>.yaml):
# they are read after the shared file, and a key may be defined only once.
GAME_LINES = Path(__file__).resolve().parent.parent / "companion" / "games"
FALLBACK = "en"
# libyaml's parser where PyYAML has it (its wheels do): the pure-Python one takes
# ~0.1 s of every start for the lines alone (measured on this machine).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def load_lines(lang: str, directory: Path = LINES_DIR) -> dict[str, tuple[str, str]]:
    """key → (text, reading) for one language: ``directory``'s file, and —
    for the shipped lines — every game package's own file."""
    files = [directory / f"{lang}.yaml"]
    if directory == LINES_DIR:
        files += sorted(GAME_LINES.glob(f"*/lines/{lang}.yaml"))
    out: dict[str, tuple[str, str]] = {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            raw = yaml.load(f, Loader=_LOADER) or {}
        for key, value in raw.items():
            if str(key) in out:
                raise ValueError(f"{path}: line {key!r} is defined twice")
            if isinstance(value, dict):
                out[str(key)] = (str(value["text"]), str(value.get("kana") or value["text"]))
            else:
                out[str(key)] = (str(value), str(value))
    return out


@cache
def game_line_keys(game: str, lang: str) -> frozenset[str]:
    """The keys of one game's own lines (its package's ``lines/<lang>.yaml``:
    the package is the game's id with ``_`` for ``-``); empty if it has none."""
    path = GAME_LINES / game.replace("-", "_") / "lines" / f"{lang}.yaml"
    try:
        with open(path, encoding="utf-8") as f:
            return frozenset(str(k) for k in (yaml.load(f, Loader=_LOADER) or {}))
    except FileNotFoundError:
        return frozenset()


_SENTENCE_START = re.compile(r"(^|[.!?。！？]\s*)([a-z])")


def _sentence_case(text: str) -> str:
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), text)


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:  # a template field the engine did not fill
        return "{" + key + "}"


class Narrator:
    def __init__(self, directory: Path = LINES_DIR) -> None:
        self.directory = directory
        self.misses: set[tuple[str, str]] = set()  # (lang, key) not found: tests assert none

    def lines(self, lang: str) -> dict[str, tuple[str, str]]:
        return load_lines(lang, self.directory)

    def _entry(self, key: str, lang: str) -> tuple[str, str, str]:
        table = self.lines(lang)
        if key in table:
            return (*table[key], lang)
        self.misses.add((lang, key))
        fallback = self.lines(FALLBACK)
        if key in fallback:
            return (*fallback[key], FALLBACK)
        return (key, key, lang)

    def __call__(self, key: str, params: Mapping[str, Any], lang: str) -> Line:
        return self.render(key, params, lang)

    def render(self, key: str, params: Mapping[str, Any], lang: str) -> Line:
        text, reading, used = self._entry(key, lang)
        if params:
            text = text.format_map(_Blank({k: self._value(v, used, 0) for k, v in params.items()}))
            reading = reading.format_map(_Blank({k: self._value(v, used, 1) for k, v in params.items()}))
            # A name filled in at the start of a sentence ("{player}, seat {n}.") is
            # a capital there, in any language ("Red, seat 1.", a config name too).
            text, reading = _sentence_case(text), _sentence_case(reading)
        return Line(key=key, text=text, lang=used, reading=reading, params=dict(params))

    # ----------------------------------------------------------- values
    def _name(self, value: str, lang: str, which: int) -> str | None:
        entry = self.lines(lang).get(f"name.{value}")
        return entry[which] if entry else None

    def _value(self, value: Any, lang: str, which: int) -> str:
        if isinstance(value, bool):
            return str(value)
        if isinstance(value, (int, float)):
            return f"{value:g}" if isinstance(value, float) else str(value)
        if isinstance(value, str):
            return self._name(value, lang, which) or value
        if isinstance(value, Mapping):
            value = list(value.items())
        if isinstance(value, (list, tuple)):
            if value and all(isinstance(v, (list, tuple)) and len(v) == 2 for v in value):
                pair = self.lines(lang).get("fmt.score", ("{player} {n}", "{player} {n}"))[which]
                parts = [pair.format(player=self._value(p, lang, which), n=self._value(n, lang, which))
                         for p, n in value]
            else:
                parts = [self._value(v, lang, which) for v in value]
            return self._join(parts, lang, which)
        return str(value)

    def _join(self, parts: list[str], lang: str, which: int) -> str:
        table = self.lines(lang)
        sep = table.get("fmt.list_sep", (", ", ", "))[which]
        last = table.get("fmt.list_and", (" and ", " and "))[which]
        if not parts:
            return table.get("fmt.nobody", ("nobody", "nobody"))[which]
        if len(parts) == 1:
            return parts[0]
        return sep.join(parts[:-1]) + last + parts[-1]
