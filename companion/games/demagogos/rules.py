"""Demagogos' Trap: the pure judgements (rules/demagogos-trap.md).

Everything here is a function of its arguments: the engine keeps the state,
these say what the rules make of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

START_GEMS = 5
WIN_VP = 3
STIPEND = 2
EXCHANGE_GEMS = 10  # gems for one VP
VP_MIN_BID = 1  # [ruling] the VP auction's lowest bid: a 0 would make the VP free every round
TREASURE_GEMS = 3  # a treasure's fixed part; a secret 1–3 bonus comes on top
BONUS = (1, 3)
DIE = (1, 6)
BOXES = 10  # the cave's boxes in the box: a round uses explorers + 3, at most 7 + 3 (10 players)
KEY_HIGH = 10**9  # the cave's shuffle keys: a uniform order of the boxes, ties practically never

TREASURE, EMPTY, DISASTER = "treasure", "empty", "disaster"
SAGE, DEMAGOGUE = "sage", "demagogue"


def role_holder_count(players: int) -> int:
    """R: 2 role holders for 6–7 players, 3 for 8–10 (counted over the players
    still in the game; fewer than 6 only happens after exits: 2)."""
    return 3 if players >= 8 else 2


def boxes(active: int) -> int:
    """K = explorers + 3, the explorers being everyone still in but the role holders."""
    return active - role_holder_count(active) + 3


def cave_contents(explorers: int) -> tuple[int, int, int]:
    """(treasure, empty, disaster) for explorers + 3 boxes: the spec's table
    for 4–7 explorers, and its ruling for any other count — at least 2
    treasures, since the sage always learns where 2 are."""
    table = {4: (3, 3, 1), 5: (4, 3, 1), 6: (4, 4, 1), 7: (4, 5, 1)}
    if explorers in table:
        return table[explorers]
    treasure = max(2, min(4, explorers - 1))
    return treasure, explorers + 3 - treasure - 1, 1


def role_of_die(die: int) -> str:
    """[ruling] 1–3 sage, 4–6 demagogue."""
    return SAGE if die <= 3 else DEMAGOGUE


def ranked(players: Sequence[str], bids: Mapping[str, int], vp: Mapping[str, int],
           gems: Mapping[str, int]) -> list[str]:
    """Players by bid, highest first; equal bids by the VP-auction tie rule
    (fewer VP first, then fewer gems), still equal: nearer the start
    ([ruling], as for simultaneous exits).  ``players`` is in seat order."""
    seat = {p: i for i, p in enumerate(players)}
    return sorted((p for p in players if p in bids),
                  key=lambda p: (-bids[p], vp[p], gems[p], seat[p]))


def layout(keys: Sequence[int], treasure: int, empty: int) -> tuple[list[str], list[int]]:
    """The cave from its shuffle: box ``b`` (1-based) has key ``keys[b-1]``; the
    boxes in key order (equal keys: lower box first) take treasure × T, the
    disaster, then empty × E.  Returns the contents by box and the two boxes
    told to the sage: the first two treasures in that order (a uniformly random
    pair, whatever the boxes' numbers).  A permutation of 1…K reads directly:
    1…T treasure (1 and 2 the sage's), T+1 the disaster, the rest empty."""
    order = sorted(range(len(keys)), key=lambda i: (keys[i], i))
    contents = [EMPTY] * len(keys)
    for rank, i in enumerate(order):
        contents[i] = TREASURE if rank < treasure else DISASTER if rank == treasure else EMPTY
    assert contents.count(EMPTY) == empty, "the shuffle does not fit the cave"
    return contents, sage_pair(list(range(1, len(keys) + 1)), keys)


def sage_pair(candidates: Sequence[int], keys: Sequence[int]) -> list[int]:
    """The two boxes of ``candidates`` with the lowest ``keys`` (one key per
    candidate, in the same order; equal keys: the lower box), in box order —
    a uniformly random pair.  The cave's own keys give the first sage's pair
    (``layout``); another sage's own draw gives theirs, one key per treasure box."""
    order = sorted(range(len(candidates)), key=lambda i: (keys[i], candidates[i]))
    return sorted(candidates[i] for i in order[:2])


def treasure_gems(bonus: int, last: bool) -> int:
    """3 gems + the bonus, the bonus doubled for the last unopened treasure."""
    return TREASURE_GEMS + bonus * (2 if last else 1)


def halved(n: int) -> int:
    return n // 2


def sage_wins(told: Sequence[int], opened: Sequence[int]) -> bool:
    """+1 VP when the explorers opened every box the sage was told."""
    return all(b in opened for b in told)


def exit_order(reached: Sequence[str], players: Sequence[str], gems: Mapping[str, int]) -> list[str]:
    """Players reaching 3 VP at the same moment: more gems first, then nearer the start."""
    seat = {p: i for i, p in enumerate(players)}
    return sorted(reached, key=lambda p: (-gems[p], seat[p]))


def winners_needed(players: int) -> int:
    """The game ends when floor(players / 2) have exited as winners."""
    return players // 2
