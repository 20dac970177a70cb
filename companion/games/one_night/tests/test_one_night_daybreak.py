"""Daybreak, written from rules/one-night-werewolf.md (*Daybreak*, rules 9-13) alone: every
expected deck, order and verdict below is worked out by hand from the rules' text, never
asked of the code under test."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.core.events import Refusal, Say
from companion.games.one_night.night import called_roles, night_script, turns
from companion.games.one_night.roles import ARTIFACTS, EDITIONS, ROLES
from companion.games.one_night.rules import (
    Options,
    card_problem,
    centre_lines,
    deck_for,
    options_from,
    tapped_problem,
)
from companion.games.one_night.tests.test_one_night_editions import night, seated, simulate
from companion.games.one_night.verdict import dead, executed, protected, result_fields, verdict

ULTIMATE = EDITIONS["ultimate"]
DAYBREAK = ("sentinel", "alpha-wolf", "mystic-wolf", "dream-wolf", "apprentice-seer", "pi", "witch",
            "village-idiot", "revealer", "curator", "bodyguard")


def cards(*roles: str) -> list[str]:
    """Role cards as tapped: the n-th of a role is ``onw/<role>/<n>``."""
    out: list[str] = []
    for role in roles:
        out.append(f"onw/{role}/{sum(1 for c in out if c.split('/')[1] == role) + 1}")
    return out


# ------------------------------------------------------------------ the deck
def test_the_eleven_roles_are_in_ultimates_pool_with_their_teams() -> None:
    """Roles table: teams; 'its roles join ultimate's pool'."""
    teams = {r: ROLES[r].team for r in DAYBREAK}
    assert teams == {"sentinel": "village", "alpha-wolf": "werewolf", "mystic-wolf": "werewolf",
                     "dream-wolf": "werewolf", "apprentice-seer": "village", "pi": "village", "witch": "village",
                     "village-idiot": "village", "revealer": "village", "curator": "village", "bodyguard": "village"}
    assert all(ROLES[r].sets == {"ultimate": 1} for r in DAYBREAK)


def test_a_deck_with_the_alpha_wolf_holds_players_plus_three_plus_the_centre_werewolf_card() -> None:
    """The deck: players + 3 + 1 with the alpha wolf; refused naming what is missing."""
    four = ("alpha-wolf", "werewolf", "seer", "thief", "villager", "villager", "troublemaker")  # 7 = 4 + 3
    short = tapped_problem(4, ULTIMATE, cards(*four))
    assert isinstance(short, Refusal) and short.key == "onw.refuse.deck_short_alpha" and short.params["n"] == 1
    assert "centre werewolf card" in short.reason
    assert tapped_problem(4, ULTIMATE, cards(*four, "drunk")) is None  # 8 = 4 + 3 + 1
    long = tapped_problem(4, ULTIMATE, cards(*four, "drunk", "insomniac"))
    assert isinstance(long, Refusal) and long.key == "onw.refuse.deck_long" and long.params["n"] == 1
    # without the alpha wolf the same 7 cards are a whole deck
    assert tapped_problem(4, ULTIMATE, cards("werewolf", "werewolf", "seer", "thief", "villager", "villager",
                                             "troublemaker")) is None


@pytest.mark.parametrize("wolf", ["werewolf", "mystic-wolf", "dream-wolf"])
def test_the_centre_werewolf_card_is_a_werewolf_a_mystic_or_a_dream_wolf(wolf: str) -> None:
    """The deck: 'the centre werewolf card (a werewolf, or a dream or mystic wolf)'."""
    deck = ("alpha-wolf", wolf, "seer", "thief", "villager", "villager", "troublemaker", "drunk")
    assert tapped_problem(4, ULTIMATE, cards(*deck)) is None


