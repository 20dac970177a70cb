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

from dataclasses import dataclass
from typing import TYPE_CHECKING

# The wire's vocabulary, which a game's manifest declares its events in (its folder imports them from here)
from companion.core.wire import (
    RATINGS,
    TABLE_EVENTS,
    Event,
    Field,
    choice,
    counts,
    flag,
    name,
    names,
    roles,
    scores,
    tags,
    whole,
    word,
    words,
)

if TYPE_CHECKING:
    from companion.core.engine import Engine, Outcome


@dataclass(frozen=True)
class Manifest:
    """A game as every part outside its folder reads it.  What its engine
    declares (id, players, tags, components, rule cards, steps, verdicts) is
    read from the engine when asked, never copied: a role added to a game
    (One Night's ``add_role``) is in its manifest, whoever took it first."""

    engine: type[Engine]
    events: tuple[Event, ...]  # its own published events (the table's own: core.wire.TABLE_EVENTS)
    rating: str  # teams | places | winners: how a venue ranks a play of it

    def __post_init__(self) -> None:
        if self.rating not in RATINGS:
            raise ValueError(f"{self.id}: a play is rated by {', '.join(RATINGS)}, not {self.rating!r}")

    @property
    def id(self) -> str:
        """The game card's suffix: game/<id>."""
        return self.engine.game

    @property
    def players(self) -> tuple[int, int]:
        """The least and the most."""
        return self.engine.min_players, self.engine.max_players

    @property
    def tag_prefixes(self) -> tuple[str, ...]:
        return tuple(self.engine.tag_prefixes)

    @property
    def components(self) -> tuple[str, ...]:
        return tuple(self.engine.components)

    @property
    def rules(self) -> tuple[str, ...]:
        """Its rule cards (rules/<name>)."""
        return tuple(self.engine.known_rules())

    @property
    def steps(self) -> tuple[str, ...]:
        return tuple(self.engine.STEPS)

    @property
    def outcomes(self) -> tuple[Outcome, ...]:
        """Which event says who won (Home Assistant's verdict)."""
        return tuple(self.engine.outcomes)

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
    m = Manifest(engine, events, rating)
    known = {e.name: e for e in (*TABLE_EVENTS, *events)}
    for o in m.outcomes:
        ev = known.get(o.event)
        if ev is None:
            raise ValueError(f"{m.id}: its verdict {o.event!r} is no published event")
        if o.field is not None and (ev.fields.get(o.field) or Field("word")).values != tuple(o.values):
            raise ValueError(f"{m.id}: {o.event}.{o.field} is not a choice of {list(o.values)}")
    return m


__all__ = ["Event", "Field", "Manifest", "choice", "counts", "describe", "flag", "name", "names", "roles", "scores",
           "tags", "whole", "word", "words"]
