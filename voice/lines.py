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
# The table's lines are the shared folder's (``LINES_DIR``: the table's own)
# and each game's folder of lines, handed in by whoever knows the games (the
# app: companion.app.catalogue): this module names no game and looks for none.
Folders = Path | tuple[Path, ...]  # one folder, or several: the first must have every language
FALLBACK = "en"
# libyaml's parser where PyYAML has it (its wheels do): the pure-Python one takes
# ~0.1 s of every start for the lines alone (measured on this machine).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _folders(folders: Folders) -> tuple[Path, ...]:
    return (folders,) if isinstance(folders, Path) else tuple(folders)


@cache
def load_lines(lang: str, folders: Folders = LINES_DIR) -> dict[str, tuple[str, str]]:
    """key → (text, reading) for one language: the first folder's
    ``<lang>.yaml``, then each other folder's (a game's: a language it has
    no file for falls back to English line by line); a key may be defined
    only once."""
    first, *others = _folders(folders)
    files = [first / f"{lang}.yaml", *(f / f"{lang}.yaml" for f in others if (f / f"{lang}.yaml").exists())]
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
def line_keys(folder: Path, lang: str) -> frozenset[str]:
    """The keys of one folder's ``<lang>.yaml`` (a game's own lines); empty if it has none."""
    try:
        with open(folder / f"{lang}.yaml", encoding="utf-8") as f:
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
    """Lines rendered from ``folders`` (the shared folder alone by default;
    the daemon's has every game's: companion.app.catalogue.line_folders)."""

    def __init__(self, folders: Folders = LINES_DIR) -> None:
        self.directory = _folders(folders)
        self.misses: set[tuple[str, str]] = set()  # (lang, key) not found: tests assert none
        self._tables: dict[str, dict[str, tuple[str, str]]] = {}

    def lines(self, lang: str) -> dict[str, tuple[str, str]]:
        # load_lines' own cache compares the folders' paths at every look-up, and a line
        # looks up each of its values: the table of each language kept here, once found
        if (table := self._tables.get(lang)) is None:
            table = self._tables[lang] = load_lines(lang, self.directory)
        return table

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
