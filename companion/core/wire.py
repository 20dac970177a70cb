"""The wire a table speaks on MQTT (docs/integrate/mqtt.md, "The contract"; DESIGN.md "MQTT —
contract"), written once: its topics, what a published field may be, and the table's own part
of the events it publishes — every game's ``round_scored`` and ``game_over`` — beside which
each game's manifest declares its own (``companion.core.manifest``, which stands on this).
The outbox publishes, and a venue accepts, exactly these; a venue reads the whole of it as
data (``as_data``/``from_data``: venue/wire.json), never the games themselves."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

KINDS = ("status", "state", "event", "play", "command")  # companion/<table>/<kind>
MAX_PAYLOAD = 64 * 1024  # a venue drops anything larger

# What a published field may be (the venue checks each by its kind: venue/schema.py):
# name: a player's display name; names: a list of them; scores: name → whole number;
# whole: a whole number from ``low``; flag: true/false; word: an engine id;
# words: a list of them; tags: a list of tag identities or role ids; roles: name → a
# role id; counts: id → whole number from 1; choice: one of ``values``.
FIELD_KINDS = ("name", "names", "scores", "whole", "flag", "word", "words", "tags", "roles", "counts", "choice")
RATINGS = ("teams", "places", "winners")  # how a venue ranks a play: venue/league.py's sides


@dataclass(frozen=True)
class Field:
    kind: str
    low: int | None = None  # whole: the least value
    values: tuple[str, ...] = ()  # choice: every value it takes

    def __post_init__(self) -> None:
        if self.kind not in FIELD_KINDS:
            raise ValueError(f"a field is one of {', '.join(FIELD_KINDS)}, not {self.kind!r}")
        if self.kind == "choice" and not self.values:
            raise ValueError("a choice field lists its values")


def name() -> Field:
    return Field("name")


def names() -> Field:
    return Field("names")


def scores() -> Field:
    return Field("scores")


def whole(low: int | None = None) -> Field:
    return Field("whole", low)


def flag() -> Field:
    return Field("flag")


def word() -> Field:
    return Field("word")


def words() -> Field:
    return Field("words")


def roles() -> Field:
    return Field("roles")


def tags() -> Field:
    return Field("tags")


def counts() -> Field:
    """How many of each: a map of ids (a role, a tile) to whole numbers from 1."""
    return Field("counts")


def choice(*values: str) -> Field:
    return Field("choice", values=tuple(values))


@dataclass(frozen=True)
class Event:
    """A TABLE event the table publishes (``companion/<table>/event``): its
    name and its fields, every one required (the log always has them all).
    A venue keeps only these fields: one added here is one a venue shows."""

    name: str
    fields: Mapping[str, Field]


TABLE_EVENTS = (
    Event("round_scored", {"game": word(), "round": whole(0), "points": scores(), "totals": scores()}),
    Event("game_over", {"game": word(), "totals": scores(), "winners": names()}),
)


class Declares(Protocol):
    """What publishes events of its own: a game's manifest (its ``id``, its ``events``)."""

    @property
    def id(self) -> str: ...

    @property
    def events(self) -> tuple[Event, ...]: ...


def topic(table_id: str, kind: str) -> str:
    """``companion/<table_id>/<kind>``: status, state, event, play, command."""
    return f"companion/{table_id}/{kind}"


def events(manifests: Iterable[Declares]) -> dict[str, Event]:
    """Every published event by name: the table's, then each game's.  Two
    games declaring one event with different fields is a mistake in their folders."""
    out = {e.name: e for e in TABLE_EVENTS}
    owner = dict.fromkeys(out, "the table")
    for m in manifests:
        for e in m.events:
            if e.name in out and out[e.name] != e:
                raise ValueError(f"{m.id}: the event {e.name!r} is declared otherwise by {owner[e.name]}")
            out[e.name], owner[e.name] = e, m.id
    return out


def published(manifests: Iterable[Declares]) -> frozenset[str]:
    """The events the broker hears (their TABLE-audience copies only)."""
    return frozenset(events(manifests))


def as_data(declared: Mapping[str, Event], ratings: Mapping[str, str]) -> dict[str, Any]:
    """The published events and each game's rating, JSON-ready: what a venue
    reads (``from_data``) to check what tables send, knowing no game."""
    def field(f: Field) -> dict[str, Any]:
        return {"kind": f.kind, **({"low": f.low} if f.low is not None else {}),
                **({"values": list(f.values)} if f.values else {})}
    return {"events": {n: {k: field(f) for k, f in e.fields.items()} for n, e in declared.items()},
            "ratings": dict(ratings)}


def from_data(data: Mapping[str, Any]) -> tuple[dict[str, Event], dict[str, str]]:
    """``as_data`` read back: the events by name, the ratings by game; a
    field or a rating the wire has no word for raises ValueError."""
    declared = {str(n): Event(str(n), {str(k): Field(str(f["kind"]), f.get("low"), tuple(f.get("values", ())))
                                       for k, f in fields.items()})
                for n, fields in data["events"].items()}
    ratings = {str(g): str(r) for g, r in data["ratings"].items()}
    if bad := sorted(r for r in ratings.values() if r not in RATINGS):
        raise ValueError(f"a play is rated by {', '.join(RATINGS)}, not {bad[0]!r}")
    return declared, ratings
