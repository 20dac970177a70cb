"""Daybreak at the table, through the engine: ``rules/daybreak``, the deal with
the centre werewolf card, the tokens tapped at the reveal (the artifact on a
card, the PI's card), the bodyguard on a counted vote and a hunter's shot at a
protected player.  Every expected value is worked out from
rules/one-night-werewolf.md (*Daybreak*, rules 9–12) and DESIGN.md's contract."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from companion.core.engine import Setup
from companion.core.events import Press, Refusal, Report, Say
from companion.games.one_night import OneNight
from companion.games.one_night.tests.test_one_night_daybreak import DEFAULT_6, cards
from companion.games.one_night.tests.test_one_night_editions import feed

FIVE = ("red", "blue", "green", "yellow", "purple")


def at_reveal(deck: list[str], players: tuple[str, ...] = FIVE) -> OneNight:
    engine = OneNight(Setup(players, ("ultimate",), {}, tuple(deck)))
    engine.state.step = "reveal"  # the night and the vote as the other tests play them
    return engine


def refused(engine: OneNight, *inputs: Any) -> Refusal:
    """The last input is refused, and changes nothing."""
    feed(engine, *inputs[:-1])
    state = copy.deepcopy(engine.state)
    with pytest.raises(Refusal) as caught:
        feed(engine, inputs[-1])
    assert engine.state == state
    return caught.value


def said(out: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(o.key, dict(o.params)) for o in out if isinstance(o, Say)]


def report(out: list[Any]) -> dict[str, Any]:
    (fields,) = [o.fields for o in out if isinstance(o, Report) and o.event == "onw_result"]
    return dict(fields)


# ------------------------------------------------------------------ the deck
def test_the_table_takes_rules_daybreak_and_deals_its_default_deck() -> None:
    assert "daybreak" in OneNight.known_rules() and "ultimate" in OneNight.known_rules()
    six = ("red", "blue", "green", "yellow", "purple", "orange")
    OneNight.check_setup(six, ("daybreak",), {})
    assert OneNight(Setup(six, ("daybreak",), {}, ())).deck == DEFAULT_6


def test_the_deal_sets_the_centre_werewolf_card_apart_before_counting_the_centre() -> None:
    deck = cards("alpha-wolf", "werewolf", "seer", "thief", "villager", "villager", "troublemaker", "drunk")
    engine = OneNight(Setup(FIVE[:4], ("ultimate",), {}, tuple(deck)))
    keys = said(engine.start())
    assert ("onw.deck.intro", {"count": 4, "cards": 8}) in keys
    at = keys.index(("onw.deck.centre_werewolf", {}))
    assert keys[at + 1] == ("onw.deck.centre", {"count": 3})


# ------------------------------------------------------------- the artifacts
CURATED = cards("curator", "werewolf", "villager", "villager", "seer", "thief", "troublemaker", "drunk")


def test_a_claw_on_a_villagers_card_makes_a_werewolf_who_dies_for_the_village() -> None:
    """Rule 9: the claw makes its holder a werewolf; the village wins when that werewolf dies."""
    engine = at_reveal(CURATED)
    feed(engine, "player/red", "onw/curator/1", "player/blue", "onw/villager/1")
    out = feed(engine, "onw/artifact/claw")
    assert said(out) == [("onw.reveal.artifact_role", {"player": "blue", "artifact": "artifact/claw",
                                                       "role": "werewolf"})]
    feed(engine, "player/green", "onw/villager/2", "onw/artifact/mask", "player/yellow", "onw/werewolf/1",
         "player/purple", "onw/seer/1", "player/blue")
    fields = report(feed(engine, Press("next")))
    assert fields["winning_teams"] == ["village"]
    assert fields["winners"] == ["red", "green", "purple"]  # blue plays for the werewolves now
    assert engine.view().facts["artifacts"] == {"blue": "claw", "green": "mask"}
    assert engine.result().teams == {"red": "village", "blue": "werewolf", "green": "village",
                                     "yellow": "werewolf", "purple": "village"}


def test_the_new_result_fields_name_the_artifacts_and_the_teams() -> None:
    engine = at_reveal(CURATED)
    feed(engine, "player/red", "onw/curator/1", "onw/artifact/cudgel", "player/blue", "onw/villager/1",
         "player/green", "onw/werewolf/1", "onw/artifact/brand", "player/yellow", "onw/villager/2",
         "player/purple", "onw/seer/1", "player/red")
    fields = report(feed(engine, Press("next")))
    # red holds the cudgel: a tanner, who dies and wins alone; green's brand makes the only
    # werewolf a villager, so nobody holds a werewolf and somebody died: the village loses (rule 2b)
    assert fields["executed"] == ["red"] and fields["winning_teams"] == ["tanner"]
    assert fields["winners"] == ["red"]
    assert fields["artifacts"] == {"red": "cudgel", "green": "brand"}
    assert fields["teams"] == {"red": "tanner", "blue": "village", "green": "village", "yellow": "village",
                               "purple": "village"}


@pytest.mark.parametrize("inputs, key", [
    (("onw/artifact/claw",), "onw.refuse.artifact_first"),  # no card shown yet
    (("player/red", "onw/artifact/claw"), "onw.refuse.artifact_first"),  # red's role card first
    (("player/red", "onw/curator/1", "onw/artifact/claw", "onw/artifact/void"), "onw.refuse.artifact_one"),
    (("player/red", "onw/curator/1", "onw/artifact/claw", "player/blue", "onw/villager/1", "onw/artifact/claw"),
     "onw.refuse.artifact_twice"),
])
def test_an_artifact_out_of_turn_is_refused_with_the_reason_and_changes_nothing(inputs: tuple[str, ...],
                                                                                key: str) -> None:
    assert refused(at_reveal(CURATED), *inputs).key == key


def test_an_artifact_with_no_curator_in_the_deck_is_refused() -> None:
    engine = at_reveal(cards("werewolf", "villager", "villager", "seer", "thief", "troublemaker", "drunk", "tanner"))
    assert refused(engine, "player/red", "onw/villager/1", "onw/artifact/claw").key == "onw.refuse.no_curator"


def test_back_takes_an_artifact_back() -> None:
    engine = at_reveal(CURATED)
    feed(engine, "player/red", "onw/curator/1", "onw/artifact/shroud")
    assert engine.state.artifacts == {"red": "shroud"}
    feed(engine, Press("back"))
    assert engine.state.artifacts == {} and engine.state.revealed == {"red": "onw/curator/1"}
    feed(engine, "onw/artifact/void")
    assert engine.state.artifacts == {"red": "void"}


# -------------------------------------------------------------------- the PI
INVESTIGATED = cards("pi", "werewolf", "villager", "villager", "seer", "thief", "tanner", "mystic-wolf")


def test_a_pi_who_saw_a_wolf_shows_its_card_and_plays_for_the_werewolves() -> None:
    """Rule 9: a PI who saw a wolf is a werewolf; the village wins when the PI dies."""
    engine = at_reveal(INVESTIGATED)
    feed(engine, "player/red", "onw/pi/1")
    out = feed(engine, "onw/mystic-wolf/1")
    assert said(out) == [("onw.reveal.investigated", {"player": "red", "role": "mystic-wolf"})]
    feed(engine, "player/blue", "onw/villager/1", "player/green", "onw/werewolf/1", "player/yellow",
         "onw/villager/2", "player/purple", "onw/seer/1", "player/red")
    fields = report(feed(engine, Press("next")))
    assert fields["final_roles"]["red"] == "pi:mystic-wolf"
    assert fields["teams"]["red"] == "werewolf"
    assert fields["winning_teams"] == ["village"] and fields["winners"] == ["blue", "yellow", "purple"]


def test_a_pi_who_saw_nothing_goes_on_with_the_next_player() -> None:
    engine = at_reveal(INVESTIGATED)
    feed(engine, "player/red", "onw/pi/1", "player/blue", "onw/tanner/1")
    assert engine.state.revealed == {"red": "onw/pi/1", "blue": "onw/tanner/1"} and engine.state.became == {}
    # the tanner's card now belongs to blue: it is no PI's any more
    assert refused(engine, "onw/werewolf/1").key == "onw.refuse.player_first"


def test_a_pi_shows_only_a_wolf_or_a_tanner() -> None:
    engine = at_reveal(INVESTIGATED)
    assert refused(engine, "player/red", "onw/pi/1", "onw/seer/1").key == "onw.refuse.player_first"
    feed(engine, "onw/tanner/1")
    assert engine.state.became == {"red": "tanner"}
    assert refused(engine, "onw/werewolf/1").key == "onw.refuse.player_first"  # once


# -------------------------------------------------------------- the bodyguard
GUARDED = cards("bodyguard", "werewolf", "villager", "villager", "seer", "thief", "hunter", "troublemaker")


def vote(engine: OneNight, pairs: str) -> list[Any]:
    return feed(engine, *(f"player/{p}" for pair in pairs.split() for p in pair.split(">")))


def test_a_counted_vote_with_a_bodyguard_names_the_executed_after_the_reveal() -> None:
    """Rule 11: red (bodyguard) protects blue; blue and green tie on two votes each, so with
    blue protected green alone has the most: green dies — told only after the reveal."""
    engine = at_reveal(GUARDED)
    out = vote(engine, "red>blue yellow>blue blue>green purple>green green>red")
    assert ("onw.count.guarded", {}) in said(out)
    assert not any(k.startswith("onw.count.executed") for k, _ in said(out))
    assert engine.state.executed == [] and "executed" not in engine.view().facts
    assert ("onw.board.guarded", {}) in engine.view().lines
    feed(engine, "player/red", "onw/bodyguard/1", "player/blue", "onw/werewolf/1", "player/green",
         "onw/villager/1", "player/yellow", "onw/villager/2", "player/purple", "onw/seer/1")
    fields = report(feed(engine, Press("next")))
    assert fields["executed"] == ["green"] and fields["dead"] == ["green"]
    assert fields["winning_teams"] == ["werewolf"] and fields["winners"] == ["blue"]


def test_a_hunters_shot_at_the_protected_player_kills_nobody() -> None:
    """Rule 11: red (bodyguard) protects blue; the hunter green gets three votes and dies,
    and shoots blue (the werewolf), who cannot die: the werewolves win."""
    engine = at_reveal(GUARDED)
    vote(engine, "red>blue blue>green yellow>green purple>green green>blue")
    feed(engine, "player/red", "onw/bodyguard/1", "player/blue", "onw/werewolf/1", "player/green",
         "onw/hunter/1", "player/yellow", "onw/villager/1", "player/purple", "onw/seer/1")
    out = feed(engine, Press("next"))
    assert ("onw.verdict.shielded", {"player": "green", "target": "blue"}) in said(out)
    fields = report(out)
    assert fields["executed"] == ["green"] and fields["dead"] == ["green"]
    assert fields["winning_teams"] == ["werewolf"] and fields["winners"] == ["blue"]


# --------------------------------------------------------------- the league
def test_a_league_rates_a_pi_turned_werewolf_with_the_werewolves_and_each_tanner_alone() -> None:
    """red, the PI, saw a werewolf (a werewolf now); the cudgel makes purple a second tanner.
    yellow, the tanner, is executed and wins alone (rule 1), denying the werewolves (rule 3)."""
    from venue.league import sides

    engine = at_reveal(cards("pi", "curator", "werewolf", "tanner", "villager", "villager", "seer", "thief"))
    feed(engine, "player/red", "onw/pi/1", "onw/werewolf/1", "player/blue", "onw/curator/1", "player/green",
         "onw/werewolf/1", "player/yellow", "onw/tanner/1", "player/purple", "onw/villager/1",
         "onw/artifact/cudgel", "player/yellow", Press("next"))
    result = engine.result()
    assert result.winners == ("yellow",)
    assert result.teams == {"red": "werewolf", "blue": "village", "green": "werewolf"}  # no tanner's team
    players = [{"seat": p, "team": result.teams.get(p), "winner": p in result.winners} for p in FIVE]
    groups, ranks = sides(players, "teams")
    named = {tuple(FIVE[i] for i in g): r for g, r in zip(groups, ranks, strict=True)}
    assert named == {("yellow",): 1, ("purple",): 2, ("blue",): 2, ("red", "green"): 2}
