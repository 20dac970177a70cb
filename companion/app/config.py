"""Configuration: YAML files validated against one schema, with errors that
name the file, the line and the problem.

The schema below is the single source of the settings and their defaults;
``config/companion.yaml`` documents the same values (a test keeps them
equal).  Loading layers: schema defaults ← each file given, in order ←
overrides (a table script's ``config:``).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from companion.core import tags

MAX_FILE_BYTES = 256 * 1024  # a config is a few kB; refuse anything absurd before parsing


class ConfigError(Exception):
    """A bad setting.  ``str()`` reads ``file:line: problem``."""

    def __init__(self, file: str, line: int | None, problem: str) -> None:
        self.file, self.line, self.problem = file, line, problem
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {problem}")


# ------------------------------------------------------------------ schema
@dataclass(frozen=True)
class Field:
    default: Any
    check: Callable[[Any], str | None]  # returns a problem, or None
    doc: str = ""
    read: Callable[[Any], Any] | None = None  # the value as the program uses it, once checked


def _is(kind: type | tuple[type, ...], what: str) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) and kind is not bool:  # bool is an int subclass: True is no number
            return f"must be {what}, not {v!r}"
        return None if isinstance(v, kind) else f"must be {what}, not {v!r}"
    return check


def _choice(*options: Any) -> Callable[[Any], str | None]:
    return lambda v: None if v in options else f"must be one of {', '.join(map(str, options))}, not {v!r}"


def _number(low: float, high: float) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"must be a number, not {v!r}"
        return None if low <= v <= high else f"must be between {low} and {high}, not {v}"
    return check


def _optional(check: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    return lambda v: None if v is None else check(v)


def _range(low: float, high: float) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if not (isinstance(v, list) and len(v) == 2):
            return f"must be a list of two numbers [min, max], not {v!r}"
        for x in v:
            if problem := _number(low, high)(x):
                return problem
        return None if v[0] <= v[1] else f"must be [min, max] with min <= max, not {v}"
    return check


def _seconds_list(v: Any) -> str | None:
    if (not isinstance(v, list) or len(v) > 10
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x <= 3600 for x in v)):
        return f"must be a list of up to 10 numbers of seconds, each above 0 and at most 3600, not {v!r}"
    return None


def _names(v: Any) -> str | None:
    if not isinstance(v, dict):
        return f"must be a mapping colour: name, not {v!r}"
    for colour, name in v.items():
        if colour not in tags.COLOURS:
            return f"{colour!r} is not a player colour ({', '.join(tags.COLOURS)})"
        if not isinstance(name, str) or not tags.valid_player_name(name):
            return f"name for {colour} must be lower-case letters, digits or '-', not {name!r}"
    if len(set(v.values())) != len(v):
        return "two colours have the same name"
    return None


def _extra_players(v: Any) -> str | None:
    if not isinstance(v, list) or not all(isinstance(n, str) and tags.valid_player_name(n) for n in v):
        return f"must be a list of lower-case names, not {v!r}"
    if len(v) > 64:
        return f"lists {len(v)} players; at most 64"
    return None


def _targets(v: Any) -> str | None:
    ok = ("106A", "106B", "212F", "424F")
    if not isinstance(v, list) or not v or not all(t in ok for t in v):
        return f"must be a list drawn from {', '.join(ok)}, not {v!r}"
    return None


def _whole(low: int, high: int, what: str = "a whole number") -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int):
            return f"must be {what}, not {v!r}"
        return None if low <= v <= high else f"must be between {low} and {high}, not {v}"
    return check


_pin = _whole(0, 27, "a whole BCM pin number")


def _deck(v: Any) -> str | None:
    if v is None:
        return None
    from companion.core.events import Refusal
    from companion.games.one_night.rules import (  # the engine owns the rule
        CARDS,
        DEFAULT_DECKS,
        Options,
        deck_for,
    )

    if not isinstance(v, dict):
        return f"must be a mapping players: {{role: count}}, not {v!r}"
    cards = [i.split("/")[1] for i in CARDS]  # the cards there are tags for
    for n, comp in v.items():
        if isinstance(n, bool) or not isinstance(n, int) or not isinstance(comp, dict):
            return f"must map a player count to {{role: count}}, not {n!r}: {comp!r}"
        if n not in DEFAULT_DECKS:
            return f"has a deck for {n} players; One Night is for {min(DEFAULT_DECKS)} to {max(DEFAULT_DECKS)}"
        for role, count in comp.items():
            if not isinstance(role, str) or isinstance(count, bool) or not isinstance(count, int):
                return f"for {n} players: {role!r}: {count!r} is not a role and a count"
            if role in cards and not 0 <= count <= cards.count(role):
                return f"for {n} players: {count} {role} cards, but the set has 0 to {cards.count(role)}"
        try:
            deck_for(n, Options(deck={n: comp}))
        except Refusal as e:
            return f"for {n} players: {e.reason}"
    return None


def _tile_sets(v: Any) -> str | None:
    if v is None:
        return None
    from companion.games.seven_knights.rules import parse_options  # the engine owns the rule

    try:
        parse_options({"tile_sets": v})
    except ValueError as e:
        return f"is not a valid tile-set override: {e}"
    return None


def parse_listen(v: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for IPv6) as (host, port); ValueError says why not."""
    host, sep, port = v.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"must be HOST:PORT (e.g. 0.0.0.0:8080), auto or null, not {v!r}")
    return host, int(port)


