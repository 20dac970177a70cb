"""One Night Werewolf as data: the options, the deck, the discussion, the vote.

Pure helpers for ``companion.games.one_night`` (rules: ``rules/one-night-werewolf.md``);
the roles and editions are ``roles``' entries, the night ``night``'s, the
verdict ``verdict``'s.  The deck is public (the table chose it): what it holds
may be said; where its cards lie never.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.core import settings
from companion.core.countdown import time_line
from companion.core.events import Refusal, Say
from companion.core.settings import Field
from companion.games.one_night import roles
from companion.games.one_night.roles import (
    DEFAULT_EDITION,
    EDITIONS,
    ROLES,
    RULE_DECKS,
    Edition,
    artifact_tags,
    card_of,
    in_edition,
    role_of,
)

VOTE_COUNT = ("one", "two", "three")


@dataclass(frozen=True)
class Options:
    """This game's config section, checked.  ``pause_s`` (the short pause after
    each line that closes a turn) and ``count_s`` (between the vote count's
    numbers) are fixed here, not settings; ``pace`` multiplies both and the
    windows, not the discussion (its length is announced in minutes).
    ``windows``: a role's own window (seconds), where it is not ``window_s``."""

    window_s: float = 10.0
    jitter_s: tuple[float, float] = (0.0, 0.0)
    pace: float = 1.0
    pause_s: float = 3.0
    count_s: float = 1.0
    discussion_min: float = 3
    warnings_s: tuple[float, ...] = (60, 10)
    masking: bool = True
    deck: Mapping[int, Mapping[str, int]] | None = None
    edition: str = DEFAULT_EDITION
    windows: Mapping[str, float] = field(default_factory=dict)


def _windows_problem(v: Any) -> str | None:
    if not isinstance(v, dict):
        return f"must be a mapping role: seconds, not {v!r}"
    for role, s in v.items():
        if role not in ROLES:
            return f"{role!r} is not a One Night role"
        if isinstance(s, bool) or not isinstance(s, int | float) or not 1 <= s <= 120:
            return f"{role}: {s!r} must be 1 to 120 seconds"
    return None


def settings_for(cards: Sequence[str]) -> dict[str, Field]:
    """``games.one-night`` in the config schema; ``cards``: the role cards
    there are tags for (the engine's components), which bound a deck."""
    return {
        "window_s": Field(Options.window_s, settings.number(1, 120), "each role's turn at night, in seconds"),
        "jitter_s": Field(list(Options.jitter_s), settings.range_(0, 30),
                          "random extra seconds per turn, [min, max]: a turn's length then tells nothing"),
        "pace": Field(Options.pace, settings.number(0.25, 4), "scales every night window and pause"),
        "discussion_min": Field(Options.discussion_min, settings.number(0.5, 30),
                                "minutes of discussion (next ends it early)"),
        "warnings_s": Field(list(Options.warnings_s), settings.seconds_list,
                            "seconds before the discussion's end at which the time left is said"),
        "masking": Field(Options.masking, settings.switch, "loop a soft tapping sound under the night",
                         read=settings.read_switch),
        "deck": Field(None, lambda v: deck_problem(v, [role_of(c) for c in cards if c.startswith("onw/")]),
                      "the default deck per player count, e.g. {5: {werewolf: 2, seer: 1, thief: 1, villager: 3}}"),
        "edition": Field(DEFAULT_EDITION, lambda v: None if v in EDITIONS
                         else f"must be one of {', '.join(EDITIONS)}, not {v!r}",
                         "jinrou (ワンナイト人狼, the default) | ultimate; a rules/ultimate card picks it per game"),
        "windows": Field({}, _windows_problem, "a role's own turn at night where it is not window_s, e.g. {seer: 15}"),
    }