def test_an_alpha_wolf_with_no_other_wolf_card_is_refused_naming_the_centre_werewolf_card() -> None:
    """The deck: the alpha wolf exchanges the centre werewolf card: a deck without one is refused."""
    deck = ("alpha-wolf", "minion", "seer", "thief", "villager", "villager", "troublemaker", "drunk")
    refusal = tapped_problem(4, ULTIMATE, cards(*deck))
    assert isinstance(refusal, Refusal) and refusal.key == "onw.refuse.centre_werewolf"
    with pytest.raises(Refusal) as caught:  # a config's deck too
        deck_for(4, Options(edition="ultimate", deck={4: {r: deck.count(r) for r in deck}}))
    assert caught.value.key == "onw.refuse.centre_werewolf"


def test_an_artifact_token_tapped_into_the_deck_is_refused_as_no_role_card() -> None:
    """Tokens are tapped at the reveal (Daybreak at the reveal), never shuffled into the deck."""
    refusal = card_problem(ULTIMATE, cards("werewolf"), "onw/artifact/claw")
    assert isinstance(refusal, Refusal) and refusal.key == "onw.refuse.artifact_in_deck"
    assert card_problem(ULTIMATE, cards("werewolf"), "onw/pi/1") is None


def test_a_configured_deck_with_the_alpha_wolf_counts_its_centre_werewolf_card() -> None:
    """The deck: players + 3 + 1, for a config's deck as for a tapped one."""
    deck = {"alpha-wolf": 1, "werewolf": 1, "seer": 1, "thief": 1, "villager": 2, "troublemaker": 1}  # 7
    with pytest.raises(Refusal) as caught:
        deck_for(4, Options(edition="ultimate", deck={4: deck}))
    assert "centre werewolf card" in caught.value.reason
    assert sum(deck_for(4, Options(edition="ultimate", deck={4: {**deck, "drunk": 1}})).values()) == 8


def test_the_deal_sets_the_centre_werewolf_card_apart_and_counts_the_centre_without_it() -> None:
    """The deck: the centre werewolf card is 'set apart face down'; the centre still holds 3."""
    deck = {"alpha-wolf": 1, "werewolf": 1, "seer": 1, "thief": 1, "villager": 2, "troublemaker": 1, "drunk": 1}
    assert [(s.key, dict(s.params)) for s in centre_lines(4, deck)] == [
        ("onw.deck.centre_werewolf", {}), ("onw.deck.centre", {"count": 3})]
    assert [(s.key, dict(s.params)) for s in centre_lines(4, {"werewolf": 2, "seer": 1, "villager": 4})] == [
        ("onw.deck.centre", {"count": 3})]


# [ruling] the Daybreak default decks' table, written out in full
DEFAULT_3 = {"werewolf": 1, "mystic-wolf": 1, "sentinel": 1, "apprentice-seer": 1, "witch": 1, "revealer": 1}
DEFAULT_6 = {**DEFAULT_3, "pi": 1, "curator": 1, "village-idiot": 1}
DEFAULT_10 = {**DEFAULT_6, "bodyguard": 1, "dream-wolf": 1, "villager": 1, "alpha-wolf": 1, "werewolf": 2}


@pytest.mark.parametrize("players, deck, total", [(3, DEFAULT_3, 6), (6, DEFAULT_6, 9), (10, DEFAULT_10, 14)])
def test_rules_daybreak_deals_the_daybreak_default_deck(players: int, deck: dict[str, int], total: int) -> None:
    """The deck's [ruling] table: 3 players … 10 (+ the alpha wolf and the centre werewolf card)."""
    opts = options_from({}, ["daybreak"])
    assert opts.edition == "ultimate"  # Daybreak is no edition: ultimate's pool
    got = deck_for(players, opts)
    assert got == deck and sum(got.values()) == total


def test_role_taps_win_over_the_daybreak_default_deck() -> None:
    """Contract: rules/daybreak 'with no role taps' deals the default; taps make the deck."""
    tapped = cards("werewolf", "werewolf", "seer", "thief", "villager", "villager", "troublemaker")
    assert deck_for(4, options_from({}, ["daybreak"]), tapped) == {"villager": 2, "werewolf": 2, "seer": 1,
                                                                    "thief": 1, "troublemaker": 1}