def _listen(v: Any) -> str | None:
    if v is None or v == "auto":
        return None
    if not isinstance(v, str):
        return f"must be HOST:PORT (e.g. 0.0.0.0:8080), auto or null, not {v!r}"
    try:
        parse_listen(v)
    except ValueError as e:
        return str(e)
    return None


SCHEMA: dict[str, Any] = {
    "language": Field("en", _choice(*tags.LANGUAGES), "narration language: en | ja"),
    "seed": Field(None, _optional(_whole(0, 2 ** 63 - 1)), "fixes random choices (jitter); none: chosen once per journal"),
    "state_dir": Field(None, _optional(_is(str, "a path")), "journal and caches; default $STATE_DIRECTORY or ./state"),
    "players": {
        "names": Field({}, _names, "colour → name, e.g. {red: aki}"),
        "extra": Field([], _extra_players, "player cards beyond the 8 colours: player/<name>"),
    },
    "reader": {
        "backend": Field("nfc", _choice("nfc", "simulated")),
        "device": Field("usb", _is(str, "an nfcpy device path (usb, tty:S0:pn532, tty:AMA0:pn532)")),
        "tag_map": Field("tags.yaml", _is(str, "a path"), "UID → identity file, relative to this config file"),
        "retry_s": Field([1.0, 30.0], _range(0.01, 3600)),
        "poll_s": Field(0.1, _number(0.01, 5)),
        "targets": Field(["106A", "106B", "212F"], _targets, "106A: NTAG/Type 2; 106B; 212F: FeliCa; 424F"),
        "release_misses": Field(3, _whole(1, 50), "failed presence checks in a row that mean 'taken away'"),
        "debounce_s": Field(0.5, _number(0, 10), "a tag back within this is the same tap"),
        "beep": Field(False, _is(bool, "true or false"), "let the reader beep itself (ACR122)"),
    },
    "panel": {
        "backend": Field("gpio", _choice("gpio", "mock")),
        "pins": {
            "next": Field(17, _pin), "back": Field(27, _pin), "repeat": Field(22, _pin),
            "ready": Field(5, _pin), "ok": Field(6, _pin), "error": Field(13, _pin), "buzzer": Field(16, _pin),
        },
        "bounce_s": Field(0.05, _optional(_number(0, 1))),
        "hold_back_s": Field(2.0, _number(0.3, 10)),
    },
    "web": {
        "listen": Field("auto", _listen, "HOST:PORT for the pages; auto: 0.0.0.0:8080 on a Pi, off elsewhere; "
                        "null: off"),
        "pair_window_s": Field(30.0, _number(5, 300), "how long after a phone asks a player may tap their card"),
    },
    "voice": {
        "backend": Field("tts", _choice("tts", "console", "silent")),
        "rate": Field(150, _number(60, 400), "words per minute"),
        "volume": Field(0.8, _number(0, 1)),
        # YAML reads a bare `null` as nothing: the same as the word "null" (no sound card)
        "player": Field("aplay", lambda v: None if v is None else _choice("aplay", "null")(v),
                        read=lambda v: "null" if v is None else v),
        "device": Field("default", _is(str, "an ALSA device name")),
        "cache_dir": Field(None, _optional(_is(str, "a path"))),
        "pack_dir": Field(None, _optional(_is(str, "a path"))),
        "masking_volume": Field(0.3, _number(0, 1)),
        # per language; a missing engine falls back to espeak (said at start and by doctor)
        "engine": {
            "ja": Field("openjtalk", _choice("openjtalk", "espeak"), "openjtalk (the [voice] extra) | espeak"),
            "en": Field("piper", _choice("piper", "espeak"), "piper (the [voice] extra) | espeak"),
        },
    },
    "games": {
        "seven-knights": {
            "start_marker": Field("pass", _choice("pass", "keep")),
            "tile_sets": Field(None, _tile_sets, "override tiles per rule set and player count"),
        },
        "one-night": {
            "window_s": Field(10.0, _number(1, 120)),
            "jitter_s": Field([0.0, 0.0], _range(0, 30)),
            "pace": Field(1.0, _number(0.25, 4)),
            "discussion_min": Field(3, _number(0.5, 30)),
            "warnings_s": Field([60, 10], _seconds_list),
            "masking": Field(True, _is(bool, "true or false")),
            "deck": Field(None, _deck),
        },
        "madness-hour": {
            "turn_s": Field(0, _number(0, 3600), "the turn timer; 0: off"),
            "turn_warning_s": Field(10, _number(0, 600), "seconds before a turn's end at which it is said"),
            "discussion_s": Field(60, _number(5, 1800), "the climax discussion"),
            "warnings_s": Field([30, 10], _seconds_list),
        },
    },
}


