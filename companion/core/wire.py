"""The wire a table speaks on MQTT (docs/integrate/mqtt.md, "The contract"; DESIGN.md "MQTT —
contract"), written once: its topics, and the table's own part of the events
it publishes — every game's ``round_scored`` and ``game_over`` — beside
which each game's manifest declares its own (``companion.core.manifest``).
The outbox publishes, and a venue accepts, exactly these."""

from __future__ import annotations

from collections.abc import Iterable

from companion.core.manifest import Event, Manifest, names, scores, whole, word

KINDS = ("status", "state", "event", "play", "command")  # companion/<table>/<kind>
MAX_PAYLOAD = 64 * 1024  # a venue drops anything larger

TABLE_EVENTS = (
    Event("round_scored", {"game": word(), "round": whole(0), "points": scores(), "totals": scores()}),
    Event("game_over", {"game": word(), "totals": scores(), "winners": names()}),
)


def topic(table_id: str, kind: str) -> str:
    """``companion/<table_id>/<kind>``: status, state, event, play, command."""
    return f"companion/{table_id}/{kind}"


def events(manifests: Iterable[Manifest]) -> dict[str, Event]:
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


def published(manifests: Iterable[Manifest]) -> frozenset[str]:
    """The events the broker hears (their TABLE-audience copies only)."""
    return frozenset(events(manifests))