# ----------------------------------------------------------------- the night
EVERY = {**{r: ROLES[r].copies for r in ("werewolf", "seer", "thief", "tanner", "doppelganger", "minion",
                                         "mason", "troublemaker", "drunk", "insomniac", "hunter", "villager")},
         **dict.fromkeys(DAYBREAK, 1)}


def test_both_boxes_wake_in_the_published_order_with_the_doppelgangers_sub_steps() -> None:
    """Full wake order: 0 sentinel … 11a; copied alpha/mystic wolf right after the original's
    (2B, 2C); 9a, 10a, 11a; the dream wolf and the bodyguard never wake."""
    assert called_roles(EVERY, "ultimate") == (
        "sentinel", "doppelganger", "doppelganger-minion", "werewolf", "alpha-wolf", "doppelganger-alpha-wolf",
        "mystic-wolf", "doppelganger-mystic-wolf", "minion", "mason", "seer", "apprentice-seer", "pi", "thief",
        "witch", "troublemaker", "village-idiot", "drunk", "insomniac", "doppelganger-insomniac", "revealer",
        "doppelganger-revealer", "curator", "doppelganger-curator")
    assert called_roles({**EVERY, "doppelganger": 0}, "ultimate") == (
        "sentinel", "werewolf", "alpha-wolf", "mystic-wolf", "minion", "mason", "seer", "apprentice-seer", "pi",
        "thief", "witch", "troublemaker", "village-idiot", "drunk", "insomniac", "revealer", "curator")


def _lines(deck: dict[str, int], turn: str) -> list[tuple[str, dict[str, str]]]:
    (found,) = [t for t in turns(deck, "ultimate") if t.name == turn]
    return [(o.key, dict(o.params)) for o in found.wake if isinstance(o, Say)]


def test_the_wolves_wake_with_the_werewolves_and_the_dream_wolf_shows_a_thumb() -> None:
    """Roles table: alpha and mystic wolf 'with the werewolves'; dream wolf 'shows a thumb'.
    Doppelganger: a copied alpha or mystic wolf wakes with the werewolves; a copied dream wolf does not."""
    p = "onw.ultimate"
    assert _lines(EVERY, "werewolf") == [
        (f"{p}.werewolf.wake", {}), (f"{p}.werewolf.lone", {}), (f"{p}.alpha_wolf.with", {}),
        (f"{p}.mystic_wolf.with", {}), (f"{p}.dream_wolf.with", {}),
        (f"{p}.doppelganger.with", {"role": "werewolf"}), (f"{p}.doppelganger.with", {"role": "alpha-wolf"}),
        (f"{p}.doppelganger.with", {"role": "mystic-wolf"})]


def test_a_deck_with_a_mystic_wolf_and_no_werewolf_card_still_has_the_werewolves_turn() -> None:
    """[ruling] a role in the deck always gets its turn: the mystic wolf wakes with the werewolves."""
    deck = {"mystic-wolf": 1, "seer": 1, "villager": 4}
    assert called_roles(deck, "ultimate") == ("werewolf", "mystic-wolf", "seer")
    assert called_roles({"dream-wolf": 1, "minion": 1, "villager": 4}, "ultimate") == ("werewolf", "minion")


def test_a_copied_daybreak_role_that_acts_at_once_is_named_in_the_doppelgangers_turn() -> None:
    """Doppelganger: copied apprentice seer, PI, witch, village idiot act at once; copied
    sentinel places a shield at once (its own turn has passed)."""
    assert _lines(EVERY, "doppelganger") == [("onw.ultimate.doppelganger.wake", {})] + [
        ("onw.ultimate.doppelganger.now", {"role": r})
        for r in ("sentinel", "apprentice-seer", "pi", "witch", "village-idiot")]