def defaults(schema: Mapping[str, Any] = SCHEMA) -> dict[str, Any]:
    return {k: defaults(v) if isinstance(v, dict) else copy.deepcopy(v.default) for k, v in schema.items()}


# ------------------------------------------------------------------ loading
def read_yaml(path: Path) -> yaml.Node | None:
    """Parse a file into a YAML node tree (which keeps line numbers), turning
    every way a file can be bad into a ConfigError naming it."""
    name = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError(name, None, f"file is {size} bytes; a config file must be under {MAX_FILE_BYTES}")
        raw = path.read_bytes()
    except OSError as e:
        raise ConfigError(name, None, f"cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ConfigError(name, line, "not UTF-8 text (save the file as UTF-8)") from None
    return compose(text, name)


def compose(text: str, name: str) -> yaml.Node | None:
    """YAML text → node tree, or a ConfigError with the line."""
    _refuse_deep_nesting(text, name)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        raise ConfigError(name, mark.line + 1 if mark else None, f"broken YAML: {e.problem or e.context}") from None
    except yaml.reader.ReaderError as e:  # a NUL or another control character
        line = text[: e.position].count("\n") + 1
        char = chr(e.character) if isinstance(e.character, int) else e.character
        raise ConfigError(name, line, f"character {char!r} is not allowed in YAML") from None
    except yaml.YAMLError as e:
        raise ConfigError(name, None, f"broken YAML: {_short(str(e))}") from None
    except RecursionError:
        raise ConfigError(name, None, "nested too deeply to be a settings file") from None
    if node is not None:
        _refuse_aliases(node, name)
    return node


MAX_DEPTH = 32  # settings nest four levels; the YAML parser recurses and would overflow far deeper


def _refuse_deep_nesting(text: str, name: str) -> None:
    """Find flow brackets nested absurdly deep before the recursive parser
    does, so the message can name the line (quotes are not tracked: a
    bracket inside a string can only make this stricter)."""
    depth, line = 0, 1
    for ch in text:
        if ch == "\n":
            line += 1
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(name, line, f"nested more than {MAX_DEPTH} levels deep")
        elif ch in "]}":
            depth = max(0, depth - 1)


def _refuse_aliases(root: yaml.Node, name: str) -> None:
    """Settings never need YAML anchors and aliases (&a / *a), and following
    them invites cycles and exponential blow-ups: refuse them outright.  An
    alias is the very node object of its anchor, met a second time."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise ConfigError(name, _line(node), "YAML anchors and aliases (&name, *name) are not supported here")
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_SCALARS = yaml.constructor.SafeConstructor()


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def plain(node: yaml.Node, file: str) -> Any:
    """A node as plain Python, refusing duplicate keys (PyYAML keeps the last
    silently, which would hide a typo'd second setting)."""
    if isinstance(node, yaml.MappingNode | yaml.SequenceNode) and node.tag not in _COLLECTION_TAGS:
        raise ConfigError(file, _line(node), f"YAML tag {node.tag} is not supported here (write plain values)")
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for k, v in node.value:
            key = plain(k, file)
            if isinstance(key, (list, dict)):
                raise ConfigError(file, _line(k), "a key must be a plain value")
            if key in out:
                raise ConfigError(file, _line(k), f"{key!r} is given twice")
            out[key] = plain(v, file)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [plain(v, file) for v in node.value]
    if node.tag not in _PLAIN_TAGS:
        tag = node.tag.removeprefix("tag:yaml.org,2002:")
        raise ConfigError(file, _line(node), f"YAML tag !!{tag} is not supported here (write plain values)")
    try:
        value = _SCALARS.construct_object(node)  # resolves int, float, bool, null, str
    except (ValueError, yaml.YAMLError):  # !!int "twelve", !!float "x"
        tag = node.tag.removeprefix("tag:yaml.org,2002:")
        raise ConfigError(file, _line(node), f"{_short(node.value, 40)!r} is not a valid {tag}") from None
    if isinstance(value, str) and "\0" in value:
        raise ConfigError(file, _line(node), "a NUL character (\\0) is not allowed in a value")
    return value


_COLLECTION_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}
_PLAIN_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null")}


def _merge(target: dict[str, Any], node: yaml.Node, schema: Mapping[str, Any], file: str, path: str) -> None:
    if not isinstance(node, yaml.MappingNode) or node.tag not in _COLLECTION_TAGS:
        raise ConfigError(file, _line(node), f"{path or 'the file'} must be a mapping of settings")
    seen: set[str] = set()
    for knode, vnode in node.value:
        if not isinstance(knode, yaml.ScalarNode):
            raise ConfigError(file, _line(knode), "a setting's name must be a plain word, not a list or mapping")
        key = plain(knode, file)
        where = f"{path}.{key}" if path else str(key)
        if key in seen:
            raise ConfigError(file, _line(knode), f"{where} is given twice")
        seen.add(key)
        if key not in schema:
            known = ", ".join(schema)
            raise ConfigError(file, _line(knode), f"unknown setting {where!r} (known here: {known})")
        spec = schema[key]
        if isinstance(spec, dict):
            _merge(target[key], vnode, spec, file, where)
            continue
        value = plain(vnode, file)
        if problem := spec.check(value):
            raise ConfigError(file, _line(vnode), _short(f"{where} {problem}", 300))
        target[key] = spec.read(value) if spec.read else value


def merge_node(cfg: dict[str, Any], node: yaml.Node | None, name: str) -> None:
    """Check a node of settings against the schema and merge it into ``cfg``."""
    if node is not None:
        _merge(cfg, node, SCHEMA, name, "")


def for_command(args: Any) -> dict[str, Any]:
    """The settings a command runs with: the defaults, the installed file,
    each ``--config``, then its ``--state``/``--lang``/``--voice`` if it has them."""
    overrides: dict[str, Any] = {}
    if getattr(args, "state", None):
        overrides["state_dir"] = str(args.state)
    if getattr(args, "lang", None):
        overrides["language"] = args.lang
    if getattr(args, "voice", None):
        overrides["voice"] = {"backend": args.voice}
    return load(default_paths() + list(getattr(args, "config", None) or []), overrides)


def load(paths: Iterable[Path | str] = (), overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Defaults, then each file, then ``overrides`` (checked the same way).
    Relative ``reader.tag_map`` is resolved against the file that set it."""
    cfg = defaults()
    tag_map_from = Path(cfg["reader"]["tag_map"])
    for p in paths:
        path = Path(p)
        node = read_yaml(path)
        if node is None:  # an empty file changes nothing
            continue
        cfg["reader"]["tag_map"] = ""  # so we can tell whether this file sets it
        _merge(cfg, node, SCHEMA, str(path), "")
        if cfg["reader"]["tag_map"]:
            tag_map_from = path.parent / cfg["reader"]["tag_map"]  # absolute paths stay as they are
        cfg["reader"]["tag_map"] = str(tag_map_from)
    if overrides:
        merge_node(cfg, yaml.compose(yaml.safe_dump(dict(overrides)), Loader=yaml.SafeLoader), "overrides")
    return cfg


def load_tag_map(path: Path | str, extra_players: Iterable[str] = ()) -> dict[str, str]:
    """The UID → identity map.  A missing file is an empty map (tags that
    carry NDEF text need none); a bad entry is refused with its line."""
    from companion.games import all_components

    path = Path(path)
    if not path.exists():
        return {}
    components = all_components()
    node = read_yaml(path)
    if node is None:
        return {}
    name = str(path)
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(name, _line(node), "a tag map must be a mapping UID: identity")
    out: dict[str, str] = {}
    for knode, vnode in node.value:
        uid, ident = plain(knode, name), plain(vnode, name)
        if not isinstance(uid, str) or not tags.valid_uid(uid):
            raise ConfigError(name, _line(knode), f"{uid!r} is not a tag UID (hex, e.g. 04A1B2C3D4E5F6)")
        if not isinstance(ident, str) or not tags.is_known(ident, extra_players, components):
            raise ConfigError(name, _line(vnode), f"{ident!r} is not a known tag identity")
        uid = tags.normalise_uid(uid)
        if uid in out:
            raise ConfigError(name, _line(knode), f"UID {uid} is mapped twice")
        out[uid] = ident
    return out


# The documented defaults in a checkout; an installed package has only the schema's.
SHIPPED = Path(__file__).resolve().parents[2] / "config" / "companion.yaml"  # the checkout root


def shipped_paths() -> list[Path]:
    """The shipped defaults file, where there is one (never the machine's own
    settings: a simulation must give the same log everywhere)."""
    return [SHIPPED] if SHIPPED.exists() else []


def default_paths() -> list[Path]:
    """The shipped defaults, then the installed file if there is one."""
    paths = shipped_paths()
    etc = Path(os.environ.get("COMPANION_CONFIG", "/etc/companion/companion.yaml"))
    if etc.exists() and etc.resolve() != SHIPPED:
        paths.append(etc)
    return paths
