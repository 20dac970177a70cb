"""One Night Werewolf as data: the deck, the options, the night script, the verdict.

Pure helpers for ``companion.games.one_night`` (rules: ``rules/one-night-werewolf.md``).
Nothing here depends on what the table does: the night script is a function of
the deck, the options and the night's secret jitter draw only, which is what
keeps the night from telling anything (a turn that is shorter because its card
lies in the centre, or that reacts to a tap, would be a tell).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from companion.core import settings
from companion.core.countdown import spoken
from companion.core.events import Draw, Output, Refusal, Say, Sound
from companion.core.settings import Field

# The set in the box, in the order the deck is announced (the source's listing):
# every deck is dealt from it, and its cards are the tags the reader knows (``CARDS``).
SET: dict[str, int] = {"villager": 4, "werewolf": 2, "seer": 1, "thief": 1}
ROLES = tuple(SET)
# The source's night order; it differs from other editions on purpose. Villagers have no turn.
NIGHT_ORDER = ("seer", "werewolf", "thief")
# Team of a card; a thief who stole a werewolf holds a werewolf card, so judging by the
# final cards puts every player on the right side.
TEAM = {"villager": "village", "werewolf": "werewolf", "seer": "village", "thief": "village"}

# 4 players: 2 villagers, 2 werewolves, 1 seer, 1 thief; each extra player one more villager.
# [ruling] the set has 4 villagers: 3 players get 1, 7 players keep 4 and only 1 centre card.
DEFAULT_DECKS: dict[int, dict[str, int]] = {
    n: {"villager": v, "werewolf": 2, "seer": 1, "thief": 1}
    for n, v in {3: 1, 4: 2, 5: 3, 6: 4, 7: 4}.items()
}

# Cards left in the centre: 2; [ruling] 1 when the set runs short (7 players).
CENTRE = (1, 2)

AMBIENCE = "table-tapping"
VOTE_COUNT = ("one", "two", "three")


@dataclass(frozen=True)
class Options:
    """This game's config section, checked.  ``pause_s`` (the short pause after
    each line that closes a turn) and ``count_s`` (between the vote count's
    numbers) are fixed here, not settings; ``pace`` multiplies both and the
    windows, not the discussion (its length is announced in minutes)."""

    window_s: float = 10.0
    jitter_s: tuple[float, float] = (0.0, 0.0)
    pace: float = 1.0
    pause_s: float = 3.0
    count_s: float = 1.0
    discussion_min: float = 3
    warnings_s: tuple[float, ...] = (60, 10)
    masking: bool = True
    deck: Mapping[int, Mapping[str, int]] | None = None


def settings_for(cards: Sequence[str]) -> dict[str, Field]:
    """``games.one-night`` in the config schema; ``cards``: the role cards
    there are tags for (the engine's components), which bound a deck."""
    return {
        "window_s": Field(Options.window_s, settings.number(1, 120)),
        "jitter_s": Field(list(Options.jitter_s), settings.range_(0, 30)),
        "pace": Field(Options.pace, settings.number(0.25, 4)),
        "discussion_min": Field(Options.discussion_min, settings.number(0.5, 30)),
        "warnings_s": Field(list(Options.warnings_s), settings.seconds_list),
        "masking": Field(Options.masking, settings.switch, read=settings.read_switch),
        "deck": Field(None, lambda v: deck_problem(v, [role_of(c) for c in cards if c.startswith("onw/")])),
    }


def deck_problem(v: Any, cards: Sequence[str]) -> str | None:
    """What is wrong with a ``deck:`` override (player count → {role: count}),
    judged by ``deck_for`` and by the cards the set has (``cards``: one role
    per card)."""
    if v is None:
        return None
    if not isinstance(v, dict):
        return f"must be a mapping players: {{role: count}}, not {v!r}"
    for n, comp in v.items():
        if isinstance(n, bool) or not isinstance(n, int) or not isinstance(comp, dict):
            return f"must map a player count to {{role: count}}, not {n!r}: {comp!r}"
        if n not in DEFAULT_DECKS:
            return f"has a deck for {n} players; One Night is for {min(DEFAULT_DECKS)} to {max(DEFAULT_DECKS)}"
        for role, count in comp.items():
            if not isinstance(role, str) or isinstance(count, bool) or not isinstance(count, int):
                return f"for {n} players: {role!r}: {count!r} is not a role and a count"
            if role in cards and not 0 <= count <= cards.count(role):
                return f"for {n} players: {count} {role} cards, but the set has 0 to {cards.count(role)}"
        try:
            deck_for(n, Options(deck={n: comp}))
        except Refusal as e:
            return f"for {n} players: {e.reason}"
    return None


def options_from(section: Mapping[str, Any]) -> Options:
    """The checked section (as the journal gives it back: lists, string keys;
    missing keys take the defaults) as this game's typed options."""
    deck = section.get("deck")
    jitter = section.get("jitter_s", Options.jitter_s)
    return Options(
        window_s=float(section.get("window_s", Options.window_s)),
        jitter_s=(float(jitter[0]), float(jitter[1])),
        pace=float(section.get("pace", Options.pace)),
        discussion_min=float(section.get("discussion_min", Options.discussion_min)),
        warnings_s=tuple(sorted({float(w) for w in section.get("warnings_s", Options.warnings_s)}, reverse=True)),
        masking=bool(section.get("masking", Options.masking)),
        deck={int(k): v for k, v in deck.items()} if deck is not None else None,
    )


def deck_for(players: int, opts: Options) -> dict[str, int]:
    """The composition for this player count (role → count, announce order), the
    config's override first.  Refuses (``onw.refuse.bad_deck``) unknown roles,
    counts below 0 and a deck that is not the players' cards plus the centre."""
    deck = (opts.deck or {}).get(players) or DEFAULT_DECKS.get(players)
    if deck is None:
        raise Refusal("onw.refuse.bad_deck", f"no deck for {players} players", count=players)
    unknown = sorted(set(deck) - set(ROLES))
    if unknown:
        raise Refusal("onw.refuse.bad_deck", f"unknown roles in the deck: {', '.join(unknown)}",
                      count=players)
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in deck.values()):
        raise Refusal("onw.refuse.bad_deck", "role counts must be whole numbers", count=players)
    if sum(deck.values()) < players:
        raise Refusal("onw.refuse.bad_deck",
                      f"{sum(deck.values())} cards cannot be dealt to {players} players", count=players)
    if sum(deck.values()) - players not in CENTRE:
        raise Refusal("onw.refuse.bad_deck",
                      f"{sum(deck.values())} cards for {players} players: the deck is the players' cards and "
                      f"{' or '.join(map(str, sorted(CENTRE, reverse=True)))} in the centre", count=players)
    return {role: deck[role] for role in ROLES if deck.get(role)}