def test_a_daybreak_night_depends_on_the_deck_and_the_jitter_only() -> None:
    """Fixed-script rule: the same deck in any order gives the same night; every turn has the
    same window, whatever lies in the centre."""
    opts = Options(edition="ultimate")
    jitter = [7 * i for i in range(len(turns(EVERY, "ultimate")))]
    shuffled = dict(reversed(list(EVERY.items())))
    assert night_script(EVERY, opts, jitter) == night_script(shuffled, opts, jitter)
    windows = [s.delay - j / 1000 for s, j in zip((s for s in night_script(EVERY, opts, jitter)
                                                   if s.name.endswith(":wake")), jitter, strict=True)]
    assert {round(w, 3) for w in windows} == {10.0}


# --------------------------------------------------------------- the verdict
PLAYERS = ("a", "b", "c", "d", "e")


def roles_of(text: str) -> dict[str, str]:
    return dict(zip(PLAYERS, text.split(), strict=False))


# Each row: the rule it holds; final role cards (a, b, c, …); artifacts; the executed; expected
# winning teams and winners, worked out by hand.
VERDICTS = [
    ("9: the claw makes a villager a werewolf: it dies, the village wins",
     "villager seer villager", {"a": "claw"}, ["a"], ["village"], ["b", "c"]),
    ("9: without the claw the same villager's death wins nobody (no werewolf held)",
     "villager seer villager", {}, ["a"], [], []),
    ("9: the brand makes a werewolf a villager: no werewolf held, nobody dies, the village wins",
     "werewolf villager villager", {"a": "brand"}, [], ["village"], ["a", "b", "c"]),
    ("9: the cudgel makes a villager a tanner: it dies and wins alone",
     "villager werewolf villager", {"a": "cudgel"}, ["a"], ["tanner"], ["a"]),
    ("9: the void changes no role: the werewolf dies, the village wins",
     "werewolf villager villager", {"a": "void"}, ["a"], ["village"], ["b", "c"]),
    ("9: the mask changes no role", "werewolf villager villager", {"b": "mask"}, ["b"], ["werewolf"], ["a"]),
    ("9: the shroud changes no role", "werewolf villager villager", {"c": "shroud"}, [], ["werewolf"], ["a"]),
    ("9: a PI who saw a wolf is a werewolf: it dies, the village wins",
     "pi:werewolf villager villager", {}, ["a"], ["village"], ["b", "c"]),
    ("9: a PI who saw a wolf survives: the werewolves win", "pi:mystic-wolf villager villager", {}, ["b"],
     ["werewolf"], ["a"]),
    ("9: a PI who saw a tanner is a tanner: it dies and wins alone",
     "pi:tanner werewolf villager", {}, ["a"], ["tanner"], ["a"]),
    ("9: an artifact on the PI's card overrides what it saw (brand: a villager)",
     "pi:werewolf villager villager", {"a": "brand"}, [], ["village"], ["a", "b", "c"]),
    ("9/10: a PI who saw nothing is village", "pi werewolf villager", {}, ["b"], ["village"], ["a", "c"]),
    ("10: the alpha wolf is a werewolf: held, nobody dies, the werewolves win",
     "alpha-wolf villager minion", {}, [], ["werewolf"], ["a", "c"]),
    ("10: the mystic wolf dies: the village wins", "mystic-wolf villager villager", {}, ["a"], ["village"],
     ["b", "c"]),
    ("10: the dream wolf is a werewolf: a villager dies, the werewolves win",
     "dream-wolf villager villager", {}, ["b"], ["werewolf"], ["a"]),
    ("10: Daybreak's village roles win with the village",
     "werewolf sentinel apprentice-seer witch village-idiot", {}, ["a"], ["village"], ["b", "c", "d", "e"]),
    ("10: revealer, curator and bodyguard are village", "werewolf revealer curator bodyguard", {}, ["a"],
     ["village"], ["b", "c", "d"]),
]


@pytest.mark.parametrize("rule, roles, artifacts, killed, teams, winners", VERDICTS, ids=[v[0] for v in VERDICTS])
def test_daybreak_verdicts(rule: str, roles: str, artifacts: dict[str, str], killed: list[str],
                           teams: list[str], winners: list[str]) -> None:
    final = roles_of(roles)
    v = verdict(tuple(final), final, killed, (), artifacts)
    assert list(v.winning_teams) == teams and list(v.winners) == winners


