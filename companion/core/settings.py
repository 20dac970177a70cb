"""The settings vocabulary: fields, their checks, and sections built of them.

Pure, so that the games and the devices (which may import only the core)
declare their own part of the one config schema; ``companion.app.config``
assembles the parts and checks a file once, naming its file and line.

A *check* takes a value and returns a problem (a phrase that reads after the
setting's path: ``must be a number, not 'fast'``) or None.  A ``Section`` is
a mapping name → ``Field`` | section; its optional ``check`` looks at the
section as a whole once every file is merged (two panel pins on one GPIO) and
returns a ``Problem`` naming the settings it is about.

``checked`` applies the same checks to a plain mapping (a device or game
built directly, e.g. by a test), so a rule has one text wherever it is
broken; values the config loader already checked are read with ``read``
and never checked again.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Check = Callable[[Any], "str | None"]


@dataclass(frozen=True)
class Field:
    default: Any
    check: Check  # returns a problem, or None
    doc: str = ""
    read: Callable[[Any], Any] | None = None  # the value as the program uses it, once checked


@dataclass(frozen=True)
class Problem:
    """What a section's check found: the settings concerned (their names in
    the section; a file's line is that of the one set last) and the phrase."""

    keys: tuple[str, ...]
    text: str


class Section(dict[str, Any]):
    """Settings that belong together (a plain dict of fields and sections),
    with an optional check over all of them."""

    def __init__(self, fields: Mapping[str, Any],
                 check: Callable[[Mapping[str, Any]], Problem | None] | None = None) -> None:
        super().__init__(fields)
        self.check = check


Schema = Mapping[str, Any]  # name → Field | Schema (a dict or a Section)


class SettingError(ValueError):
    """A bad setting in a plain mapping; ``str()`` is the same sentence a
    config file would get after its ``file:line:``."""


def message(paths: str | tuple[str, ...], problem: str) -> str:
    """The one way a bad setting is phrased: its path(s), then the problem."""
    return f"{paths if isinstance(paths, str) else ' and '.join(paths)} {problem}"


def unknown(path: str, schema: Schema) -> str:
    return f"unknown setting {path!r} (known here: {', '.join(schema)})"


def join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


# ------------------------------------------------------------------ checks
def is_(kind: type | tuple[type, ...], what: str) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) and kind is not bool:  # bool is an int subclass: True is no number
            return f"must be {what}, not {v!r}"
        return None if isinstance(v, kind) else f"must be {what}, not {v!r}"
    return check


# YAML 1.1 reads these words bare as booleans; quoted ("off") they are text,
# which a switch reads the same way, as a person writing it means it
SWITCH_WORDS = {"on": True, "off": False, "true": True, "false": False, "yes": True, "no": False}


def switch(v: Any) -> str | None:
    """A setting that is on or off: a YAML boolean, or one of its words quoted."""
    if isinstance(v, bool) or (isinstance(v, str) and v.lower() in SWITCH_WORDS):
        return None
    return f"must be on or off (true or false), not {v!r}"


def read_switch(v: Any) -> bool:
    """A value ``switch`` accepted, as the bool it means."""
    return v if isinstance(v, bool) else SWITCH_WORDS[v.lower()]


def choice(*options: Any) -> Check:
    return lambda v: None if v in options else f"must be one of {', '.join(map(str, options))}, not {v!r}"


def number(low: float, high: float) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"must be a number, not {v!r}"
        return None if low <= v <= high else f"must be between {low} and {high}, not {v}"
    return check


def whole(low: int, high: int, what: str = "a whole number") -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int):
            return f"must be {what}, not {v!r}"
        return None if low <= v <= high else f"must be between {low} and {high}, not {v}"
    return check


def optional(check: Check) -> Check:
    return lambda v: None if v is None else check(v)


def range_(low: float, high: float) -> Check:
    """``[min, max]``, both within ``low``..``high``."""
    def check(v: Any) -> str | None:
        if not (isinstance(v, list) and len(v) == 2):
            return f"must be a list of two numbers [min, max], not {v!r}"
        for x in v:
            if problem := number(low, high)(x):
                return problem
        return None if v[0] <= v[1] else f"must be [min, max] with min <= max, not {v}"
    return check


def seconds_list(v: Any) -> str | None:
    if (not isinstance(v, list) or len(v) > 10
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x <= 3600 for x in v)):
        return f"must be a list of up to 10 numbers of seconds, each above 0 and at most 3600, not {v!r}"
    return None


def subset(*options: str) -> Check:
    """A non-empty list drawn from ``options``."""
    def check(v: Any) -> str | None:
        if not isinstance(v, list) or not v or not all(t in options for t in v):
            return f"must be a list drawn from {', '.join(options)}, not {v!r}"
        return None
    return check


# ---------------------------------------------------------------- sections
def defaults(schema: Schema) -> dict[str, Any]:
    return {k: defaults(v) if isinstance(v, dict) else copy.deepcopy(v.default) for k, v in schema.items()}


def section_problems(schema: Schema, values: Mapping[str, Any],
                     path: str = "") -> Iterator[tuple[tuple[str, ...], str]]:
    """Each section check's finding over merged ``values``: (the paths of the
    settings concerned, the problem)."""
    for key, spec in schema.items():
        if isinstance(spec, dict) and isinstance(values.get(key), Mapping):
            yield from section_problems(spec, values[key], join(path, key))
    check = getattr(schema, "check", None)
    if check is not None and (found := check(values)) is not None:
        yield tuple(join(path, k) for k in found.keys), found.text


def checked(schema: Schema, raw: Mapping[str, Any] | None, path: str = "") -> dict[str, Any]:
    """``raw`` over the defaults, every value checked as the config file's
    would be (unknown names refused); raises ``SettingError``."""
    out = defaults(schema)
    _check_into(out, schema, raw or {}, path)
    for keys, problem in section_problems(schema, out, path):
        raise SettingError(message(keys, problem))
    return out


def _check_into(out: dict[str, Any], schema: Schema, raw: Mapping[str, Any], path: str) -> None:
    if not isinstance(raw, Mapping):
        raise SettingError(message(path or "the settings", "must be a mapping of settings"))
    for key, value in raw.items():
        where = join(path, key)
        if key not in schema:
            raise SettingError(unknown(where, schema))
        spec = schema[key]
        if isinstance(spec, dict):
            _check_into(out[key], spec, value, where)
        elif problem := spec.check(value):
            raise SettingError(message(where, problem))
        else:
            out[key] = spec.read(value) if spec.read else value
