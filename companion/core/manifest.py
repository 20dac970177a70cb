"""What a game is, declared once (Home Assistant's ``manifest.json`` is the
model): its id, player counts, components, rule sets and steps — read off its
engine, where they already live — and what only the manifest says: **the
events it publishes** (each field's type, whether required, its bounds) and
how a venue rates its result.  Its names are its lines (``name.game/<id>`` in
its ``lines/<lang>.yaml``: the ``strings.json`` of the model, with the kana
the voice needs).

Each game's folder holds ``manifest.py`` with one ``MANIFEST``
(``companion.games.manifest`` finds it beside the engine).  From the manifests
come the outbox's published set, the venue's per-event checks, Home
Assistant's verdicts (the engine's ``outcomes``, validated here against the
events) and the docs; the wire itself (topics, the table's own events) is
``companion.core.wire``.  Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from companion.core.engine import Engine, Outcome

# What a published field may be (the venue checks each by its kind: venue/schema.py):
# name: a player's display name; names: a list of them; scores: name → whole number;
# whole: a whole number from ``low``; flag: true/false; word: an engine id;
# words: a list of them; tags: a list of tag identities or role ids; roles: name → a
# role id; choice: one of ``values``.
KINDS = ("name", "names", "scores", "whole", "flag", "word", "words", "tags", "roles", "counts", "choice")
RATINGS = ("teams", "places", "winners")  # how a venue ranks a play: venue/league.py's sides


@dataclass(frozen=True)
class Field:
    kind: str
    low: int | None = None  # whole: the least value
    values: tuple[str, ...] = ()  # choice: every value it takes

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"a field is one of {', '.join(KINDS)}, not {self.kind!r}")
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


@dataclass(frozen=True)
class Manifest:
    id: str  # the game card's suffix: game/<id>
    players: tuple[int, int]  # the least and the most
    tag_prefixes: tuple[str, ...]
    components: tuple[str, ...]
    rules: tuple[str, ...]  # its rule cards (rules/<name>)
    steps: tuple[str, ...]
    events: tuple[Event, ...]  # its own published events (the table's own: core.wire.TABLE_EVENTS)
    outcomes: tuple[Outcome, ...]  # which event says who won (Home Assistant's verdict)
    rating: str  # teams | places | winners: how a venue ranks a play of it

    def __post_init__(self) -> None:
        if self.rating not in RATINGS:
            raise ValueError(f"{self.id}: a play is rated by {', '.join(RATINGS)}, not {self.rating!r}")

    @property
    def name_key(self) -> str:
        """Its name's line (en, ja: its folder's lines)."""
        return f"name.game/{self.id}"

    @property
    def published(self) -> frozenset[str]:
        return frozenset(e.name for e in self.events)


def describe(engine: type[Engine], events: tuple[Event, ...], rating: str) -> Manifest:
    """A game's manifest: what its engine already declares, and its events and
    rating.  Each verdict (``outcomes``) must be a published event, its field a
    choice of exactly the verdict's values: else the folder is wrong, said on import."""
    from companion.core.wire import TABLE_EVENTS  # the table's own part of the wire

    m = Manifest(id=engine.game, players=(engine.min_players, engine.max_players),
                 tag_prefixes=tuple(engine.tag_prefixes), components=tuple(engine.components),
                 rules=tuple(engine.known_rules()), steps=tuple(engine.STEPS), events=events,
                 outcomes=tuple(engine.outcomes), rating=rating)
    known = {e.name: e for e in (*TABLE_EVENTS, *events)}
    for o in m.outcomes:
        ev = known.get(o.event)
        if ev is None:
            raise ValueError(f"{m.id}: its verdict {o.event!r} is no published event")
        if o.field is not None and (ev.fields.get(o.field) or Field("word")).values != tuple(o.values):
            raise ValueError(f"{m.id}: {o.event}.{o.field} is not a choice of {list(o.values)}")
    return m