def card_ids(deck: Mapping[str, int]) -> tuple[str, ...]:
    """The role cards' identities (``onw/villager/1`` …) in this deck."""
    return tuple(f"onw/{role}/{i}" for role, n in deck.items() for i in range(1, n + 1))


CARDS = card_ids(SET)  # every role card's identity: the game's components


def role_of(card: str) -> str:
    return card.split("/")[1]


# ------------------------------------------------------------------ the night
@dataclass(frozen=True)
class Segment:
    """One beat of the night: ``outputs`` happen when timer ``name`` fires (the
    first one on ``next``), and the next beat follows ``delay`` seconds later."""

    name: str
    outputs: tuple[Output, ...]
    delay: float
    turn: str  # the role whose turn this beat belongs to ("" before the first)


JITTER_DRAW = "jitter"  # the night's secret draw: one jitter in ms per role called


def called_roles(deck: Mapping[str, int]) -> tuple[str, ...]:
    """[ruling] every role in the deck is called, even if its card may lie in the centre."""
    return tuple(role for role in NIGHT_ORDER if deck.get(role))


def jitter_draw(deck: Mapping[str, int], opts: Options) -> Draw:
    """The secret draw a night starts with: each called role's extra window, in ms."""
    low, high = opts.jitter_s
    return Draw(JITTER_DRAW, round(low * 1000), round(high * 1000), count=len(called_roles(deck)))


def window(opts: Options, jitter_ms: int) -> float:
    """A role's window: window_s × pace plus its drawn jitter; the draw is
    journaled, so a replay (or a resumed night) gives the same length."""
    return round(opts.window_s * opts.pace + jitter_ms / 1000, 3)


