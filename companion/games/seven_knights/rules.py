"""Seven Knights Bewitched: rule sets, tile sets, options and the pure judgements.

Everything here is a function of its arguments; the table flow lives in
``seven_knights.py``.  Section references (§) are to the spec,
``shared/rules/seven-knights-bewitched.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.core import settings
from companion.core.settings import Field

WITCH = "skb/witch"
KNIGHTS: tuple[str, ...] = tuple(f"skb/knight/{i}" for i in range(1, 8))
ALL_TILES: tuple[str, ...] = (*KNIGHTS, WITCH)
ROUNDS = 3
START_MARKER = ("pass", "keep")


def knight_number(tile: str) -> int:
    """The number on a knight tile (``skb/knight/3`` → 3)."""
    if tile not in KNIGHTS:
        raise ValueError(f"{tile!r} is not a knight tile")
    return int(tile.rsplit("/", 1)[1])


# ----------------------------------------------------------- rule sets (§ Rule sets)
def _basic_tiles(n: int) -> tuple[str, ...]:
    # [ruling] knights 1..k + witch, k = N at 4-5 players (one tile left for the
    # centre), k = N - 1 at 6-8 (every tile dealt).
    return (*KNIGHTS[: n if n <= 5 else n - 1], WITCH)


@dataclass(frozen=True)
class RuleSet:
    """One rule set as a few flags over the one engine."""

    name: str
    low: int  # fewest players
    high: int  # most players
    witch_dealt: bool  # can the witch tile lie in front of a player?
    witch_team: bool  # False in cooperative: nobody plays the witch
    default_tiles: Callable[[int], tuple[str, ...]]  # players -> the tiles in play
    centre: Callable[[int, int], int]  # (players, tiles in the set) -> face down in the centre
    player_cards: int = 2  # per colour (seed); special has two quest passes, so 3 (each with an arrow)

    def allows(self, players: int) -> bool:
        return self.low <= players <= self.high


RULE_SETS: dict[str, RuleSet] = {
    rs.name: rs
    for rs in (
        # Left-over tiles go face down to the centre (one at 4-5 players).
        RuleSet("basic", 4, 8, True, True, _basic_tiles, lambda n, t: t - n),
        # Knights only are dealt; of the rest (with the witch) 3 go to the centre.
        RuleSet("special", 3, 4, False, True, lambda n: ALL_TILES, lambda n, t: min(3, t - n), player_cards=3),
        # All 8 shuffled and dealt; at 4-5 players one of the rest goes to the centre.
        RuleSet("advanced", 4, 7, True, True, lambda n: ALL_TILES,
                lambda n, t: min(1, t - n) if n <= 5 else 0),
        # [ruling] knights 1..N, no witch tile, nothing in the centre.
        RuleSet("cooperative", 4, 7, False, False, lambda n: KNIGHTS[:n], lambda n, t: 0),
    )
}


def default_rule_set(players: int) -> str:
    """The rule set when no rule card is tapped: 3 players can only play special."""
    return "special" if players == 3 else "basic"


# ------------------------------------------------------------------ options
@dataclass(frozen=True)
class Options:
    start_marker: str = "pass"  # [ruling] "pass": one seat clockwise at rounds 2 and 3
    tile_sets: Mapping[str, Mapping[int, tuple[str, ...]]] = field(default_factory=dict)


def tile_sets_problem(v: Any) -> str | None:
    """What is wrong with a ``tile_sets:`` override, or None."""
    try:
        _tile_sets(v)
    except ValueError as e:
        return str(e)
    return None


# ``games.seven-knights`` in the config schema.
SETTINGS = {
    "start_marker": Field(Options.start_marker, settings.choice(*START_MARKER),
                          "pass: the start marker moves one seat clockwise at rounds 2 and 3 | keep"),
    "tile_sets": Field(None, tile_sets_problem, "override tiles per rule set and player count"),
}


def options_from(section: Mapping[str, Any]) -> Options:
    """The checked section (as the journal gives it back; missing keys take
    the defaults) as this game's typed options."""
    return Options(start_marker=section.get("start_marker", Options.start_marker),
                   tile_sets=_tile_sets(section.get("tile_sets")))


def _tile_sets(raw: Any) -> dict[str, dict[int, tuple[str, ...]]]:
    """A ``tile_sets:`` override as tiles by rule set and player count (the
    journal gives counts back as strings); ``ValueError`` says what is wrong."""
    raw = raw or {}
    if not isinstance(raw, Mapping):
        raise ValueError("must map a rule set to {players: [tiles]}")
    sets: dict[str, dict[int, tuple[str, ...]]] = {}
    for rule, per_count in raw.items():
        if rule not in RULE_SETS:
            raise ValueError(f"names an unknown rule set {rule!r} (known: {', '.join(RULE_SETS)})")
        if not isinstance(per_count, Mapping):
            raise ValueError(f"at {rule}: must map a player count to a tile list")
        sets[rule] = {}
        for count, tiles in per_count.items():
            n = _player_count(rule, count)
            sets[rule][n] = _tile_list(RULE_SETS[rule], n, tiles)
    return sets