def deck_problem(v: Any, cards: Sequence[str]) -> str | None:
    """What is wrong with a ``deck:`` override (player count → {role: count}),
    judged by ``deck_for`` and by the cards the set has (``cards``: one role
    per card)."""
    if v is None:
        return None
    if not isinstance(v, dict):
        return f"must be a mapping players: {{role: count}}, not {v!r}"
    low, high = min(e.players[0] for e in EDITIONS.values()), max(e.players[1] for e in EDITIONS.values())
    for n, comp in v.items():
        if isinstance(n, bool) or not isinstance(n, int) or not isinstance(comp, dict):
            return f"must map a player count to {{role: count}}, not {n!r}: {comp!r}"
        if not low <= n <= high:
            return f"has a deck for {n} players; One Night is for {low} to {high}"
        for role, count in comp.items():
            if not isinstance(role, str) or isinstance(count, bool) or not isinstance(count, int):
                return f"for {n} players: {role!r}: {count!r} is not a role and a count"
            if role in cards and not 0 <= count <= cards.count(role):
                return f"for {n} players: {count} {role} cards, but the set has 0 to {cards.count(role)}"
        edition = next((e for e in EDITIONS.values() if set(comp) <= set(in_edition(e.id))), EDITIONS[DEFAULT_EDITION])
        try:
            deck_for(n, Options(deck={n: comp}, edition=edition.id))
        except Refusal as e:
            return f"for {n} players: {e.reason}"
    return None


def options_from(section: Mapping[str, Any], rules: Sequence[str] = ()) -> Options:
    """The checked section (as the journal gives it back: lists, string keys;
    missing keys take the defaults) as this game's typed options; an edition's
    rule card (``rules/ultimate``) picks the edition over the config's."""
    deck = section.get("deck")
    jitter = section.get("jitter_s", Options.jitter_s)
    edition = next((r for r in rules if r in EDITIONS), section.get("edition", DEFAULT_EDITION))
    if rule_deck := next((RULE_DECKS[r] for r in rules if r in RULE_DECKS), None):  # rules/daybreak
        edition, deck = rule_deck[0], rule_deck[1]
    return Options(
        window_s=float(section.get("window_s", Options.window_s)),
        jitter_s=(float(jitter[0]), float(jitter[1])),
        pace=float(section.get("pace", Options.pace)),
        discussion_min=float(section.get("discussion_min", Options.discussion_min)),
        warnings_s=tuple(sorted({float(w) for w in section.get("warnings_s", Options.warnings_s)}, reverse=True)),
        masking=bool(section.get("masking", Options.masking)),
        deck={int(k): dict(v) for k, v in deck.items()} if deck is not None else None,
        edition=str(edition),
        windows={str(k): float(v) for k, v in (section.get("windows") or {}).items()},
    )


# ------------------------------------------------------------------ the deck
def _ordered(deck: Mapping[str, int]) -> dict[str, int]:
    """A deck in announce order (the roles' order), without the roles it has none of."""
    return {role: deck[role] for role in ROLES if deck.get(role)}


def deck_for(players: int, opts: Options, cards: Sequence[str] = ()) -> dict[str, int]:
    """The deck (role → count, announce order): the role cards the table
    tapped (``cards``), else the config's override for this player count,
    else the edition's default.  Refuses (``onw.refuse.bad_deck``) unknown
    roles, counts below 0 and a deck that is not the players' cards plus the
    centre; a tapped deck with the reasons a table can act on (``tapped_problem``)."""
    edition = EDITIONS[opts.edition]
    if cards:
        if (refusal := tapped_problem(players, edition, cards)) is not None:
            raise refusal
        return _ordered(Counter(role_of(c) for c in cards))
    deck = (opts.deck or {}).get(players) or edition.default_decks.get(players)
    if deck is None:
        raise Refusal("onw.refuse.bad_deck", f"no deck for {players} players", count=players)
    unknown = sorted(set(deck) - set(in_edition(edition.id)))
    if unknown:
        raise Refusal("onw.refuse.bad_deck", f"unknown roles in the deck: {', '.join(unknown)}",
                      count=players)
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in deck.values()):
        raise Refusal("onw.refuse.bad_deck", "role counts must be whole numbers", count=players)
    if sum(deck.values()) < players:
        raise Refusal("onw.refuse.bad_deck",
                      f"{sum(deck.values())} cards cannot be dealt to {players} players", count=players)
    if sum(deck.values()) - players - extra_cards(deck) not in edition.any_centre:
        raise Refusal("onw.refuse.bad_deck",
                      f"{sum(deck.values())} cards for {players} players: the deck is the players' cards and "
                      f"{' or '.join(map(str, sorted(edition.any_centre, reverse=True)))} in the centre"
                      f"{_extra_words(deck)}", count=players)
    if (refusal := centre_werewolf_problem(deck)) is not None:
        raise refusal
    return _ordered(deck)