def test_every_artifact_is_one_of_the_six_and_three_change_a_role() -> None:
    """Tokens: the six artifact tags; rule 9: claw → werewolf, brand → villager, cudgel → tanner."""
    assert ARTIFACTS == {"claw": "werewolf", "brand": "villager", "cudgel": "tanner",
                         "void": None, "mask": None, "shroud": None}


SIX = ("a", "b", "c", "d", "e", "f")


def votes_of(text: str) -> dict[str, str]:
    """``"a>c b>c …"``: who pointed at whom."""
    return dict(pair.split(">") for pair in text.split())  # type: ignore[misc]


BODYGUARD = [
    ("11: the protected player had the most votes: the next most die instead",
     "bodyguard villager werewolf villager villager", "a>c b>c c>e d>e e>c", ["e"]),
    ("11: the protected player ties for the most: only the other tied player dies",
     "bodyguard villager werewolf villager villager", "a>c b>d c>d d>c e>a", ["d"]),
    ("11: nobody else has more than one vote: nobody dies",
     "bodyguard villager werewolf villager villager", "a>c b>c c>d d>c e>a", []),
    ("11, ties as before: the next most tie, both die",
     "bodyguard villager werewolf villager villager villager", "a>c b>c c>d d>e e>d f>e", ["d", "e"]),
    ("11: the protected player was not the most voted: the most voted die as without a bodyguard",
     "bodyguard villager werewolf villager villager", "a>b b>c c>d d>c e>c", ["c"]),
    ("11 [ruling]: an executed bodyguard still protects", "bodyguard villager werewolf villager villager",
     "a>c b>a c>a d>c e>a", ["a"]),
    ("11 [ruling]: two bodyguards protect two: the next most dies",
     "bodyguard bodyguard werewolf villager villager villager", "a>c b>d c>e d>e e>c f>d", ["e"]),
    ("11 [ruling]: two bodyguards protect two: nobody else has more than one vote",
     "bodyguard bodyguard werewolf villager villager villager", "a>c b>d c>d d>c e>f f>e", []),
    ("9/11: a claw on the bodyguard's card: a werewolf, protecting nobody",
     "bodyguard villager werewolf villager villager", "a>c b>c c>e d>e e>c", ["c"]),
]


@pytest.mark.parametrize("rule, roles, votes, expected", BODYGUARD, ids=[b[0] for b in BODYGUARD])
def test_the_bodyguard(rule: str, roles: str, votes: str, expected: list[str]) -> None:
    final = dict(zip(SIX, roles.split(), strict=False))
    artifacts = {"a": "claw"} if "claw" in rule else {}
    assert executed(tuple(final), final, votes_of(votes), artifacts) == expected


def test_a_hunters_shot_at_a_protected_player_kills_nobody() -> None:
    """11: 'the player the bodyguard voted for cannot die (by votes or by a hunter's shot)'.
    a hunter, b bodyguard, c werewolf: a gets 3 votes and dies, shooting c whom b protects:
    c lives, a werewolf is held and none died — the werewolves win."""
    final = {"a": "hunter", "b": "bodyguard", "c": "werewolf", "d": "villager", "e": "villager"}
    votes = votes_of("a>c b>c c>a d>a e>a")
    killed = executed(PLAYERS, final, votes)
    assert killed == ["a"] and protected(final, votes) == {"c"}
    assert dead(killed, final, votes, shielded=protected(final, votes)) == ["a"]
    v = verdict(PLAYERS, final, killed, ())
    assert v.winning_teams == ("werewolf",) and v.winners == ("c",)
    # without the bodyguard (b a villager) the shot kills the werewolf: the village wins
    plain = {**final, "b": "villager"}
    assert dead(killed, plain, votes, shielded=protected(plain, votes)) == ["a", "c"]