def _player_count(rule: str, count: Any) -> int:
    where = f"at {rule}.{count}"
    if isinstance(count, bool) or not (isinstance(count, int) or (isinstance(count, str) and count.isdigit())):
        raise ValueError(f"{where}: the key must be a player count")
    n = int(count)
    rs = RULE_SETS[rule]
    if not rs.allows(n):
        raise ValueError(f"{where}: {rule} is for {rs.low} to {rs.high} players")
    return n


def _tile_list(rs: RuleSet, n: int, tiles: Any) -> tuple[str, ...]:
    where = f"at {rs.name}.{n}"
    if isinstance(tiles, str) or not isinstance(tiles, Sequence):
        raise ValueError(f"{where}: must be a list of tiles")
    for tile in tiles:
        if tile not in ALL_TILES:
            raise ValueError(f"{where}: unknown tile {tile!r} (tiles are skb/knight/1..7 and skb/witch)")
    if len(set(tiles)) != len(tiles):
        raise ValueError(f"{where}: a tile is listed twice")
    dealt = [t for t in tiles if t != WITCH] if not rs.witch_dealt else list(tiles)
    if len(dealt) < n:
        raise ValueError(f"{where}: {len(dealt)} dealable tiles cannot give one to each of {n} players")
    if not rs.witch_team and WITCH in tiles:
        raise ValueError(f"{where}: the {rs.name} rule set has no witch tile")
    return tuple(tiles)


def tile_set(rule: str, players: int, options: Options) -> tuple[str, ...]:
    """The tiles in play for this rule set and player count (override first)."""
    return options.tile_sets.get(rule, {}).get(players) or RULE_SETS[rule].default_tiles(players)


# ------------------------------------------------------- election (§ Round 3)
def elect(seats: Sequence[str], start: int, votes: Mapping[str, str]) -> str:
    """The captain: most recommendations; tie → the tied player who did not
    recommend themself; still tied → the farthest clockwise from the start
    player (seat ``start``; seat order is clockwise)."""
    counts = {p: 0 for p in seats}
    for choice in votes.values():
        counts[choice] += 1
    top = max(counts.values())
    tied = [p for p in seats if counts[p] == top]
    modest = [p for p in tied if votes.get(p) != p]
    if modest:
        tied = modest
    return max(tied, key=lambda p: (seats.index(p) - start) % len(seats))


# -------------------------------------------- verdict (§ Round 4-5, FAQ)
WINNERS = ("knights", "witch", "nobody")  # who a formation's verdict says won the round


@dataclass(frozen=True)
class Verdict:
    winner: str  # one of WINNERS
    reason: str  # captain_witch | captain_bewitched | formation_holds | a formation failure


def formation_failure(formation: Sequence[str], excluded: Sequence[str]) -> str | None:
    """Why a formation fails (§5 [ruling] (a)(b)(c)), or None if it holds."""
    if WITCH in formation:
        return "witch_in_formation"  # (a)
    if any(t != WITCH for t in excluded):
        return "knight_left_out"  # (b)
    numbers = [knight_number(t) for t in formation]
    if any(b <= a for a, b in zip(numbers, numbers[1:], strict=False)):
        return "not_ascending"  # (c)
    return None


def judge(formation: Sequence[str], excluded: Sequence[str], *, captain_tile: str | None,
          captain_bewitched: bool, witch_team: Sequence[str], has_witch_team: bool) -> Verdict:
    """Who wins the round.

    The captain holding the witch or being bewitched gives the witch team the
    round whatever was laid; a failed formation goes to the witch team unless
    that team is empty (FAQ: everyone scores 0) or the rule set has none
    (cooperative: everyone scores 0).
    """
    if captain_tile == WITCH:
        return Verdict("witch", "captain_witch")
    if captain_bewitched:
        return Verdict("witch", "captain_bewitched")
    failure = formation_failure(formation, excluded)
    if failure is None:
        return Verdict("knights", "formation_holds")
    if not has_witch_team or not witch_team:
        return Verdict("nobody", failure)
    return Verdict("witch", failure)


# ------------------------------------------------------------ scoring (§6, §7)
def round_points(winner: str, round_no: int, seats: Sequence[str],
                 witch_team: Sequence[str]) -> dict[str, int]:
    """Every player's score card for the round (§6 table)."""
    last = round_no == ROUNDS
    knights_win, witch_win = (7, 7) if last else (2, 3)
    points = {}
    for p in seats:
        on_witch_team = p in witch_team
        if winner == "knights":
            points[p] = 0 if on_witch_team else knights_win
        elif winner == "witch":
            points[p] = witch_win if on_witch_team else 0
        else:
            points[p] = 0
    return points


def winners(seats: Sequence[str], totals: Mapping[str, int]) -> tuple[str, ...]:
    """All players with the highest total (§7: ties share)."""
    top = max(totals[p] for p in seats)
    return tuple(p for p in seats if totals[p] == top)