def extra_cards(deck: Mapping[str, int]) -> int:
    """Cards the deck holds beyond the players' and the centre's: the alpha
    wolf's centre werewolf card (rules: *Daybreak*, the deck)."""
    return sum(ROLES[r].extra * n for r, n in deck.items() if r in ROLES)


def _extra_words(deck: Mapping[str, int]) -> str:
    return " and the centre werewolf card" if extra_cards(deck) else ""


def centre_lines(players: int, deck: Mapping[str, int]) -> list[Say]:
    """The deal's last lines: with the alpha wolf, first set the centre
    werewolf card apart; then the players' cards and the centre's count."""
    extra = extra_cards(deck)
    return [*([Say("onw.deck.centre_werewolf")] if extra else []),
            Say("onw.deck.centre", {"count": sum(deck.values()) - players - extra})]


def centre_werewolf_problem(deck: Mapping[str, int]) -> Refusal | None:
    """A deck with the alpha wolf needs its centre werewolf card: a werewolf,
    a mystic or a dream wolf besides the alpha wolf itself."""
    if extra_cards(deck) and not any(n and ROLES[r].werewolf and not ROLES[r].extra
                                     for r, n in deck.items() if r in ROLES):
        return Refusal("onw.refuse.centre_werewolf", "the alpha wolf needs the centre werewolf card: "
                       "a werewolf, a mystic wolf or a dream wolf", role="alpha-wolf")
    return None


def card_problem(edition: Edition, cards: Sequence[str], card: str) -> Refusal | None:
    """Why a role card cannot go into the deck being tapped (``cards``, so far)."""
    card = card_of(card, edition.id)
    if card in artifact_tags():  # a token lies on a card at the reveal: it is no card of the deck
        return Refusal("onw.refuse.artifact_in_deck", f"{card} is an artifact token, not a role card", card=card)
    role, _, n = card.removeprefix("onw/").partition("/")
    entry = ROLES.get(role)
    if entry is None or not entry.sets.get(edition.id):
        return Refusal("onw.refuse.not_in_edition", f"the {edition.id} edition has no {role}",
                       role=role, edition=edition.id)
    if not n.isdigit() or int(n) > entry.sets[edition.id]:
        return Refusal("onw.refuse.set_holds", f"the {edition.id} set holds {entry.sets[edition.id]} {role} cards",
                       role=role, n=entry.sets[edition.id])
    if card in (card_of(c) for c in cards):
        return Refusal("onw.refuse.card_in_deck", f"{card} is in the deck already", role=role)
    return None


