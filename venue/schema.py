"""Every message the venue hears, checked against the contract (docs/integrate/mqtt.md,
DESIGN.md "MQTT — contract") before anything of it is kept or shown.

``check(topic, payload)`` returns a typed record, or a ``Problem``: one line
saying why the message was refused (logged and counted by the caller, never
stored, never a traceback).  A table may write only its own topics (the
broker's ACL), and here its payload must name the table of its topic too.
Only the contract's keys are kept: a field nobody checked is never shown.
Which events there are, and each one's fields, the games' manifests say
(``companion/games/<game>/manifest.py``, the table's own in
``companion.core.wire``), as data: venue/wire.json, written from them
(``tools/venue_wire.py``), or another such file the venue is handed (``use``).
The venue imports no game: here is only the machinery that checks them.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from companion.core import display_names
from companion.core.wire import KINDS, MAX_PAYLOAD, Field, from_data
from companion.core.wire import Event as Declared

TABLE_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")
WORD = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")  # a game, a step, a team, a verdict: the engines' own ids
# ``~<epoch>`` ends the ids a table publishes once its journal was put back (a restore,
# a recovery: companion.runtime.journal.EPOCH), since its seqs are then given again.
EVENT_ID = re.compile(r"(?P<table>[a-z0-9][a-z0-9-]{0,31})/e/(?P<seq>[0-9]{1,15})\.(?P<n>[0-9]{1,4})(~[0-9a-z]{1,16})?")
PLAY_ID = re.compile(r"(?P<table>[a-z0-9][a-z0-9-]{0,31})/p/(?P<seq>[0-9]{1,15})(~[0-9a-z]{1,16})?")
TAG = re.compile(r"[a-z0-9][a-z0-9_./:-]{0,63}")  # a tag identity (skb/knight/1), a role (girl/human, doppelganger:hunter)
PLAY_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}")
COMMANDS = ("next", "back", "repeat")
MAX_PLAYERS = 32  # more seats than any game has: a list longer than this is not a table's
MAX_NAME = 64
MAX_INT = 10**9


@dataclass(frozen=True)
class Problem:
    why: str

    def __str__(self) -> str:
        return self.why


@dataclass(frozen=True)
class Status:
    table: str
    online: bool | None  # None: the retained status was cleared (the table forgotten)


@dataclass(frozen=True)
class State:
    table: str
    state: dict[str, Any] | None  # the contract's keys only; None: cleared (the table forgotten)


@dataclass(frozen=True)
class Event:
    id: str
    table: str
    t: float
    event: str
    fields: dict[str, Any]  # the event's table fields, the contract's keys only


@dataclass(frozen=True)
class Player:
    name: str
    seat: str
    score: int | None
    winner: bool
    team: str | None
    place: int | None


@dataclass(frozen=True)
class Play:
    id: str
    table: str
    game: str
    evening: int
    play: dict[str, Any]  # the BG Stats record, as the table keeps it
    players: tuple[Player, ...]
    ended: float  # UNIX time the play ended: playDate (UTC) + durationMin

    @property
    def seq(self) -> int:
        m = PLAY_ID.fullmatch(self.id)
        assert m is not None, "checked when made"
        return int(m["seq"])


@dataclass(frozen=True)
class Command:
    table: str
    command: str


Record = Status | State | Event | Play | Command


class _Bad(ValueError):
    pass


WIRE = "wire.json"  # beside this module: what the games of this release publish
_KNOWN: dict[str, tuple[dict[str, Declared], dict[str, str], dict[str, Any]]] = {}  # "wire": (events, ratings, names), replaced whole (never changed in place)


def use(data: Mapping[str, Any] | None) -> None:
    """From now on check by ``data`` (``core.wire.as_data`` with the games'
    names: what ``companion.app.catalogue.venue_wire`` gives), not the file:
    a venue whose tables play games newer than its own release (None: the file again)."""
    if data is None:
        _KNOWN.pop("wire", None)
        return
    events, ratings = from_data(data)
    _KNOWN["wire"] = (events, ratings, dict(data.get("games", {})))


def _known() -> tuple[dict[str, Declared], dict[str, str], dict[str, Any]]:
    """What the games publish — every event a table may send with its fields
    (the table's own and each game's), each game's rating and names — read
    once from venue/wire.json unless the venue was handed another (``use``)."""
    found = _KNOWN.get("wire")
    if found is None:
        use(json.loads(resources.files("venue").joinpath(WIRE).read_text(encoding="utf-8")))
        found = _KNOWN["wire"]
    return found


def names() -> dict[str, Any]:
    """By language, each game's name and its steps' labels (the board's words)."""
    return _known()[2]


def published() -> dict[str, Declared]:
    """Every event a table may publish, by name, with its fields."""
    return _known()[0]


def check(topic: str, payload: bytes) -> Record | Problem:
    """The record ``payload`` on ``topic`` is, or why it is refused."""
    parts = topic.split("/")
    if len(parts) != 3 or parts[0] != "companion":
        return Problem(f"{_shown(topic)}: not a table's topic (companion/<table>/<kind>)")
    _, table, kind = parts
    if not TABLE_ID.fullmatch(table):
        return Problem(f"{_shown(topic)}: the table id is not [a-z0-9-], 1 to 32 characters")
    if kind not in KINDS:
        return Problem(f"{_shown(topic)}: no such topic ({', '.join(KINDS)})")
    if len(payload) > MAX_PAYLOAD:
        return Problem(f"{_shown(topic)}: {len(payload)} bytes, over the {MAX_PAYLOAD} a message may have")
    try:
        if kind == "status":
            return _status(table, payload)
        if kind == "command":
            return _command(table, payload)
        if kind == "state" and payload == b"":
            return State(table, None)
        data = _json(payload)
        if not isinstance(data, dict):
            raise _Bad("not a JSON object")
        if data.get("table") != table:
            raise _Bad(f"its table is {_shown(str(data.get('table')))}, not the topic's {table}")
        if kind == "state":
            return State(table, _state(data))
        if kind == "event":
            return _event(table, data)
        return _play(table, data)
    except _Bad as e:
        return Problem(f"{_shown(topic)}: {e}")


def rating(game: str) -> str | None:
    """How a venue ranks a play of ``game`` (its manifest's ``rating``: teams,
    places or winners), or None for a game this venue does not know."""
    return _known()[1].get(game)


# ------------------------------------------------------------------ kinds
def _status(table: str, payload: bytes) -> Status:
    if payload == b"":
        return Status(table, None)
    if payload not in (b"online", b"offline"):
        raise _Bad("a status is online or offline")
    return Status(table, payload == b"online")


def _command(table: str, payload: bytes) -> Command:
    text = payload.decode("ascii", "replace")
    if text not in COMMANDS:
        raise _Bad(f"a command is {', '.join(COMMANDS)}")
    return Command(table, text)


def _state(d: dict[str, Any]) -> dict[str, Any]:
    out = {
        "game": _opt(d, "game", _word),
        "step": _opt(d, "step", _word),
        "waiting_for": _names(_get(d, "waiting_for"), "waiting_for"),
        "round": _opt(d, "round", lambda v, k: _int(v, k, 0)),
        "totals": _scores(_get(d, "totals"), "totals"),
        "deadline": _opt(d, "deadline", _time),
        "night": _bool(_get(d, "night"), "night"),
        "lang": _get(d, "lang"),
        "online": _bool(_get(d, "online"), "online"),
    }
    if out["lang"] not in ("en", "ja"):
        raise _Bad("lang is en or ja")
    return out


def _event(table: str, d: dict[str, Any]) -> Event:
    ident = _id(d, EVENT_ID, table, "<table>/e/<seq>.<n>[~<epoch>]")
    kind, declared = _get(d, "event"), published()
    if kind not in declared:
        raise _Bad(f"event is one of {', '.join(declared)}")
    t = _time(_get(d, "t"), "t")
    f = {key: _field(_get(d, key), key, spec) for key, spec in declared[kind].fields.items()}
    return Event(ident, table, t, str(kind), f)


def _play(table: str, d: dict[str, Any]) -> Play:
    ident = _id(d, PLAY_ID, table, "<table>/p/<play id>[~<epoch>]")
    game = _word(_get(d, "game"), "game")
    evening = _int(_get(d, "evening"), "evening", 0)
    record = _get(d, "play")
    if not isinstance(record, dict):
        raise _Bad("play is the BG Stats record (an object)")
    play = _record(record)
    raw = _get(d, "players")
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_PLAYERS:
        raise _Bad(f"players is a list of 1 to {MAX_PLAYERS} players")
    players = tuple(_player(p, i) for i, p in enumerate(raw))
    names = [display_names.fold(p.name) for p in players]  # one person: the table's own test
    if len(set(names)) != len(names):
        raise _Bad("two players have the same name (the league would count one person twice)")
    if len({p.seat for p in players}) != len(players):
        raise _Bad("two players have the same seat")
    if sorted(p.name for p in players) != sorted(p["name"] for p in play["players"]):
        raise _Bad("players and the play's record name different players")
    started = datetime.strptime(play["playDate"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()
    return Play(ident, table, game, evening, play, players, started + 60.0 * play["durationMin"])


def _record(r: dict[str, Any]) -> dict[str, Any]:
    """The BG Stats record as companion/runtime/plays.py makes it (its keys only)."""
    rules = _words(_get(r, "rules"), "play.rules")
    date = _get(r, "playDate")
    if not isinstance(date, str) or not PLAY_DATE.fullmatch(date):
        raise _Bad("play.playDate is YYYY-MM-DD HH:MM:SS (UTC)")
    try:
        datetime.strptime(date, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        raise _Bad("play.playDate is not a date") from None
    duration = _int(_get(r, "durationMin"), "play.durationMin", 0)
    raw = _get(r, "players")
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_PLAYERS:
        raise _Bad(f"play.players is a list of 1 to {MAX_PLAYERS} players")
    players = []
    for i, p in enumerate(raw):
        where = f"play.players[{i}]"
        if not isinstance(p, dict):
            raise _Bad(f"{where} is not an object")
        player = {"name": _name(_get(p, "name", where), f"{where}.name"),
                  "score": _int(_get(p, "score", where), f"{where}.score"),
                  "winner": _bool(_get(p, "winner", where), f"{where}.winner"),
                  "startPlayer": _bool(_get(p, "startPlayer", where), f"{where}.startPlayer"),
                  "sourcePlayerId": _word(_get(p, "sourcePlayerId", where), f"{where}.sourcePlayerId")}
        if "role" in p:
            role = p["role"]
            if not isinstance(role, str) or not TAG.fullmatch(role):
                raise _Bad(f"{where}.role is a role id (Madness Hour's: girl/human)")
            player["role"] = role
        players.append(player)
    return {"rules": rules, "playDate": date, "durationMin": duration, "players": players}


def _player(p: Any, i: int) -> Player:
    where = f"players[{i}]"
    if not isinstance(p, dict):
        raise _Bad(f"{where} is not an object")
    return Player(name=_name(_get(p, "name", where), f"{where}.name"),
                  seat=_word(_get(p, "seat", where), f"{where}.seat"),
                  score=_opt(p, "score", _int, where),
                  winner=_bool(_get(p, "winner", where), f"{where}.winner"),
                  team=_opt(p, "team", _word, where),
                  place=_opt(p, "place", lambda v, k: _int(v, k, 1), where))


# ------------------------------------------------------------------ values
def _field(v: Any, key: str, spec: Field) -> Any:
    """A published event's field, checked by the kind its game declares (core.manifest)."""
    if spec.kind == "choice":
        return _one_of(v, key, spec.values)
    if spec.kind == "whole":
        return _int(v, key) if spec.low is None else _int(v, key, spec.low)
    if spec.kind == "tags":
        return _words(v, key, TAG)
    if spec.kind == "roles":
        if not isinstance(v, dict) or len(v) > MAX_PLAYERS:
            raise _Bad(f"{key} maps at most {MAX_PLAYERS} names to role ids")
        return {_name(k, key): _words([x], f"{key}[{k!r}]", TAG)[0] for k, x in v.items()}
    if spec.kind == "counts":
        if not isinstance(v, dict) or len(v) > MAX_PLAYERS:
            raise _Bad(f"{key} maps at most {MAX_PLAYERS} ids to counts")
        return {_word(k, f"{key} id"): _int(n, f"{key}[{k!r}]", 1) for k, n in v.items()}
    check = {"name": _name, "names": _names, "scores": _scores, "flag": _bool, "word": _word, "words": _words}
    return check[spec.kind](v, key)


def _constant(name: str) -> Any:
    raise _Bad(f"{name} is not a JSON number")


# one decoder for every message: ``json.loads`` with an option builds a decoder (and its scanner) per call
_DECODER = json.JSONDecoder(parse_constant=_constant)


def _json(payload: bytes) -> Any:
    try:
        return _DECODER.decode(payload.decode("utf-8"))
    except UnicodeDecodeError:
        raise _Bad("not UTF-8") from None
    except RecursionError:
        raise _Bad("nested too deep") from None
    except ValueError as e:
        if isinstance(e, _Bad):
            raise
        raise _Bad("not JSON") from None


def _get(d: dict[str, Any], key: str, where: str = "") -> Any:
    if key not in d:
        raise _Bad(f"{where + '.' if where else ''}{key} is missing")
    return d[key]


def _opt(d: dict[str, Any], key: str, fn: Any, where: str = "") -> Any:
    value = _get(d, key, where)
    return None if value is None else fn(value, f"{where + '.' if where else ''}{key}")


def _id(d: dict[str, Any], pattern: re.Pattern[str], table: str, form: str) -> str:
    ident = _get(d, "id")
    m = pattern.fullmatch(ident) if isinstance(ident, str) else None
    if m is None:
        raise _Bad(f"id is {form}")
    if m["table"] != table:
        raise _Bad(f"its id names table {m['table']}, not the topic's {table}")
    return str(ident)


def _int(v: Any, key: str, low: int = -MAX_INT) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= MAX_INT:
        raise _Bad(f"{key} is a whole number from {low}")
    return v


def _bool(v: Any, key: str) -> bool:
    if not isinstance(v, bool):
        raise _Bad(f"{key} is true or false")
    return v


def _time(v: Any, key: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 < v < 2**33:
        raise _Bad(f"{key} is a UNIX time in seconds")
    return float(v)


def _word(v: Any, key: str) -> str:
    if not isinstance(v, str) or not WORD.fullmatch(v):
        raise _Bad(f"{key} is an id ([a-z0-9_.-], at most 64)")
    return v


def _one_of(v: Any, key: str, allowed: tuple[str, ...]) -> str:
    if v not in allowed:
        raise _Bad(f"{key} is one of {', '.join(allowed)}")
    return str(v)


def _words(v: Any, key: str, pattern: re.Pattern[str] = WORD) -> list[str]:
    if not isinstance(v, list) or len(v) > MAX_PLAYERS or not all(isinstance(x, str) and pattern.fullmatch(x)
                                                                   for x in v):
        raise _Bad(f"{key} is a list of at most {MAX_PLAYERS} ids")
    return list(v)


def _name(v: Any, key: str) -> str:
    """A player's display name: printable, 1 to 64 characters, no control or
    formatting characters (a right-to-left override would garble the board)."""
    if not isinstance(v, str) or not 1 <= len(v) <= MAX_NAME or v != v.strip() or any(
            unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") for c in v):
        raise _Bad(f"{key} is a name (1 to {MAX_NAME} printable characters)")
    return v


def _names(v: Any, key: str) -> list[str]:
    if not isinstance(v, list) or len(v) > MAX_PLAYERS:
        raise _Bad(f"{key} is a list of at most {MAX_PLAYERS} names")
    return [_name(x, key) for x in v]


def _scores(v: Any, key: str) -> dict[str, int]:
    if not isinstance(v, dict) or len(v) > MAX_PLAYERS:
        raise _Bad(f"{key} maps at most {MAX_PLAYERS} names to whole numbers")
    return {_name(k, key): _int(x, f"{key}[{k!r}]") for k, x in v.items()}


def _shown(text: str) -> str:
    """A topic or a value as a log line may show it: printable, short."""
    clean = "".join(c if c.isprintable() else "?" for c in text)
    return clean if len(clean) <= 80 else clean[:77] + "..."
