"""Configuration: YAML files validated against one schema, with errors that
name the file, the line and the problem.

The schema below is the single source of the settings and their defaults,
assembled from parts: the table's own settings here, each device's
(``hardware.nfc_reader.SETTINGS`` with the supervisor's ``retry_s``,
``hardware.panel.SETTINGS``) and each game's (``settings`` on its engine
class, under ``games.<game>``), all in the vocabulary of
``companion.core.settings``.  A file is checked once, here: every value by
its field's check, then every section's check over the merged result (two
panel pins on one GPIO), each refusal naming the file and line.  The parts
built from the result read it without checking it again.

``config/companion.yaml`` documents the same values (a test keeps them
equal).  Loading layers: schema defaults ← each file given, in order ←
overrides (a table script's ``config:``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from companion.core import settings, tags
from companion.core.settings import Field, choice, is_, number, optional, whole
from hardware import nfc_reader, panel
from mqtt import settings as mqtt_settings

MAX_FILE_BYTES = 256 * 1024  # a config is a few kB; refuse anything absurd before parsing


class ConfigError(Exception):
    """A bad setting.  ``str()`` reads ``file:line: problem``."""

    def __init__(self, file: str, line: int | None, problem: str) -> None:
        self.file, self.line, self.problem = file, line, problem
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {problem}")


# ------------------------------------------------------------------ schema
# The vocabulary (Field and the small checks) is companion.core.settings, so
# that each game and device declares its own part; this module adds the
# table's own settings and assembles the one schema.
def _names(v: Any) -> str | None:
    if not isinstance(v, dict):
        return f"must be a mapping colour: name, not {v!r}"
    for colour, name in v.items():
        if colour not in tags.COLOURS:
            return f"{colour!r} is not a player colour ({', '.join(tags.COLOURS)})"
        if not isinstance(name, str) or not tags.valid_player_name(name):
            return f"name for {colour} must be lower-case letters, digits or '-', not {name!r}"
    return None


def _extra_players(v: Any) -> str | None:
    if not isinstance(v, list) or not all(isinstance(n, str) and tags.valid_player_name(n) for n in v):
        return f"must be a list of lower-case names, not {v!r}"
    if len(v) > 64:
        return f"lists {len(v)} players; at most 64"
    if twice := next((n for i, n in enumerate(v) if n in v[:i]), None):
        return f"lists {twice} twice"
    if colour := next((n for n in v if n in tags.COLOURS), None):
        return f"lists {colour}, whose card player/{colour} is a colour's seat already"
    return None


def _one_name_per_seat(players: Mapping[str, Any]) -> settings.Problem | None:
    """Every seat (a colour, an extra player) answers to a name of its own,
    which is no other seat's id either: the engines know players by name, and
    a line, a score or a page for that name must find one seat, never
    guess.  Names are lower-case only, so comparing them as
    written compares them regardless of case."""
    names, extra = players["names"], players["extra"]
    seats = {**{c: names.get(c, c) for c in tags.COLOURS}, **{e: e for e in extra}}  # id → name
    keys = ("names", "extra") if extra else ("names",)
    called: dict[str, str] = {}  # name → the seat answering to it
    for seat, name in seats.items():
        if name in called:
            return settings.Problem(keys, f"give {called[name]} and {seat} the same name {name!r}: "
                                          "each seat needs a name of its own")
        called[name] = seat
    for seat, name in seats.items():
        if name != seat and name in seats:
            return settings.Problem(keys, f"name {seat} {name!r}, the id of the seat {name} "
                                          f"(player/{name}): each seat needs a name no other seat has")
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


_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+|[A-Za-z0-9]([A-Za-z0-9.-]{0,252}))(:[0-9]{1,5})?")


def _hosts(v: Any) -> str | None:
    if not isinstance(v, list) or len(v) > 32 or not all(isinstance(h, str) and _HOST.fullmatch(h) for h in v):
        return ("must be a list of up to 32 host names or addresses the pages are reached by "
                f"(e.g. [table.example.org, 192.168.1.20]), not {v!r}")
    return None


def _mirror(v: Any) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str) or not v.startswith("/"):
        return f"must be the absolute path of a folder on a second device (e.g. /media/companion-mirror/companion), not {v!r}"
    return None


def _games() -> dict[str, Any]:
    """Each game's own section (``settings`` on its engine class), under its name."""
    from companion.games import GAMES

    return {cls.game: cls.settings for cls in GAMES if cls.settings}


