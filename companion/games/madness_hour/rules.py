"""Madness Hour (マッドネスアワー): the pure rules (rules/madness-hour.md).

The set-up table, the battle of the climax and the verdict of the ending,
as functions of plain values, so each rule is tested on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from companion.core import settings
from companion.core.engine import Ask
from companion.core.settings import Field

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

    turn_s: float = 0  # the turn timer; 0: off
    turn_warning_s: float = 10  # seconds before the end of a turn at which it is said
    discussion_s: float = 60  # the climax discussion
    warnings_s: tuple[float, ...] = (30, 10)  # seconds left at which the discussion says so


# ``games.madness-hour`` in the config schema.
SETTINGS = {
    "turn_s": Field(Options.turn_s, settings.number(0, 3600), "the turn timer; 0: off (on, the pages count each turn down: its warning is said at the time they show)"),
    "turn_warning_s": Field(Options.turn_warning_s, settings.number(0, 600),
                            "seconds before a turn's end at which it is said"),
    "discussion_s": Field(Options.discussion_s, settings.number(5, 1800), "the climax discussion"),
    "warnings_s": Field(list(Options.warnings_s), settings.seconds_list,
                        "seconds before the discussion's end at which the time left is said"),
}


def options_from(section: Mapping[str, Any]) -> Options:
    """The checked section (missing keys take the defaults) as typed options."""
    return Options(turn_s=float(section.get("turn_s", Options.turn_s)),
                   turn_warning_s=float(section.get("turn_warning_s", Options.turn_warning_s)),
                   discussion_s=float(section.get("discussion_s", Options.discussion_s)),
                   warnings_s=tuple(sorted({float(w) for w in section.get("warnings_s", Options.warnings_s)},
                                           reverse=True)))


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
