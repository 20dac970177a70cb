"""The values an engine is given and gives back: its ``Setup``, a submit
field's ``Ask``, what is ``Legal`` now, what an audience may see (``View``), how its log tells the ``Outcome``, and
its ``Result`` — plain data the table, the runtime and the shell read too."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Setup:
    """What the table decided before the game started."""

    players: tuple[str, ...]  # names in seat order, start player first
    rules: tuple[str, ...] = ()  # rule cards tapped (``rules/advanced`` → "advanced")
    options: Mapping[str, Any] = field(default_factory=dict)  # this game's config section
    cards: tuple[str, ...] = ()  # its components tapped before the start (``Engine.setup_card``)


@dataclass(frozen=True)
class Ask:
    """What a submit field takes: a whole number from ``low`` to ``high``, or
    one of ``choices``; ``label`` is a narration key naming the field.
    ``kind`` ``button``: a field with one value (``low`` = ``high``), that a
    page draws as a button named by its label, pressed to send the value."""

    label: str
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    kind: str = ""

    def check(self, value: Any) -> str | None:
        """Why ``value`` does not fit, or None."""
        if self.choices:
            return None if value in self.choices else f"must be one of {', '.join(self.choices)}"
        if isinstance(value, bool) or not isinstance(value, int):
            return "must be a whole number"
        return None if self.low <= value <= self.high else f"must be from {self.low} to {self.high}"


@dataclass(frozen=True)
class Legal:
    """What an audience may do now: the buttons that do something, the tag
    identities a tap may carry (``player/*``-style patterns allowed), and
    the fields a player may submit."""

    buttons: tuple[str, ...] = ()
    taps: tuple[str, ...] = ()
    submits: Mapping[str, Ask] = field(default_factory=dict)



@dataclass(frozen=True)
class View:
    """What one audience may see now — the table (every page and the TV) or
    one seat (that player's page): ``facts``, JSON-ready (the page's game
    part), and ``lines``, the same facts as labelled lines (narration keys
    with their params, rendered in the table's language by the runtime).
    One value, so a page's facts and its lines cannot tell different things."""

    facts: Mapping[str, Any] = field(default_factory=dict)
    lines: Sequence[tuple[str, dict[str, Any]]] = ()


@dataclass(frozen=True)
class Outcome:
    """Where a game's log says how it ended, for listeners outside the table
    (Home Assistant's verdict entity, mqtt/homeassistant.py): the TABLE event
    that carries it, the field naming the side that won and every value that
    field takes; no field: the event itself is the verdict (``game_over``,
    its ``winners`` in order)."""

    event: str
    field: str | None = None
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Result:
    """A finished game, as the score history keeps it."""

    totals: Mapping[str, int]  # every player, in seat order
    winners: tuple[str, ...]
    roles: Mapping[str, str] = field(default_factory=dict)  # player → role at the end, where a game has roles
    # For a league (docs/integrate/mqtt.md, a play's players): the side each player finished on, where the game has
    # sides ("knights"/"witch", "village"/"werewolf", "winners"/"losers"), and each
    # player's finishing place, where the game ranks its winners (Demagogos' exits).
    teams: Mapping[str, str] = field(default_factory=dict)
    places: Mapping[str, int] = field(default_factory=dict)