def tapped_problem(players: int, edition: Edition, cards: Sequence[str]) -> Refusal | None:
    """Why the tapped deck cannot be played by ``players`` (at ``next``): a
    role of pairs alone, too few or too many cards — naming what is missing or extra."""
    for i, card in enumerate(cards):  # a card the edition lacks (its rule card came after it)
        if (refusal := card_problem(edition, cards[:i], card)) is not None:
            return refusal
    counts = Counter(role_of(c) for c in cards)
    for role in edition.pairs:
        if counts.get(role, 0) % 2:
            return Refusal("onw.refuse.lone_card", f"a {role} alone: {role}s come in pairs or not at all", role=role)
    extra = extra_cards(counts)
    total, fits = len(cards), [players + c + extra for c in edition.centre_for(players)]
    if total < min(fits):
        return Refusal("onw.refuse.deck_short_alpha" if extra else "onw.refuse.deck_short",
                       f"{min(fits) - total} cards missing: {players} players and "
                       f"{max(edition.centre)} in the centre{_extra_words(counts)}",
                       n=min(fits) - total, count=players, cards=total)
    if total > max(fits):
        return Refusal("onw.refuse.deck_long", f"{total - max(fits)} cards too many for {players} players",
                       n=total - max(fits), count=players, cards=total)
    return centre_werewolf_problem(counts)


def tapped_deck(cards: Sequence[str]) -> dict[str, int]:
    """The deck (role → count, announce order) the tapped ``cards`` make."""
    return _ordered(Counter(role_of(c) for c in cards))


def tapped_lines(edition: str, cards: Sequence[str]) -> list[Say]:
    """The deck as it is tapped, counted aloud: every card of it by name."""
    deck = tapped_deck(cards)
    return [Say("onw.deck.tapped", {"role": roles.spoken(role_of(cards[-1]), edition), "cards": len(cards),
                                    "deck": [roles.spoken(r, edition) for r, n in deck.items() for _ in range(n)]})]


# -------------------------------------------------------------- the discussion
# The discussion's times as the clocks show them, by ``countdown.time_line``'s form
# (``TIME_FORMS``): a key of the game's own for each.
LEFT_LINES = {"": "onw.discussion.seconds_left",
              ".one": "onw.discussion.one_minute_left",
              ".minutes": "onw.discussion.minutes_left",
              ".one_and": "onw.discussion.one_minute_and_left",
              ".minutes_and": "onw.discussion.minutes_and_left"}
START_LINES = {"": "onw.discussion.start_seconds",
               ".one": "onw.discussion.start_one",
               ".minutes": "onw.discussion.start",
               ".one_and": "onw.discussion.start_one_and",
               ".minutes_and": "onw.discussion.start_minutes_and"}


def warning_line(left: float) -> Say:
    """The time left as the clocks show it: 1:00 "One minute left.", 1:10 "One
    minute 10 left." (残り1分10秒), seconds alone under a minute."""
    key, params = time_line("", left)
    return Say(LEFT_LINES[key], params)


def start_line(seconds: float) -> Say:
    """The discussion's length as the clocks start it: 0:30 "30 seconds", 1:30 "one
    minute 30" (1分30秒), 3:00 "3 minutes"."""
    key, params = time_line("", seconds)
    return Say(START_LINES[key], params)


# ------------------------------------------------------------------ the vote
def most_executed(players: int) -> int:
    """How many players the vote can execute at most (Day 4).  Every player
    has one vote; the executed are the players with the most votes, and a
    tie executes them all — but one vote each executes nobody, so each
    executed player has at least 2 votes: k executed need 2k <= N votes
    (4 players: 2 at most, never 3)."""
    return players // 2


def count_votes(players: Sequence[str], votes: Mapping[str, str], shielded: Collection[str] = ()) -> list[str]:
    """The executed (seat order) from every player's vote (voter → pointed
    at): the players with the most votes, all of them on a tie; [ruling]
    nobody if the most is one vote (every player has exactly one).  Daybreak's
    rule 11: the players a bodyguard protects (``shielded``) cannot die — the
    most votes among the others die, and nobody if none of them has more than one."""
    counts = {p: 0 for p in players if p not in shielded}
    for choice in votes.values():
        if choice in counts:
            counts[choice] += 1
    top = max(counts.values(), default=0)
    return [] if top <= 1 else [p for p in players if counts.get(p) == top]
