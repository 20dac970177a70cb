"""Madness Hour (マッドネスアワー): the pure rules (rules/madness-hour.md).

The set-up table, the battle of the climax and the verdict of the ending,
as functions of plain values, so each rule is tested on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from companion.core.engine import Ask
from companion.core.events import Refusal

# players (the Girl included) → (exploration cards, room cards; the entrance is laid out first, not counted)
SETUP: dict[int, tuple[int, int]] = {2: (22, 10), 3: (35, 17), 4: (38, 28), 5: (38, 33)}

MYSTIC_CAP = 4  # [ruling] at most +4 per revealing mad investigator

# What an investigator submits from their page for the battle.  The ranges
# are generous bounds of the physical game (a character's strength is a
# single digit; items add a few each), wide enough never to refuse a real count.
BATTLE_FIELDS: dict[str, Ask] = {
    "strength": Ask("mh.field.strength", 0, 20),  # the character's strength (筋力)
    "items": Ask("mh.field.items", 0, 40),  # the strength of the items they play
    "mystic": Ask("mh.field.mystic", 0, 10),  # mystic items: submitting it reveals madness
}

GIRLS = ("human", "evil-god")
SIDES = ("keep", "kill")
STATES = ("sane", "mad")


@dataclass(frozen=True)
class Options:
    """``games.madness-hour`` in the config."""

    turn_s: float = 0.0  # the turn timer; 0: off
    turn_warning_s: float = 10.0  # seconds before the end of a turn at which it is said
    discussion_s: float = 60.0  # the climax discussion
    warnings_s: tuple[float, ...] = (30.0, 10.0)  # seconds left at which the discussion says so


def parse_options(raw: Mapping[str, Any] | None) -> Options:
    """Check the options; a bad one is refused naming its key."""
    raw = raw or {}

    def number(key: str, default: float, low: float) -> float:
        v = raw.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < low:
            raise Refusal("mh.refuse.bad_option", f"games.madness-hour.{key} must be a number of at least {low}",
                          option=key)
        return float(v)

    warnings = raw.get("warnings_s", (30, 10))
    if (not isinstance(warnings, (list, tuple))
            or any(isinstance(w, bool) or not isinstance(w, (int, float)) or w <= 0 for w in warnings)):
        raise Refusal("mh.refuse.bad_option", "games.madness-hour.warnings_s must be a list of seconds above 0",
                      option="warnings_s")
    return Options(turn_s=number("turn_s", 0, 0), turn_warning_s=number("turn_warning_s", 10, 0),
                   discussion_s=number("discussion_s", 60, 1),
                   warnings_s=tuple(sorted({float(w) for w in warnings}, reverse=True)))


def turn_order(players: Sequence[str], girl: str) -> tuple[str, ...]:
    """The Girl, then the investigators clockwise (seat order) from her left."""
    at = players.index(girl)
    return tuple(players[at:]) + tuple(players[:at])


def unanimous(votes: Mapping[str, str]) -> str | None:
    """The side every voter chose, or None (a split vote: a battle)."""
    sides = set(votes.values())
    return sides.pop() if len(sides) == 1 else None


def battle_strength(entry: Mapping[str, int]) -> int:
    """One investigator's strength in the battle: strength + items played,
    + 1 per mystic item (at most +4) if they reveal madness."""
    return entry.get("strength", 0) + entry.get("items", 0) + min(entry.get("mystic", 0), MYSTIC_CAP)


def battle(votes: Mapping[str, str], entries: Mapping[str, Mapping[str, int]]) -> tuple[dict[str, int], str]:
    """Each side's total and the winning side: higher total wins, a tie goes to keep."""
    totals = {side: sum(battle_strength(entries.get(p, {})) for p, s in votes.items() if s == side)
              for side in SIDES}
    return totals, ("kill" if totals["kill"] > totals["keep"] else "keep")


def battle_dead(votes: Mapping[str, str], winner: str) -> list[str]:
    """Every investigator on the losing side dies."""
    return [p for p, side in votes.items() if side != winner]


def winners(players: Sequence[str], girl_player: str, girl: str, girl_alive: bool,
            states: Mapping[str, str], dead: Sequence[str]) -> tuple[str, ...]:
    """The ending's table (only the living escape; dead players never win):

    human, alive → the Girl + surviving sane;  human, dead → surviving mad;
    evil god, alive → the Girl + surviving mad;  evil god, dead → surviving sane.
    """
    side = "sane" if (girl == "human") == girl_alive else "mad"
    return tuple(p for p in players
                 if (p == girl_player and girl_alive)
                 or (p != girl_player and p not in dead and states.get(p) == side))
