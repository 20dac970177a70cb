"""Write a Seven Knights table script for every rule set at every allowed
player count (companion/games/seven_knights/examples/seven-knights/), each with the result the spec
predicts under ``expect:``.

The expectations (``EXPECTED``) were worked out by hand from the spec's
scoring table (§5-6, revised ruling 5: the formation is made of every tile on
the table, the centre tiles included), not by the engine, so the tests that
replay these scripts check the engine against an independent reading of the
rules.  ``script`` only lays out the inputs of each scenario.

    python tools/make_examples.py      # rewrite the files
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")
ALLOWED = {"basic": range(4, 9), "special": range(3, 5), "advanced": range(4, 8), "cooperative": range(4, 8)}
OUT = Path(__file__).resolve().parent.parent / "companion" / "games" / "seven_knights" / "examples" / "seven-knights"
WITCH = "skb/witch"


def knight(n: int) -> str:
    return f"skb/knight/{n}"


def deal(rules: str, n: int) -> tuple[list[str], list[str]]:
    """One possible deal: the tiles in front of the players (seat order) and
    the centre tiles.  Tiles set aside never appear."""
    if rules == "basic":  # knights 1..k + witch; the last seat holds the witch
        k = n if n <= 5 else n - 1
        return [knight(i) for i in range(1, n)] + [WITCH], [knight(k)] if n <= 5 else []
    if rules == "special":  # knights only dealt; 3 to the centre, the witch among them
        return [knight(i) for i in (2, 3, 5, 6)[:n]], [knight(1 if n == 4 else 4), WITCH, knight(7)]
    if rules == "advanced":  # all 8 shuffled; red holds the witch; 4-5 players: knight 5 in the centre
        return [WITCH] + [knight(i) for i in (1, 3, 4, 6, 7, 2)][: n - 1], [knight(5)] if n <= 5 else []
    return [knight(i) for i in range(1, n + 1)], []  # cooperative: knights 1..N, no centre


# Worked out by hand (points per round from the §6 table; seat order red, blue, …):
#   basic: the last seat holds the witch.  R1 knights win (2 each, holder 0); R2 the
#     formation is out of order (holder 3); R3 the holder is the captain and taps the
#     witch (7).  → last seat 10, every other 2.
#   special: the witch is a centre tile.  R1 knights win (2 each, nobody on the witch
#     team); R2 the last seat looked at the witch, formation out of order (3); R3 the
#     captain lays the witch and leaves a centre knight out, nobody on the witch team:
#     nobody scores.  → last seat 5, every other 2.
#   advanced: red holds the witch.  As basic with red as the holder.  → red 10, others 2.
#   cooperative: R1 2 each; R2 out of order, R3 a knight left out: 0.  → 2 each, all win.
EXPECTED: dict[str, dict[int, tuple[int, ...]]] = {
    "basic": {4: (2, 2, 2, 10), 5: (2, 2, 2, 2, 10), 6: (2, 2, 2, 2, 2, 10), 7: (2, 2, 2, 2, 2, 2, 10),
              8: (2, 2, 2, 2, 2, 2, 2, 10)},
    "special": {3: (2, 2, 5), 4: (2, 2, 2, 5)},
    "advanced": {4: (10, 2, 2, 2), 5: (10, 2, 2, 2, 2), 6: (10, 2, 2, 2, 2, 2), 7: (10, 2, 2, 2, 2, 2, 2)},
    "cooperative": {n: (2,) * n for n in range(4, 8)},
}


def script(rules: str, n: int) -> dict:
    seats = list(COLOURS[:n])
    players, centre = deal(rules, n)
    on_table = players + centre
    knights = sorted((t for t in on_table if t != WITCH), key=lambda t: int(t.rsplit("/", 1)[1]))
    holder = seats[players.index(WITCH)] if WITCH in players else None
    captain_tile = min((t for t in players if t != WITCH), key=lambda t: int(t.rsplit("/", 1)[1]))
    captain = seats[players.index(captain_tile)]
    coop = rules == "cooperative"
    steps: list[dict] = [{"tap": "game/seven-knights"}, {"tap": f"rules/{rules}"}]
    steps += [{"tap": f"player/{p}"} for p in seats] + [{"press": "next"}]

    def taps(tiles: list[str]) -> list[dict]:
        return [{"tap": t} for t in tiles]

    def witch_team(members: list[str]) -> None:
        if not coop:
            steps.extend({"tap": f"player/{p}"} for p in members)
            steps.append({"press": "next"})

    def left_out(formation: list[str]) -> list[str]:
        return [t for t in on_table if t not in formation]

    # Round 1 — §5: every knight on the table (the centre's too) ascending, the witch
    # left out.  The captain's tile is revealed in the command phase.
    steps += [{"press": "next"} for _ in range(3)] + taps([captain_tile])
    steps += taps(knights) + [{"press": "next"}] + taps(left_out(knights))
    witch_team([holder] if holder else [])
    if holder:  # the formation held and the witch team is not empty: was the captain bewitched?
        steps.append({"tap": f"player/{captain}"})  # the captain: a knight, not bewitched
    steps.append({"press": "next"})

    # Round 2 — §5(c): two knights swapped.  The captain taps their tile during the
    # quest (not named) and confirms it with next.
    bewitched = [seats[-1]] if rules == "special" else []  # looked at the centre witch
    swapped = [knights[1], knights[0], *knights[2:]]
    steps += taps([captain_tile]) + [{"press": "next"}]
    steps += taps(swapped) + [{"press": "next"}] + taps(left_out(swapped))
    witch_team(([holder] if holder else []) + bewitched)
    steps.append({"press": "next"})

    # Round 3 — worth 7.  The witch in front of a player: its holder is the captain
    # (witch team wins at once).  Special: the captain lays the centre witch and leaves
    # the last knight out.  Cooperative: a knight left out.
    if holder:
        steps += taps([WITCH]) + [{"press": "next"}]
        witch_team([holder])
    else:
        formation = knights[:-1] + ([WITCH] if WITCH in on_table else [])
        steps += taps([captain_tile]) + [{"press": "next"}] + taps(formation) + [{"press": "next"}]
        steps += taps(left_out(formation))
        witch_team([])
    totals = dict(zip(seats, EXPECTED[rules][n], strict=True))
    best = max(totals.values())
    return {
        "title": f"Seven Knights, {rules} rules, {n} players, three rounds",
        "seed": 1,
        "expect": {"totals": totals, "winners": [p for p in seats if totals[p] == best]},
        "steps": steps,
    }


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for rules, counts in ALLOWED.items():
        for n in counts:
            path = OUT / f"{rules}-{n}p.yaml"
            body = yaml.safe_dump(script(rules, n), sort_keys=False, allow_unicode=True, width=200)
            path.write_text("# Generated by tools/make_examples.py — do not edit.\n" + body, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