def night_script(deck: Mapping[str, int], opts: Options, jitter_ms: Sequence[int]) -> tuple[Segment, ...]:
    """The whole night, fixed before it starts (``jitter_ms``: the drawn
    jitter of each called role, in order)."""
    pause = round(opts.pause_s * opts.pace, 3)
    start: list[Output] = [Say("onw.night.start")]
    if opts.masking:
        start.append(Sound(AMBIENCE, True))
    script = [Segment("night:start", tuple(start), pause, "")]
    for role, extra in zip(called_roles(deck), jitter_ms, strict=True):
        script.append(Segment(f"night:{role}:wake", (Say(f"onw.{role}.wake"),), window(opts, extra), role))
        script.append(Segment(f"night:{role}:sleep", (Say(f"onw.{role}.sleep"),), pause, role))
    morning: list[Output] = []
    if opts.masking:
        morning.append(Sound(AMBIENCE, False))
    morning.append(Say("onw.night.morning"))
    script.append(Segment("night:morning", tuple(morning), 0.0, "morning"))
    return tuple(script)


def turn_start(script: Sequence[Segment], at: int) -> int:
    """Where the turn that beat ``at`` belongs to begins: a resumed night restarts
    it from its wake line (the pause after a sleep line still belongs to that
    turn, since the sleep line may not have been heard before the cut)."""
    turn = script[at].turn
    return next(i for i, seg in enumerate(script) if seg.turn == turn)


# -------------------------------------------------------------- the discussion
def warning_line(left: float) -> Say:
    if left == 60:
        return Say("onw.discussion.one_minute_left")
    if left % 60 == 0:
        return Say("onw.discussion.minutes_left", {"minutes": spoken(left / 60)})
    return Say("onw.discussion.seconds_left", {"seconds": spoken(left)})


def minutes_line(key: str, seconds: float) -> Say:
    """``<key>`` with ``minutes``, or ``<key>_one`` for exactly one minute."""
    minutes = spoken(round(seconds / 60, 2))
    return Say(f"{key}_one") if minutes == 1 else Say(key, {"minutes": minutes})


# ------------------------------------------------------------------ the vote
def most_executed(players: int) -> int:
    """How many players the vote can execute at most (Day 4).  Every player
    has one vote; the executed are the players with the most votes, and a
    tie executes them all — but one vote each executes nobody, so each
    executed player has at least 2 votes: k executed need 2k <= N votes
    (4 players: 2 at most, never 3)."""
    return players // 2


def count_votes(players: Sequence[str], votes: Mapping[str, str]) -> list[str]:
    """The executed (seat order) from every player's vote (voter → pointed
    at): the players with the most votes, all of them on a tie; [ruling]
    nobody if the most is one vote (every player has exactly one)."""
    counts = {p: 0 for p in players}
    for choice in votes.values():
        counts[choice] += 1
    top = max(counts.values())
    return [] if top <= 1 else [p for p in players if counts[p] == top]


# ---------------------------------------------------------------- the verdict
WINNING_TEAMS = ("village", "werewolf", "nobody")


@dataclass(frozen=True)
class Verdict:
    winning_team: str  # one of WINNING_TEAMS
    winners: tuple[str, ...]  # seat order
    reason: str  # narration key naming the rule applied


def verdict(players: Sequence[str], roles: Mapping[str, str], executed: Sequence[str]) -> Verdict:
    """Judge by the final cards (``roles``: player → role after the thief's swap).

    - a werewolf among the players: the village wins iff an executed player is a
      werewolf, else the werewolves win;
    - no werewolf among the players: the village wins iff nobody is executed;
      [ruling] else nobody wins.
    Winners: every player whose final card is on the winning team.
    """
    if any(roles[p] == "werewolf" for p in players):
        if any(roles[p] == "werewolf" for p in executed):
            team, reason = "village", "onw.verdict.werewolf_executed"
        else:
            team, reason = "werewolf", "onw.verdict.werewolves_survive"
    elif not executed:
        team, reason = "village", "onw.verdict.no_werewolf_nobody_executed"
    else:
        team, reason = "nobody", "onw.verdict.no_werewolf_someone_executed"
    return Verdict(team, tuple(p for p in players if TEAM[roles[p]] == team), reason)