SCHEMA: dict[str, Any] = {
    "language": Field("en", choice(*tags.LANGUAGES), "narration language: en | ja"),
    "seed": Field(None, optional(whole(0, 2 ** 63 - 1)), "fixes random choices (jitter); none: chosen once per journal"),
    "state_dir": Field(None, optional(is_(str, "a path")), "journal and caches; default $STATE_DIRECTORY or ./state"),
    "players": settings.Section({
        "names": Field({}, _names, "colour → name, e.g. {red: aki}"),
        "extra": Field([], _extra_players, "player cards beyond the 8 colours: player/<name>"),
    }, check=_one_name_per_seat),
    "journal": {
        "mirror": Field(None, _mirror, "a folder on a second device (a USB stick): every input also written there"),
    },
    "reader": {
        "backend": Field("nfc", choice("nfc", "simulated"), "nfc (nfcpy) | simulated (typed in the terminal)"),
        "tag_map": Field("tags.yaml", is_(str, "a path"), "UID → identity file, relative to this config file"),
        **nfc_reader.SETTINGS,
    },
    "panel": {
        "backend": Field("gpio", choice("gpio", "mock"), "gpio | mock (gpiozero's MockFactory: no Pi needed)"),
        **panel.SETTINGS,
    },
    "web": {
        "listen": Field("auto", _listen, "HOST:PORT for the pages; auto: 0.0.0.0:8080 on a Pi, off elsewhere; "
                        "null: off"),
        "pair_window_s": Field(30.0, number(5, 300), "how long after a phone asks a player may tap their card"),
        "hosts": Field([], _hosts, "names the pages are served under beyond the Pi's own (its host name, "
                       "<host>.local, its addresses, localhost); any other Host gets 421"),
    },
    "mqtt": mqtt_settings.SETTINGS,
    "voice": {
        "backend": Field("tts", choice("tts", "console", "silent"),
                         "tts (the engines below, cached WAVs) | console | silent"),
        "rate": Field(150, number(60, 400), "words per minute"),
        "volume": Field(0.8, number(0, 1), "0.0 (silent) to 1.0 (full)"),
        # YAML reads a bare `null` as nothing: the same as the word "null" (no sound card)
        "player": Field("aplay", lambda v: None if v is None else choice("aplay", "null")(v),
                        "aplay | null (no sound card: lines take their time but nothing plays)",
                        read=lambda v: "null" if v is None else v),
        "device": Field("default", is_(str, "an ALSA device name"),
                        "ALSA device, e.g. plughw:CARD=Headphones,DEV=0 (`aplay -L` lists them)"),
        "cache_dir": Field(None, optional(is_(str, "a path")), "the WAV cache; null: <state_dir>/voice-cache"),
        "pack_dir": Field(None, optional(is_(str, "a path")),
                          "a folder of recorded lines named <key>.wav: they replace speech line by line"),
        "masking_volume": Field(0.3, number(0, 1), "the night's table-tapping sound, 0.0 to 1.0"),
        # per language; a missing engine falls back to espeak (said at start and by doctor)
        "engine": {
            "ja": Field("openjtalk", choice("openjtalk", "espeak"), "openjtalk (the [voice] extra) | espeak"),
            "en": Field("piper", choice("piper", "espeak"), "piper (the [voice] extra) | espeak"),
        },
    },
    "games": _games(),
}


def defaults(schema: Mapping[str, Any] = SCHEMA) -> dict[str, Any]:
    return settings.defaults(schema)


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


# libyaml's parser where PyYAML was built with it (Debian's and the wheels are): its node
# tree keeps the same line numbers, and a settings file is composed in 0.3 ms rather than
# 11 ms — which every start, `companion scores` and `doctor` pay for each file they read.
# A file it refuses is read again by PyYAML's own parser, whose words say more ("found
# character '\t'", where libyaml's leave the tab out): the error a person reads is its.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def compose(text: str, name: str) -> yaml.Node | None:
    """YAML text → node tree, or a ConfigError with the line."""
    _refuse_deep_nesting(text, name)
    try:
        node = yaml.compose(text, Loader=LOADER)
    except (yaml.YAMLError, RecursionError):
        node = _compose_slowly(text, name)
    if node is not None:
        _refuse_aliases(node, name)
    return node


def _compose_slowly(text: str, name: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
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


def as_written(node: yaml.Node, file: str) -> Any:
    """A scalar as the text written in the file, anything else as ``plain``:
    for tag UIDs, which YAML 1.1 reads as numbers when they are digits only
    (``04123456`` is the octal 1091374, ``04:11:22:33`` base 60)."""
    value = plain(node, file)  # still refuses YAML tags and NUL characters
    return node.value if isinstance(node, yaml.ScalarNode) else value


_COLLECTION_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}
_PLAIN_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null")}