def test_a_hunter_and_two_bodyguards() -> None:
    """11 [ruling] two bodyguards protect two; the hunter's shot at either kills nobody.
    a hunter (3 votes) shoots d, protected by c; e's bodyguard protects b."""
    final = {"a": "hunter", "b": "werewolf", "c": "bodyguard", "d": "villager", "e": "bodyguard", "f": "villager"}
    votes = votes_of("a>d b>a c>d d>a e>b f>a")
    shielded = protected(final, votes)
    assert shielded == {"d", "b"}
    killed = executed(tuple(final), final, votes)
    assert killed == ["a"]
    assert dead(killed, final, votes, shielded=shielded) == ["a"]


def test_onw_results_new_fields_name_artifacts_and_teams_after_artifacts_and_the_pi() -> None:
    """Contract: onw_result gains artifacts {player: artifact} and teams {player: village|werewolf|
    tanner} after artifacts and the PI; final_roles names a PI who became a role pi:<role>."""
    final = {"a": "pi:werewolf", "b": "villager", "c": "werewolf", "d": "pi:tanner", "e": "seer"}
    fields = result_fields(final, {"c": "brand", "b": "cudgel", "e": "mask"})
    assert fields == {"artifacts": {"b": "cudgel", "c": "brand", "e": "mask"},
                      "teams": {"a": "werewolf", "b": "tanner", "c": "village", "d": "tanner", "e": "village"}}
    assert result_fields({"a": "doppelganger:alpha-wolf"}) == {"artifacts": {}, "teams": {"a": "werewolf"}}


def test_a_daybreak_deck_sounds_the_same_night_whoever_holds_what(tmp_path: Path) -> None:
    """Fixed-script rule, through the engine: the same Daybreak deck (alpha wolf, its centre
    werewolf card, the doppelganger) tapped in another order, at another table, with taps and
    `repeat` at night, gives the same lines, times and sounds; every role of it that wakes is called."""
    deck = cards("werewolf", "mystic-wolf", "sentinel", "apprentice-seer", "witch", "revealer", "pi", "curator",
                 "village-idiot", "doppelganger", "alpha-wolf")  # 7 players + 3 + 1
    seven = ("red", "blue", "green", "yellow", "purple", "orange", "white")
    a = simulate(tmp_path, [*seated("rules/ultimate", *deck, seats=seven), {"press": "next"}, {"press": "next"},
                            {"wait": 600}], name="a")
    b = simulate(tmp_path, [*seated("rules/ultimate", *reversed(deck), seats=("black", *seven[1:])),
                            {"press": "next"}, {"press": "next"}, {"wait": 9}, {"tap": "onw/alpha-wolf/1"},
                            {"press": "repeat"}, {"wait": 600}], name="b")
    assert not [e for e in a if e["event"] == "rejected"]
    assert night(a) == night(b)
    keys = [k for _, _, k, *_ in night(a)]
    woken = [k.split(".")[2].replace("_", "-") for k in keys if k and k.endswith(".wake") and k.count(".") == 3]
    assert woken == ["sentinel", "doppelganger", "werewolf", "alpha-wolf", "mystic-wolf", "apprentice-seer", "pi", "witch", "village-idiot", "revealer", "curator"]
    subs = [k.split(".")[2].replace("_", "-") for k in keys if k and k.endswith(".doppelganger.wake") and k.count(".") == 4]
    assert subs == ["alpha-wolf", "mystic-wolf", "revealer", "curator"]


def test_finding_a_daybreak_nights_line_keys_keep_the_event_logs_key_grammar() -> None:
    """Contract (*Table scripts and the event log*): a `say` key is a stable line id of dotted
    lower-case words (tests/test_event_log_contract.py's KEY) — a role id's hyphen
    (alpha-wolf) is no part of it, though the role's tags and final roles keep theirs."""
    import re

    key = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
    opts = Options(edition="ultimate")
    jitter = (0,) * len(turns(EVERY, "ultimate"))
    said = {o.key for seg in night_script(EVERY, opts, jitter) for o in seg.outputs if isinstance(o, Say)}
    assert {"onw.ultimate.alpha_wolf.wake", "onw.ultimate.mystic_wolf.doppelganger.wake"} <= said
    assert [k for k in said if not key.match(k)] == []