Provenance = dict[str, tuple[str, int]]  # a setting's path → (file, line) that set it last, oldest first


def _merge(target: dict[str, Any], node: yaml.Node, schema: Mapping[str, Any], file: str, path: str,
           set_at: Provenance) -> None:
    if not isinstance(node, yaml.MappingNode) or node.tag not in _COLLECTION_TAGS:
        raise ConfigError(file, _line(node), settings.message(path or "the file", "must be a mapping of settings"))
    seen: set[str] = set()
    for knode, vnode in node.value:
        if not isinstance(knode, yaml.ScalarNode):
            raise ConfigError(file, _line(knode), "a setting's name must be a plain word, not a list or mapping")
        key = plain(knode, file)
        where = settings.join(path, key)
        if key in seen:
            raise ConfigError(file, _line(knode), f"{where} is given twice")
        seen.add(key)
        if key not in schema:
            raise ConfigError(file, _line(knode), settings.unknown(where, schema))
        spec = schema[key]
        if isinstance(spec, dict):
            _merge(target[key], vnode, spec, file, where, set_at)
            continue
        value = plain(vnode, file)
        if problem := spec.check(value):
            raise ConfigError(file, _line(vnode), _short(settings.message(where, problem), 300))
        target[key] = spec.read(value) if spec.read else value
        set_at.pop(where, None)
        set_at[where] = (file, _line(vnode))


def _check_sections(cfg: Mapping[str, Any], set_at: Provenance) -> None:
    """The checks over whole sections (two panel pins on one GPIO), once
    every file is merged; the line is that of the setting concerned set last."""
    for keys, problem in settings.section_problems(SCHEMA, cfg):
        file, line = next((set_at[k] for k in reversed(set_at) if k in keys), ("the defaults", 0))
        raise ConfigError(file, line or None, _short(settings.message(keys, problem), 300))


def merge_node(cfg: dict[str, Any], node: yaml.Node | None, name: str) -> None:
    """Check a node of settings against the schema and merge it into ``cfg``."""
    if node is not None:
        set_at: Provenance = {}
        _merge(cfg, node, SCHEMA, name, "", set_at)
        _check_sections(cfg, set_at)


def for_command(args: Any) -> dict[str, Any]:
    """The settings a command runs with: the defaults, the installed file,
    each ``--config``, then its ``--state``/``--lang``/``--voice``/``--mqtt`` if it has them."""
    overrides: dict[str, Any] = {}
    if getattr(args, "state", None):
        overrides["state_dir"] = str(args.state)
    if getattr(args, "lang", None):
        overrides["language"] = args.lang
    if getattr(args, "voice", None):
        overrides["voice"] = {"backend": args.voice}
    if getattr(args, "mqtt", None):  # checked like the file's setting: off, or HOST[:PORT]
        overrides["mqtt"] = {"broker": None if args.mqtt == "off" else args.mqtt}
    return load(default_paths() + list(getattr(args, "config", None) or []), overrides)


def load(paths: Iterable[Path | str] = (), overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Defaults, then each file, then ``overrides`` (checked the same way).
    Relative ``reader.tag_map`` is resolved against the file that set it."""
    cfg = defaults()
    set_at: Provenance = {}
    tag_map_from = Path(cfg["reader"]["tag_map"])
    for p in paths:
        path = Path(p)
        node = read_yaml(path)
        if node is None:  # an empty file changes nothing
            continue
        cfg["reader"]["tag_map"] = ""  # so we can tell whether this file sets it
        _merge(cfg, node, SCHEMA, str(path), "", set_at)
        if cfg["reader"]["tag_map"]:
            tag_map_from = path.parent / cfg["reader"]["tag_map"]  # absolute paths stay as they are
        cfg["reader"]["tag_map"] = str(tag_map_from)
    if overrides and (node := yaml.compose(yaml.safe_dump(dict(overrides)), Loader=LOADER)) is not None:
        _merge(cfg, node, SCHEMA, "overrides", "", set_at)
    _check_sections(cfg, set_at)
    return cfg


def load_tag_map(path: Path | str, extra_players: Iterable[str] = ()) -> dict[str, str]:
    """The UID → identity map.  A missing file is an empty map (tags that
    carry NDEF text need none); a bad entry is refused with its line."""
    from companion.games import identities

    path = Path(path)
    if not path.exists():
        return {}
    components = identities()  # the games' cards and components: the core's tags name no game
    node = read_yaml(path)
    if node is None:
        return {}
    name = str(path)
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(name, _line(node), "a tag map must be a mapping UID: identity")
    out: dict[str, str] = {}
    for knode, vnode in node.value:
        uid, ident = as_written(knode, name), plain(vnode, name)
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
