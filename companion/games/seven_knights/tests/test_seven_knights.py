"""Seven Knights Bewitched: the table flow — each step and what it takes, the
command and formation rules, the witch team, scoring, every refusal (state
unchanged), undo, the start marker, hidden information and a full game.
Rules: /work/shared/rules/seven-knights-bewitched.md (§ numbers are its "Round"
list); flow: DESIGN.md "Seven Knights, each round".

Inputs are written short: ``"next"``/``"back"``, ``"k3"`` (knight 3),
``"witch"``, a colour (that player's card), or a full identity.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest

from companion.core.engine import Setup
from companion.core.events import Input, Output, Press, Refusal, Report, Say, Tap, TimerFired
from companion.games.seven_knights.engine import STEPS, SevenKnights

COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")
PHASES = ("quest", "questions", "recommendation")


def make(n: int = 5, rules: tuple[str, ...] = (), **options: Any) -> SevenKnights:
    players = COLOURS[:n]
    SevenKnights.check_setup(players, rules, options)
    engine = SevenKnights(Setup(players=players, rules=rules, options=options))
    engine.start()
    return engine


def parse(word: str) -> Input:
    if word in ("next", "back", "repeat"):
        return Press(word)
    if word == "witch":
        return Tap("skb/witch")
    if word[0] == "k" and word[1:].isdigit():
        return Tap(f"skb/knight/{word[1:]}")
    if word in COLOURS:
        return Tap(f"player/{word}")
    return Tap(word)


def feed(engine: SevenKnights, *words: str) -> list[Output]:
    out: list[Output] = []
    for word in words:
        out += engine.handle(parse(word))
    return out


def refused(engine: SevenKnights, word: str | Input, key: str) -> Refusal:
    """Assert ``word`` is refused with ``key`` and the state is untouched."""
    before = copy.deepcopy(engine.state)
    undo = copy.deepcopy(engine._undo)
    with pytest.raises(Refusal) as exc:
        engine.handle(parse(word) if isinstance(word, str) else word)
    assert exc.value.key == key, exc.value.reason
    assert engine.state == before
    assert engine._undo == undo
    return exc.value


def keys(outputs: Sequence[Output]) -> list[str]:
    return [o.key for o in outputs if isinstance(o, Say)]


def reports(outputs: Sequence[Output], event: str | None = None) -> list[dict[str, Any]]:
    return [dict(o.fields, event=o.event) for o in outputs
            if isinstance(o, Report) and (event is None or o.event == event)]


def said(outputs: Sequence[Output], key: str) -> dict[str, Any]:
    (params,) = [dict(o.params) for o in outputs if isinstance(o, Say) and o.key == key]
    return params


def points(outputs: Sequence[Output]) -> dict[str, int]:
    (scored,) = reports(outputs, "round_scored")
    return dict(scored["points"])


# ------------------------------------------------------------------ start
def test_start_says_tiles_deal_and_round_one_with_the_start_player() -> None:
    engine = SevenKnights(Setup(players=COLOURS[:5]))
    out = engine.start()
    assert keys(out) == ["skb.rules.basic", "skb.deal.cards", "skb.setup.tiles", "skb.deal.each", "skb.deal.centre.one",
                         "skb.deal.look", "skb.round.start", "skb.phase.quest.centre"]
    assert said(out, "skb.round.start") == {"round": 1, "player": "red"}
    assert not reports(out)
    assert engine.state.step == "quest" and not engine.finished


def test_the_steps_table_names_existing_handlers() -> None:
    for step, handlers in STEPS.items():
        for take in handlers.takes.values():
            assert callable(take.handler) and set(take.to) <= set(STEPS), (step, take)
    engine = make()
    assert engine.accepts() == ("tile", "next")
    feed(engine, "k2")
    assert engine.accepts() == ("next",)
    feed(engine, "next")
    assert engine.accepts() == ("tile", "player", "next")


# --------------------------------------------- § 1-3 phases before command
@pytest.mark.parametrize(("rule", "n", "quest_key"), [
    ("basic", 4, "skb.phase.quest.centre"), ("basic", 5, "skb.phase.quest.centre"),
    ("basic", 6, "skb.phase.quest"), ("basic", 8, "skb.phase.quest"),
    ("advanced", 5, "skb.phase.quest.centre"), ("advanced", 6, "skb.phase.quest"),
    ("special", 3, "skb.phase.quest.special"), ("special", 4, "skb.phase.quest.special"),
    ("cooperative", 5, "skb.phase.quest"),
])
def test_rule_1_quest_line_names_centre_and_special_two_passes(rule: str, n: int, quest_key: str) -> None:
    """§1: the centre tile may be looked at where there is one (basic and
    advanced at 4-5); special has two passes."""
    engine = make(n, (rule,))
    assert keys(engine.prompt()) == [quest_key]


def test_rule_1_to_3_phases_step_with_next() -> None:
    engine = make()
    assert keys(feed(engine, "next")) == ["skb.phase.questions"]
    assert engine.state.step == "questions"
    assert keys(feed(engine, "next")) == ["skb.phase.recommendation"]
    assert engine.state.step == "recommendation"
    assert keys(feed(engine, "next")) == ["skb.phase.command", "skb.concede.hint"]
    assert engine.state.step == "command"
    refused(engine, "next", "skb.refuse.captain_tile_first")


@pytest.mark.parametrize("nexts", [0, 1, 2])
def test_rule_4_a_tile_before_the_command_phase_is_revealed_only_on_next(nexts: int) -> None:
    """DESIGN 2: a tile tapped before the command phase is "the captain is
    ready", not named; ``next`` reveals it as the captain's own."""
    engine = make()
    feed(engine, *["next"] * nexts)
    out = feed(engine, "k3")
    assert out == [Say("skb.captain.ready")]
    assert engine.state.step == "captain_ready" and engine.state.captain_tile is None
    out = feed(engine, "next")
    assert keys(out) == ["skb.captain.knight", "skb.concede.hint", "skb.formation.prompt.centre"]
    assert said(out, "skb.captain.knight") == {"tile": "skb/knight/3"}
    assert engine.state.step == "formation"
    assert engine.state.captain_tile == "skb/knight/3"


def test_rule_4_a_tile_in_the_command_phase_is_revealed_at_once() -> None:
    engine = make()
    feed(engine, "next", "next", "next")
    out = feed(engine, "k3")
    assert keys(out) == ["skb.captain.knight", "skb.formation.prompt.centre"]
    assert engine.state.step == "formation"


def test_rule_4_tile_tap_mid_election_drops_the_election() -> None:
    engine = make()
    feed(engine, "next", "next", "red", "blue", "green")
    feed(engine, "k1", "next")
    assert engine.state.step == "formation"
    assert engine.state.votes == {} and engine.state.voter is None and engine.state.captain is None


@pytest.mark.parametrize("step_nexts", [0, 1])
def test_player_cards_are_refused_before_the_recommendation(step_nexts: int) -> None:
    engine = make()
    feed(engine, *["next"] * step_nexts)
    refused(engine, "red", "skb.refuse.not_now")


# --------------------------------------------------- § 3 the election
def test_rule_3_election_names_the_captain_and_goes_to_command() -> None:
    engine = make()
    feed(engine, "next", "next")
    out = feed(engine, "red", "green", "blue", "green", "green", "red", "yellow", "green")
    assert keys(out) == ["skb.vote.voter", "skb.vote.recorded"] * 4
    assert said(out[-1:], "skb.vote.recorded") == {"player": "green", "n": 4, "count": 5}  # a running count
    assert engine.prompt() == [Say("skb.vote.waiting", {"n": 4, "count": 5})]
    out = feed(engine, "purple", "red")
    assert keys(out) == ["skb.vote.voter", "skb.vote.recorded", "skb.election.captain",
                         "skb.phase.command.captain", "skb.concede.hint"]
    assert said(out, "skb.election.captain") == {"player": "green", "n": 3}
    assert engine.state.step == "command" and engine.state.captain == "green"


def test_rule_3_election_tie_counts_from_the_current_start_player() -> None:
    """Still tied (both recommended themselves) → farthest clockwise from the
    start player; in round 2 the start marker has moved to blue."""
    votes = ["red", "red", "blue", "yellow", "green", "red", "yellow", "yellow", "purple", "blue"]
    first = make()
    feed(first, "next", "next", *votes)  # red 2 (self), yellow 2 (self): yellow is farther from red
    assert first.state.captain == "yellow"
    second = make()
    play_round(second, "k1", ["k1", "k2", "k3", "k4", "k5"], ["witch"], [])
    feed(second, "next", "next", "next", *votes)  # from blue: red is 4 seats on, yellow 2
    assert second.state.captain == "red"


def test_election_refusals_leave_state_unchanged() -> None:
    engine = make()
    feed(engine, "next", "next")
    refused(engine, "black", "skb.refuse.unknown_player")
    feed(engine, "red")
    refused(engine, "next", "skb.refuse.election_unfinished")
    feed(engine, "red")  # self-recommendation is allowed
    refused(engine, "red", "skb.refuse.already_recommended")
    error = refused(engine, "next", "skb.refuse.election_unfinished")
    assert error.params == {"n": 4}


def test_recommendation_without_votes_goes_to_command_with_next() -> None:
    engine = make()
    feed(engine, "next", "next", "next")
    assert engine.state.step == "command" and engine.state.captain is None


# ------------------------------------------------------ § 4 the command
def test_rule_4_captain_witch_tile_wins_for_the_witch_team_at_once() -> None:
    """§4: captain's tile is the witch → the witch team wins; the formation is
    reported at once and the witch team is collected for scoring."""
    engine = make()
    feed(engine, "witch")
    out = feed(engine, "next")
    assert keys(out) == ["skb.captain.witch", "skb.verdict.witch.captain_witch", "skb.witch_team.prompt_holder"]
    assert reports(out) == [{"event": "formation", "tiles": [], "excluded": [], "verdict": "witch"}]
    assert engine.state.step == "witch_team"
    refused(engine, "next", "skb.refuse.witch_holder_must_tap")  # its holder must tap
    feed(engine, "yellow", "blue")
    out = feed(engine, "next")
    assert not reports(out, "formation")  # reported once
    assert points(out) == {"red": 0, "blue": 3, "green": 0, "yellow": 3, "purple": 0}


def test_rule_4_elected_captain_holding_the_witch_is_on_the_witch_team() -> None:
    """The captain's tile is public at the command phase: an elected captain
    who reveals the witch is known to hold it."""
    engine = make()
    feed(engine, "next", "next", *[w for p in COLOURS[:5] for w in (p, "blue")])
    feed(engine, "witch")
    assert engine.state.witch_team == ["blue"]
    assert points(feed(engine, "next")) == {"red": 0, "blue": 3, "green": 0, "yellow": 0, "purple": 0}


@pytest.mark.parametrize(("rule", "n", "key"), [
    ("special", 4, "skb.refuse.witch_not_dealt"),
    ("special", 3, "skb.refuse.witch_not_dealt"),
    ("cooperative", 5, "skb.refuse.not_in_tile_set"),
])
def test_rule_sets_captain_cannot_hold_the_witch_where_it_is_never_dealt(rule: str, n: int, key: str) -> None:
    engine = make(n, (rule,))
    feed(engine, "next", "next", "next")
    refused(engine, "witch", key)
    early = make(n, (rule,))
    feed(early, "witch")  # before the command phase: not checked, not named …
    refused(early, "next", key)  # … until the captain confirms it


def test_rule_4_elected_bewitched_captain_loses_even_an_ascending_formation() -> None:
    """§4: the captain is bewitched → the witch team wins: an elected captain
    who taps at the witch-team step makes the verdict witch."""
    engine = make()
    feed(engine, "next", "next", *[w for p in COLOURS[:5] for w in (p, "green")])
    assert engine.state.captain == "green"
    feed(engine, "k2", "k1", "k2", "k3", "k4", "k5", "next", "witch")
    feed(engine, "green", "purple")
    out = feed(engine, "next")
    assert reports(out, "formation") == [{"event": "formation", "verdict": "witch", "excluded": ["skb/witch"],
                                          "tiles": ["skb/knight/1", "skb/knight/2", "skb/knight/3",
                                                    "skb/knight/4", "skb/knight/5"]}]
    assert "skb.verdict.witch.captain_bewitched" in keys(out)
    assert points(out) == {"red": 0, "blue": 0, "green": 3, "yellow": 0, "purple": 3}


def test_rule_4_known_knight_captain_alone_cannot_stand_for_the_witch_holder() -> None:
    """The witch lay in front of a player and the elected captain revealed a
    knight: the captain is not its holder, so someone else must tap."""
    engine = make(6)
    feed(engine, "next", "next", *[w for p in COLOURS[:6] for w in (p, "green")])
    feed(engine, "k2", "k1", "k2", "witch", "k3", "k4", "k5", "next", "green")
    refused(engine, "next", "skb.refuse.witch_holder_must_tap")
    feed(engine, "red")
    assert feed(engine, "next")


@pytest.mark.parametrize("step_words", [(), ("k3",), ("k3", "k1")])
def test_rule_4_captain_concedes_by_tapping_their_card_twice(step_words: tuple[str, ...]) -> None:
    """FAQ: a bewitched captain may reveal themself and go to scoring.  One tap
    asks for confirmation (undoable); the second concedes."""
    engine = make()
    feed(engine, "next", "next", "next", *step_words)
    step = engine.state.step
    out = feed(engine, "blue")
    assert keys(out) == ["skb.concede.confirm"] and engine.state.step == step
    assert keys(engine.prompt()) == ["skb.concede.confirm"]
    out = feed(engine, "blue")
    assert keys(out) == ["skb.concede.done", "skb.verdict.witch.captain_bewitched", "skb.witch_team.prompt"]
    laid = [f"skb/knight/{w[1]}" for w in step_words[1:]]
    assert reports(out) == [{"event": "formation", "tiles": laid, "excluded": [], "verdict": "witch"}]
    assert engine.state.captain == "blue" and engine.state.witch_team == ["blue"]
    refused(engine, "blue", "skb.refuse.player_twice")
    assert points(feed(engine, "next")) == {"red": 0, "blue": 3, "green": 0, "yellow": 0, "purple": 0}


def test_rule_4_concession_needs_two_taps_in_a_row() -> None:
    engine = make()
    feed(engine, "k3", "next", "blue", "k1", "blue")
    assert engine.state.step == "formation" and engine.state.conceding == "blue"
    feed(engine, "red")
    assert engine.state.conceding == "red"
    feed(engine, "back")
    assert engine.state.conceding == "blue"
    feed(engine, "back")
    assert engine.state.conceding is None and engine.state.formation == ["skb/knight/1"]


def test_rule_4_only_the_elected_captain_concedes() -> None:
    engine = make()
    feed(engine, "next", "next", *[w for p in COLOURS[:5] for w in (p, "green")])
    error = refused(engine, "red", "skb.refuse.only_captain_concedes")
    assert error.params == {"player": "green"}
    feed(engine, "k2")
    refused(engine, "red", "skb.refuse.only_captain_concedes")
    feed(engine, "green", "green")
    assert engine.state.step == "witch_team"


def test_cooperative_has_nobody_to_concede() -> None:
    engine = make(5, ("cooperative",))
    feed(engine, "k3", "next")
    refused(engine, "red", "skb.refuse.not_now")


# ------------------------------------------------------ § 4 the formation
def test_rule_4_formation_refusals_leave_state_unchanged() -> None:
    engine = make(5)
    feed(engine, "next", "next", "next")
    refused(engine, "k7", "skb.refuse.not_in_tile_set")  # basic 5 players: knights 1-5
    feed(engine, "k2")
    refused(engine, "next", "skb.refuse.captain_tile_missing")
    feed(engine, "k1")
    refused(engine, "k1", "skb.refuse.tile_twice")
    refused(engine, "k6", "skb.refuse.not_in_tile_set")
    refused(engine, "skb/knight/9", "skb.refuse.unknown_tile")
    refused(engine, "onw/seer/1", "skb.refuse.not_this_game")
    refused(engine, "next", "skb.refuse.captain_tile_missing")
    feed(engine, "k2", "k3", "witch", "k4", "k5")  # 6 on the table: 5 players' and the centre tile
    refused(engine, Tap("skb/knight/6"), "skb.refuse.not_in_tile_set")
    assert engine.state.formation == ["skb/knight/1", "skb/knight/2", "skb/knight/3", "skb/witch",
                                      "skb/knight/4", "skb/knight/5"]
    assert engine.state.step == "formation"


def test_rule_sets_special_witch_never_in_front_of_a_player_but_may_be_in_the_centre() -> None:
    """Special: the witch is never the captain's tile, but it may be one of
    the 3 centre tiles, so it can be laid or left out."""
    engine = make(4, ("special",))
    feed(engine, "next", "next", "next")
    refused(engine, "witch", "skb.refuse.witch_not_dealt")
    feed(engine, "k5", "k5")
    assert keys(feed(engine, "witch")) == ["skb.formation.tile"]
    feed(engine, "back", "next", "witch")
    assert engine.state.excluded == ["skb/witch"]


def test_rule_4_formation_taps_are_echoed_with_their_place() -> None:
    engine = make()
    out = feed(engine, "k2", "next", "k1", "k2")
    assert [dict(o.params) for o in out if isinstance(o, Say) and o.key == "skb.formation.tile"] == [
        {"tile": "skb/knight/1", "n": 1}, {"tile": "skb/knight/2", "n": 2}]
    assert keys(engine.prompt()) == ["skb.formation.progress"]


def test_rule_4_full_formation_goes_straight_to_the_witch_team() -> None:
    """Basic, 5 players: 6 tiles on the table; all 6 laid → no left-out step."""
    engine = make()
    out = feed(engine, "k2", "next", "k1", "k2", "k3", "k4", "k5", "witch", "next")
    assert keys(out)[-2:] == ["skb.formation.done", "skb.witch_team.prompt"]
    assert engine.state.step == "witch_team"


def test_left_out_tiles_are_asked_for_and_the_step_ends_by_itself() -> None:
    """DESIGN 3: fewer tiles than on the table → ask for the left-out tiles;
    move on once formation + left-out = tiles on the table (basic, 5 players:
    5 players' tiles + 1 centre tile = 6)."""
    engine = make()
    feed(engine, "k2", "next", "k1", "k2", "k4")
    out = feed(engine, "next")
    assert keys(out) == ["skb.left_out.prompt"] and said(out, "skb.left_out.prompt") == {"n": 3}
    assert engine.state.step == "left_out"
    refused(engine, "next", "skb.refuse.left_out_missing")
    refused(engine, "red", "skb.refuse.left_out_missing")
    refused(engine, "k2", "skb.refuse.tile_twice")
    refused(engine, "k7", "skb.refuse.not_in_tile_set")
    feed(engine, "k3")
    out = feed(engine, "k5")
    assert keys(out) == ["skb.left_out.tile"] and engine.state.step == "left_out"
    assert said(engine.prompt(), "skb.left_out.prompt") == {"n": 1}
    refused(engine, "k5", "skb.refuse.tile_twice")
    out = feed(engine, "witch")
    assert keys(out) == ["skb.left_out.tile", "skb.formation.done", "skb.witch_team.prompt"]
    assert engine.state.excluded == ["skb/knight/3", "skb/knight/5", "skb/witch"]
    assert engine.state.step == "witch_team"


# ---------------------------------------------- § 5-6 verdict and points
def play_round(engine: SevenKnights, captain: str, formation: list[str], excluded: list[str],
               witch_team: list[str]) -> list[Output]:
    """One round from the quest on: the captain's tile, the formation, the
    left-out tiles, the witch team (not in cooperative), ``next`` to score."""
    out = feed(engine, captain)
    if engine.state.step == "captain_ready":
        out += feed(engine, "next")
    if engine.state.step == "formation":
        out += feed(engine, *formation, "next")
    out += feed(engine, *excluded)
    if engine.state.step == "witch_team":
        out += feed(engine, *witch_team, "next")
    if engine.state.step == "captain_check":  # the captain was not bewitched
        out += feed(engine, "next")
    return out


# (captain, formation, excluded, witch team, verdict, line, points for red..purple); basic, 5 players:
# knights 1-5 and the witch, all 6 on the table (5 in front of the players, 1 in the centre).
VERDICTS = [
    ("k2", ["k1", "k2", "k3", "k4", "k5"], ["witch"], [], "knights", "skb.verdict.knights",
     [2, 2, 2, 2, 2], "§5: ascending, witch left out (in the centre), nobody bewitched"),
    ("k2", ["k1", "k2", "k3", "k4", "k5"], ["witch"], ["blue"], "knights", "skb.verdict.knights",
     [2, 0, 2, 2, 2], "§5: witch left out, the rest ascending"),
    ("k2", ["k1", "k2", "k3", "k4", "k5"], ["witch"], ["blue", "purple"], "knights", "skb.verdict.knights",
     [2, 0, 2, 2, 0], "§6: the bewitched score with the witch"),
    ("k2", ["k1", "k2", "k4", "k5"], ["k3", "witch"], ["yellow"], "witch", "skb.verdict.witch",
     [0, 0, 0, 3, 0], "§5(b): a knight left out fails the formation"),
    ("k2", ["k1", "k2", "k3", "k4"], ["k5", "witch"], ["yellow"], "witch", "skb.verdict.witch",
     [0, 0, 0, 3, 0], "§5(b) revised: the centre knight left out fails the formation"),
    ("k2", ["k1", "k2", "witch", "k4", "k5"], ["k3"], ["yellow"], "witch", "skb.verdict.witch",
     [0, 0, 0, 3, 0], "§5(a): the witch in the formation"),
    ("k2", ["k1", "k2", "k3", "k4", "k5", "witch"], [], [], "nobody", "skb.verdict.nobody.empty_witch_team",
     [0, 0, 0, 0, 0], "§5(a) + FAQ: the centre witch laid, nobody looked at it"),
    ("k2", ["k2", "k1", "k3", "k4", "k5"], ["witch"], ["green", "red"], "witch", "skb.verdict.witch",
     [3, 0, 3, 0, 0], "§5(c): not ascending"),
    ("k2", ["k2", "k1", "k3", "k4", "k5"], ["witch"], [], "nobody", "skb.verdict.nobody.empty_witch_team",
     [0, 0, 0, 0, 0], "FAQ: failed formation, empty witch team → everyone 0"),
    ("k2", ["k2", "k3"], ["k1", "k4", "k5", "witch"], [], "nobody", "skb.verdict.nobody.empty_witch_team",
     [0, 0, 0, 0, 0], "FAQ + §5(b): knights left out, witch in the centre, nobody looked at it"),
    ("k5", ["k5"], ["k1", "k2", "k3", "k4", "witch"], ["red"], "witch", "skb.verdict.witch",
     [3, 0, 0, 0, 0], "§5(b): a one-tile formation does not always win"),
    ("k3", ["k1", "k3", "k5"], ["k2", "witch", "k4"], ["blue"], "witch", "skb.verdict.witch",
     [0, 3, 0, 0, 0], "§5(b): witch rightly left out, but knights too"),
]


@pytest.mark.parametrize(("captain", "formation", "excluded", "team", "verdict", "line", "scores", "rule"),
                         VERDICTS, ids=[v[-1] for v in VERDICTS])
def test_rule_5_6_verdict_and_points(captain: str, formation: list[str], excluded: list[str],
                                     team: list[str], verdict: str, line: str, scores: list[int],
                                     rule: str) -> None:
    engine = make()
    out = play_round(engine, captain, formation, excluded, team)
    tile = {w: parse(w).identity for w in [*formation, *excluded]}  # type: ignore[union-attr]
    assert reports(out, "formation") == [{"event": "formation", "verdict": verdict,
                                          "tiles": [tile[w] for w in formation],
                                          "excluded": [tile[w] for w in excluded]}]
    assert line in keys(out)
    assert points(out) == dict(zip(COLOURS, scores, strict=False))
    assert engine.state.step == "round_over"


@pytest.mark.parametrize(("formation", "excluded", "team", "scores"), [
    (["k1", "k2", "k3", "k4", "k5"], ["witch"], ["blue"], [7, 0, 7, 7, 7]),
    (["k2", "k1", "k3", "k4", "k5"], ["witch"], ["blue", "red"], [7, 7, 0, 0, 0]),
])
def test_rule_6_round_three_is_worth_seven_either_way(formation: list[str], excluded: list[str],
                                                      team: list[str], scores: list[int]) -> None:
    engine = make()
    for _ in range(2):
        play_round(engine, "k1", ["k1", "k2", "k3", "k4", "k5"], ["witch"], [])
        feed(engine, "next")
    assert engine.state.round == 3
    assert points(play_round(engine, "k2", formation, excluded, team)) == dict(zip(COLOURS, scores, strict=False))


@pytest.mark.parametrize(("formation", "verdict", "line", "each"), [
    (["k1", "k2", "k3", "k4", "k5"], "knights", "skb.verdict.knights", 2),
    (["k1", "k3", "k2", "k4", "k5"], "nobody", "skb.verdict.nobody.cooperative", 0),
    (["k1", "k2", "k4", "k5"], "nobody", "skb.verdict.nobody.cooperative", 0),
])
def test_cooperative_has_no_witch_team_and_a_failed_formation_scores_nobody(
        formation: list[str], verdict: str, line: str, each: int) -> None:
    """§6 cooperative rule: no witch team step; failed formation → 0 for all."""
    engine = make(5, ("cooperative",))
    out = feed(engine, "k1", "next", *formation, "next")
    if engine.state.step == "left_out":
        out += feed(engine, "k3")
    assert engine.state.step == "round_over"
    assert reports(out, "formation")[0]["verdict"] == verdict
    assert line in keys(out)
    assert points(out) == dict.fromkeys(COLOURS[:5], each)


def test_witch_team_step_refusals_leave_state_unchanged() -> None:
    engine = make(6)  # basic, 6 players: no centre tile
    feed(engine, "k2", "next", "k1", "k2", "k3", "k4", "k5", "next", "witch")
    refused(engine, "next", "skb.refuse.witch_holder_must_tap")  # witch left out: in front of a player
    feed(engine, "blue")
    refused(engine, "blue", "skb.refuse.player_twice")
    refused(engine, "white", "skb.refuse.unknown_player")
    refused(engine, "k5", "skb.refuse.not_now")
    assert engine.state.witch_team == ["blue"]


def test_witch_in_the_formation_also_needs_its_holder() -> None:
    engine = make(6)
    feed(engine, "k2", "next", "k1", "k2", "witch", "k4", "k3", "k5", "next")
    refused(engine, "next", "skb.refuse.witch_holder_must_tap")


@pytest.mark.parametrize("place", ["formation", "left_out"])
def test_witch_on_a_table_with_a_centre_tile_may_have_no_holder(place: str) -> None:
    """Basic, 5 players: the witch laid or left out may be the centre tile, so
    an empty witch team is possible and ``next`` is taken."""
    engine = make()
    feed(engine, "k2", "next", "k1", "k2", "k3", "k4", "k5")
    feed(engine, *(["witch", "next"] if place == "formation" else ["next", "witch"]))
    assert engine.state.step == "witch_team"
    assert reports(feed(engine, "next"), "round_scored")


# Where the witch tile must lie in front of a player, worked out by hand from
# the rules' table (§ Rule sets), not from the engine: basic at 6-8 players
# deals all N tiles, the witch among them, one to each player (no centre,
# nothing set aside); basic and advanced at 4-5 have a centre tile, advanced at
# 6-7 sets one or two tiles aside, special never deals the witch and the
# cooperative rules have none.
PLAYER_COUNTS = {"basic": (4, 5, 6, 7, 8), "special": (3, 4), "advanced": (4, 5, 6, 7),
                 "cooperative": (4, 5, 6, 7)}
EVERY_TILE_DEALT = {("basic", 6), ("basic", 7), ("basic", 8)}
NO_CENTRE = {("basic", 6), ("basic", 7), ("basic", 8), ("advanced", 6), ("advanced", 7)}  # with a witch
# The round up to the witch-team step; red is the captain wherever one is known.
WITCH_TEAM_STEP = {
    "knight_then_concede": ("next", "next", "next", "k1", "concede"),
    "elected_knight_then_concede": ("next", "next", "elect", "k1", "concede"),
    "witch_laid_then_concede": ("next", "next", "next", "k1", "k1", "witch", "concede"),
    "concede_unrevealed": ("next", "next", "next", "concede"),  # red's tile may be the witch
    "captain_witch": ("next", "next", "next", "witch"),  # nobody tapped yet
}


def witch_team_step_expected(rule: str, n: int, how: str) -> tuple[str | None, str | None]:
    """(the refusal of the script's ``witch`` or ``concede`` where the rules
    forbid it, the refusal of ``next`` at the witch-team step while the
    witch's holder has not tapped)."""
    if rule == "cooperative":  # no witch tile, nobody bewitched
        return ("skb.refuse.not_in_tile_set" if "witch" in how else "skb.refuse.not_now"), None
    if how == "captain_witch":
        if rule == "special":
            return "skb.refuse.witch_not_dealt", None
        return None, "skb.refuse.witch_holder_must_tap"  # the captain's tile: in front of a player
    if how == "witch_laid_then_concede" and (rule, n) in NO_CENTRE:
        return None, "skb.refuse.witch_holder_must_tap"  # on the table and no centre tile
    if how != "concede_unrevealed" and (rule, n) in EVERY_TILE_DEALT:
        return None, "skb.refuse.witch_dealt"  # the captain holds a knight: someone else has the witch
    return None, None


@pytest.mark.parametrize(("rule", "n", "how"), [(rule, n, how) for rule, counts in PLAYER_COUNTS.items()
                                                for n in counts for how in WITCH_TEAM_STEP])
def test_finding_a_concession_is_scored_only_once_the_witch_holder_could_tap(rule: str, n: int, how: str) -> None:
    """DESIGN 4: ``next`` at the witch-team step is refused while the witch
    must have lain in front of a player and nobody who could hold it has
    tapped, whatever happened before the formation: a captain who revealed
    a knight and conceded cannot be the holder.  Refused, the holder taps and
    the round pays them 3 (7 in round 3), every round of the game."""
    engine = make(n, (rule,))
    script = WITCH_TEAM_STEP[how]
    words = {"elect": [w for p in COLOURS[:n] for w in (p, "red")], "concede": ["red", "red"]}
    forbidden, holder_missing = witch_team_step_expected(rule, n, how)
    if forbidden:  # the round stops at its witch tile or its concession
        at = script.index("witch" if "witch" in how else "concede")
        feed(engine, *[w for word in script[:at] for w in words.get(word, [word])])
        refused(engine, "witch" if "witch" in how else "red", forbidden)
        return
    for round_no in (1, 2, 3):
        feed(engine, *[w for word in script for w in words.get(word, [word])])
        assert engine.state.step == "witch_team"
        team = [] if how == "captain_witch" else ["red"]
        if holder_missing:
            refusal = refused(engine, "next", holder_missing)
            assert refusal.reason
            feed(engine, "blue")
            team.append("blue")
        out = feed(engine, "next")
        win = 7 if round_no == 3 else 3
        assert points(out) == {p: win if p in team else 0 for p in COLOURS[:n]}
        if round_no < 3:
            feed(engine, "next")
    assert engine.finished


@pytest.mark.parametrize(("rule", "n", "how"), [(rule, n, how) for rule, counts in PLAYER_COUNTS.items()
                                                for n in counts for how in WITCH_TEAM_STEP if rule != "cooperative"])
def test_finding_the_scoring_prompt_offers_nobody_only_where_the_witch_may_lie_aside(rule: str, n: int,
                                                                                      how: str) -> None:
    """DESIGN 4: "nobody: just next" holds only where the witch tile may lie in
    the centre or aside; where it must lie in front of a player (every tile
    dealt, the captain's own tile, laid with no centre tile) the prompt asks
    for its holder and offers no "nobody" (worked out from the rules' table:
    ``EVERY_TILE_DEALT``, ``NO_CENTRE``)."""
    engine = make(n, (rule,))
    if witch_team_step_expected(rule, n, how)[0] is not None:
        return  # the script stops before scoring (the witch never dealt: special)
    words = {"elect": [w for p in COLOURS[:n] for w in (p, "red")], "concede": ["red", "red"]}
    out = feed(engine, *[w for word in WITCH_TEAM_STEP[how] for w in words.get(word, [word])])
    in_front = ((rule, n) in EVERY_TILE_DEALT or how == "captain_witch"
                or (how == "witch_laid_then_concede" and (rule, n) in NO_CENTRE))
    assert keys(out)[-1] == ("skb.witch_team.prompt_holder" if in_front else "skb.witch_team.prompt")


@pytest.mark.parametrize(("rule", "tiles", "holder_missing"), [
    ("basic", ["k1", "k2", "k3", "witch"], True),  # four tiles for four players: every one dealt
    ("advanced", ["k1", "k2", "k3", "witch"], True),
    ("advanced", ["k1", "k2", "k3", "k4", "witch"], False),  # one over: the centre tile
    ("special", ["k1", "k2", "k3", "k4", "witch"], False),  # the witch is never dealt
])
def test_finding_a_tile_set_that_deals_every_tile_waits_for_the_witch_holder_after_a_concession(
        rule: str, tiles: list[str], holder_missing: bool) -> None:
    """The same rule for a ``tile_sets`` override: where every tile, the
    witch among them, is dealt to four players, a captain who revealed a
    knight and conceded is not the witch's holder."""
    override = {"tile_sets": {rule: {4: [parse(t).identity for t in tiles]}}}
    engine = make(4, (rule,), **override)
    feed(engine, "next", "next", "next", "k1", "red", "red")
    if holder_missing:
        refused(engine, "next", "skb.refuse.witch_dealt")
        feed(engine, "green")
    assert points(feed(engine, "next")) == {"red": 3, "blue": 0, "green": 3 if holder_missing else 0, "yellow": 0}


def test_round_over_and_game_over_take_only_what_they_should() -> None:
    engine = make()
    play_round(engine, "k1", ["k1", "k2", "k3", "k4", "k5"], ["witch"], [])
    refused(engine, "k1", "skb.refuse.not_now")
    refused(engine, "red", "skb.refuse.not_now")
    for _ in range(2):
        feed(engine, "next")
        play_round(engine, "k1", ["k1", "k2", "k3", "k4", "k5"], ["witch"], [])
    assert engine.finished
    for word in ("next", "k1", "red"):
        refused(engine, word, "skb.refuse.game_over")


def test_other_inputs_are_refused() -> None:
    engine = make()
    refused(engine, Press("repeat"), "skb.refuse.not_now")
    refused(engine, TimerFired("discussion"), "skb.refuse.not_now")


# ---------------------------------------------------------------- undo
def test_back_undoes_one_input_at_a_time_across_the_round_until_a_verdict() -> None:
    """DESIGN: ``back`` undoes the last accepted input of the round, across its
    steps, one input at a time, until a verdict is given."""
    engine = make()
    refused(engine, "back", "refuse.nothing_to_undo")  # nothing accepted yet
    history = [copy.deepcopy(engine.state)]
    for word in ("next", "next", "red", "blue", "green", "k4", "next", "k1", "k2", "k3", "k4", "next",
                 "k5", "witch", "red"):
        feed(engine, word)
        history.append(copy.deepcopy(engine.state))
    assert engine.state.step == "witch_team"
    for state in reversed(history[:-1]):
        out = feed(engine, "back")
        assert engine.state == state
        assert keys(out)[1:] == keys(engine.prompt())
    assert engine.state.step == "quest"
    refused(engine, "back", "refuse.nothing_to_undo")


def test_back_never_reaches_past_a_verdict_or_a_score() -> None:
    engine = make()
    play_round(engine, "k1", ["k1", "k2", "k3", "k4", "k5"], ["witch"], [])
    assert engine.state.step == "round_over"
    refused(engine, "back", "refuse.nothing_to_undo")  # the score is final
    feed(engine, "next")
    refused(engine, "back", "refuse.nothing_to_undo")  # round 2 has taken nothing yet
    feed(engine, "next", "next", "next", "witch")  # the captain's tile is the witch: final
    refused(engine, "back", "refuse.nothing_to_undo")
    feed(engine, "red")
    feed(engine, "back")  # the witch team's taps after it can still be taken back
    assert engine.state.witch_team == [] and engine.state.verdict == "witch"
    refused(engine, "back", "refuse.nothing_to_undo")


def test_back_after_a_wrong_last_recommendation_reopens_the_election() -> None:
    """The last recommendation was wrong and the captain already announced."""
    engine = make()
    feed(engine, "next", "next", "red", "blue", "blue", "blue", "green", "purple", "yellow", "purple", "purple")
    before_last = copy.deepcopy(engine.state)
    feed(engine, "blue")  # purple meant to recommend themself
    assert engine.state.step == "command" and engine.state.captain == "blue"
    out = feed(engine, "back")
    assert engine.state == before_last and keys(out) == ["undo.done", "skb.vote.voter"]
    feed(engine, "purple")
    assert engine.state.captain == "purple"


def test_back_takes_back_the_elected_captains_wrong_tile() -> None:
    engine = make()
    feed(engine, "next", "next", *[w for p in COLOURS[:5] for w in (p, "green")])
    feed(engine, "k3")
    assert engine.state.step == "formation" and engine.state.captain_tile == "skb/knight/3"
    out = feed(engine, "back")
    assert engine.state.step == "command" and engine.state.captain_tile is None
    assert engine.state.captain == "green" and keys(out) == ["undo.done", "skb.phase.command.captain",
                                                             "skb.concede.hint"]
    feed(engine, "k4")
    assert engine.state.captain_tile == "skb/knight/4"


def test_back_after_next_one_tile_too_early_in_the_formation() -> None:
    """``next`` pressed before the last knight was tapped; without
    back the forgotten knight would count as left out (witch team wins)."""
    engine = make()
    feed(engine, "k1", "next", "k1", "k2", "k3", "k4", "next")
    assert engine.state.step == "left_out"
    out = feed(engine, "back")
    assert engine.state.step == "formation" and keys(out) == ["undo.done", "skb.formation.progress"]
    out = play_round(engine, "k5", [], ["witch"], [])
    assert reports(out, "formation")[0]["verdict"] == "knights"


# ---------------------------------------------------- § 7 start marker, game
def round_start_players(outputs: Sequence[Output]) -> list[str]:
    return [o.params["player"] for o in outputs
            if isinstance(o, Say) and o.key in ("skb.round.start", "skb.round.final")]


@pytest.mark.parametrize(("options", "holders"), [
    ({}, ["red", "blue", "green"]),
    ({"start_marker": "pass"}, ["red", "blue", "green"]),
    ({"start_marker": "keep"}, ["red", "red", "red"]),
])
def test_rule_7_start_marker_passes_clockwise_unless_keep(options: dict, holders: list[str]) -> None:
    """§7 [ruling]: the start marker passes one seat clockwise at rounds 2 and 3
    (configurable: keep)."""
    engine = SevenKnights(Setup(players=COLOURS[:4], options=options))
    out = engine.start()
    for _ in range(2):
        out += play_round(engine, "k1", ["k1", "k2", "k3", "k4"], ["witch"], [])
        out += feed(engine, "next")
    assert round_start_players(out) == holders
    assert said(engine.prompt(), "skb.phase.quest.centre") == {"player": holders[2]}


def test_rule_7_start_marker_wraps_around_the_table() -> None:
    engine = SevenKnights(Setup(players=COLOURS[:3]))
    engine.start()
    engine.state.start_seat = 2  # green, the last seat, holds the marker
    play_round(engine, "k1", ["k1", "k2", "k3", "k4", "k5"], ["witch"], [])
    assert round_start_players(feed(engine, "next")) == ["red"]


FULL_GAME = [
    # round 1: election (captain green), formation with the witch left out, blue held it
    ("next", "next", "red", "green", "blue", "green", "green", "green", "yellow", "red", "purple", "green",
     "k2", "k1", "k2", "k3", "k4", "k5", "next", "witch", "blue", "next"),
    # round 2: the captain taps their tile during the quest and confirms; formation out of order
    ("next", "k3", "next", "k3", "k1", "k2", "k4", "k5", "next", "witch", "green", "yellow", "next"),
    # round 3: the captain's tile is the witch
    ("next", "next", "witch", "next", "green", "next"),
]


def test_rule_7_full_three_round_game_reports() -> None:
    engine = SevenKnights(Setup(players=COLOURS[:5]))
    out = engine.start()
    for words in FULL_GAME:
        out += feed(engine, *words)
    assert reports(out) == [
        {"event": "formation", "tiles": ["skb/knight/1", "skb/knight/2", "skb/knight/3", "skb/knight/4",
                                         "skb/knight/5"], "excluded": ["skb/witch"], "verdict": "knights"},
        {"event": "round_scored", "game": "seven-knights", "round": 1,
         "points": {"red": 2, "blue": 0, "green": 2, "yellow": 2, "purple": 2},
         "totals": {"red": 2, "blue": 0, "green": 2, "yellow": 2, "purple": 2}},
        {"event": "formation", "tiles": ["skb/knight/3", "skb/knight/1", "skb/knight/2", "skb/knight/4",
                                         "skb/knight/5"], "excluded": ["skb/witch"], "verdict": "witch"},
        {"event": "round_scored", "game": "seven-knights", "round": 2,
         "points": {"red": 0, "blue": 0, "green": 3, "yellow": 3, "purple": 0},
         "totals": {"red": 2, "blue": 0, "green": 5, "yellow": 5, "purple": 2}},
        {"event": "formation", "tiles": [], "excluded": [], "verdict": "witch"},
        {"event": "round_scored", "game": "seven-knights", "round": 3,
         "points": {"red": 0, "blue": 0, "green": 7, "yellow": 0, "purple": 0},
         "totals": {"red": 2, "blue": 0, "green": 12, "yellow": 5, "purple": 2}},
        {"event": "game_over", "game": "seven-knights",
         "totals": {"red": 2, "blue": 0, "green": 12, "yellow": 5, "purple": 2}, "winners": ["green"]},
    ]
    assert engine.finished
    r = engine.result()  # the rule's part of the result (its sides, for a league, are Result.teams)
    assert (r.totals, r.winners) == ({"red": 2, "blue": 0, "green": 12, "yellow": 5, "purple": 2}, ("green",))
    assert keys(out)[-1] == "skb.game_over.winners"
    assert said(out[-1:], "skb.game_over.winners") == {"players": ["green"]}
    assert round_start_players(out) == ["red", "blue", "green"]
    assert [s for s in keys(out) if s.startswith("skb.round.")] == ["skb.round.start", "skb.round.start",
                                                                   "skb.round.final"]


def test_rule_7_tied_highest_totals_all_win() -> None:
    engine = make(4)
    for _ in range(3):
        play_round(engine, "k1", ["k1", "k2", "k3", "k4"], ["witch"], [])
        if not engine.finished:
            feed(engine, "next")
    r = engine.result()
    assert (r.totals, r.winners) == (dict.fromkeys(COLOURS[:4], 11), tuple(COLOURS[:4]))


def test_result_only_once_finished() -> None:
    with pytest.raises(RuntimeError):
        make().result()


# ------------------------------------------------------ resume and replay
def walk_every_step() -> list[tuple[str, ...]]:
    """Input prefixes that end in each step of the flow."""
    full = ("k1", "next", "k1", "k2", "k3", "k4", "k5", "witch", "next", "next", "next")
    return [(), ("next",), ("next", "next"), ("next", "next", "next"), ("k2",), ("k2", "next"),
            ("k2", "next", "k2", "next"), ("k2", "next", "k2", "k1", "k3", "k4", "k5", "witch", "next"),
            ("k2", "next", "k1", "k2", "k3", "k4", "k5", "next", "witch", "red", "next"),  # captain_check
            full[:-1], (full * 3)[:-1]]


def walk_to_the_witch_holder() -> tuple[str, ...]:
    """Basic, 6 players (no centre: the witch lay in front of a player): only
    the captain tapped for the witch team, and the captain check names them."""
    return ("k3", "next", "k1", "k2", "k3", "k4", "k5", "next", "witch", "yellow", "next", "yellow")


@pytest.mark.parametrize("words", walk_every_step())
def test_resume_after_replay_says_round_and_step_then_prompts(words: tuple[str, ...]) -> None:
    """After a power cut the journal is replayed into a fresh engine: same
    state; ``resume`` says the round and the step, then the prompt."""
    engine = make()
    feed(engine, *words)
    fresh = SevenKnights(engine.setup)
    fresh.start()
    feed(fresh, *words)
    assert fresh.state == engine.state
    out = fresh.resume()
    assert out[0] == Say(f"skb.resume.{engine.state.step}", {"round": engine.state.round})
    assert out[1:] == engine.prompt()


def test_walk_reaches_every_step() -> None:
    steps = set()
    for words in walk_every_step():
        engine = make()
        feed(engine, *words)
        steps.add(engine.state.step)
    holder = make(6)
    feed(holder, *walk_to_the_witch_holder())
    assert steps | {holder.state.step} == set(STEPS)


# -------------------------------------------------- § Table talk: secrecy
SECRET_FREE_PLAYER_LINES = {
    "skb.round.start", "skb.round.final", "skb.phase.quest", "skb.phase.quest.centre",
    "skb.phase.quest.special", "skb.phase.questions", "skb.vote.voter", "skb.vote.recorded",
    "skb.election.captain", "skb.phase.command.captain", "skb.concede.confirm", "skb.concede.done",
}


@pytest.mark.parametrize("words", [FULL_GAME[0], FULL_GAME[1],
                                   ("k1", "next", "k1", "k2", "k3", "k4", "k5", "next", "witch", "next"),
                                   ("k3", "next", "k1", "k3", "next", "k2", "k4", "k5", "witch")])
def test_table_talk_no_line_before_scoring_reveals_tiles_or_the_witch_team(words: tuple[str, ...]) -> None:
    """§ Table talk: before the witch-team step nothing names a player together
    with a tile or a team, and nothing says where an unrevealed witch is
    (e.g. in the centre when every player's tile is a knight)."""
    engine = SevenKnights(Setup(players=COLOURS[:5]))
    before: list[Output] = list(engine.start())
    revealed: set[str] = set()
    for word in words:
        if engine.state.step in ("witch_team", "round_over"):
            break
        out = engine.handle(parse(word))
        if isinstance(parse(word), Tap) and word not in COLOURS:
            revealed.add(parse(word).identity)  # type: ignore[union-attr]
        before += out
    assert not reports(before)
    for line in before:
        assert isinstance(line, Say)
        params = dict(line.params)
        assert not line.key.startswith(("skb.verdict", "skb.score", "skb.witch_team.joined")), line
        if "player" in params or "players" in params:
            assert line.key in SECRET_FREE_PLAYER_LINES, line
            assert "tile" not in params and "tiles" not in params, line
        for value in (params.get("tile"), *params.get("tiles", ())):
            assert value is None or value in revealed or line.key == "skb.setup.tiles", line
        assert "centre" not in line.key or line.key.startswith(("skb.deal", "skb.phase.quest", "skb.formation.prompt")), line


# §4: "Captain is bewitched → witch team wins" — also when nobody held an election.
def test_rule_4_unelected_bewitched_captain_gives_the_witch_team_the_round() -> None:
    engine = make()
    feed(engine, "k2", "next", "k1", "k2", "k3", "k4", "k5", "next", "witch", "red", "blue", "next")
    assert engine.state.step == "captain_check"
    out = feed(engine, "blue")  # the captain taps their card: blue is on the witch team
    assert reports(out, "formation")[0]["verdict"] == "witch"
    assert reports(out, "round_scored")[0]["points"] == {
        "red": 3, "blue": 3, "green": 0, "yellow": 0, "purple": 0}


def test_rule_4_unelected_captain_not_bewitched_keeps_the_knights_win() -> None:
    for answer in ("green", "next"):  # the captain taps a card off the witch team, or the table presses next
        engine = make()
        feed(engine, "k2", "next", "k1", "k2", "k3", "k4", "k5", "next", "witch", "red", "blue", "next")
        out = feed(engine, answer)
        assert reports(out, "formation")[0]["verdict"] == "knights"
        assert reports(out, "round_scored")[0]["points"]["green"] == 2


def test_rule_4_no_captain_question_when_it_cannot_matter() -> None:
    """A failed formation or an empty witch team: the captain's side changes nothing."""
    engine = make()
    feed(engine, "k2", "next", "k1", "k2", "k3", "k4", "k5", "next", "witch", "next")
    assert engine.state.step == "round_over"
    engine = make()
    feed(engine, "k2", "next", "k2", "k1", "k3", "k4", "k5", "next", "witch", "red", "next")
    assert engine.state.step == "round_over"


def test_back_takes_back_a_tile_that_jumped_to_the_command_phase() -> None:
    """DESIGN: a tile tapped before the command phase is the captain's own; a
    mistaken tap must not cost the round."""
    engine = make()
    feed(engine, "next")  # questions
    before = copy.deepcopy(engine.state)
    feed(engine, "k3")
    assert engine.state.step == "captain_ready"
    engine.handle(Press("back"))
    assert engine.state == before


def test_back_does_not_reach_past_a_captain_witch_verdict() -> None:
    engine = make()
    feed(engine, "witch", "next")  # the captain's tile is the witch: the formation report is out
    assert engine.state.step == "witch_team"
    with pytest.raises(Refusal):
        engine.handle(Press("back"))


# ----------------------------------------------- regressions: each was once wrong
# Worked out by hand from the spec's table: players + centre tiles.
ON_TABLE = [
    ("basic", 4, 5), ("basic", 5, 6), ("basic", 6, 6), ("basic", 7, 7), ("basic", 8, 8),
    ("special", 3, 6), ("special", 4, 7),
    ("advanced", 4, 5), ("advanced", 5, 6), ("advanced", 6, 6), ("advanced", 7, 7),
    ("cooperative", 4, 4), ("cooperative", 5, 5), ("cooperative", 6, 6), ("cooperative", 7, 7),
]


@pytest.mark.parametrize(("rule", "n", "on_table"), ON_TABLE)
def test_bug_formation_is_every_tile_on_the_table_centre_included(rule: str, n: int, on_table: int) -> None:
    """§5 revised: tiles on the table = one per player + the centre tiles
    (basic/advanced at 4-5 players: 1; special: 3; cooperative: 0).  Worked
    out by hand from the spec's table: the formation takes that many tiles
    and no more, and the left-out step runs until formation + left-out =
    that number."""
    engine = make(n, (rule,))
    tiles = list(engine.tiles)
    knights = [t for t in tiles if t != "skb/witch"]
    feed(engine, "next", "next", "next")
    engine.handle(Tap(knights[0]))
    for tile in tiles[:on_table]:
        engine.handle(Tap(tile))
    assert len(engine.state.formation) == on_table
    if on_table < len(tiles):
        refused(engine, Tap(tiles[on_table]), "skb.refuse.too_many_tiles")
    feed(engine, "back")
    feed(engine, "next")  # one tile short: one more is asked for as left out
    assert engine.state.step == "left_out"
    assert said(engine.prompt(), "skb.left_out.prompt") == {"n": 1}
    engine.handle(Tap(tiles[on_table - 1]))
    assert engine.state.step == ("witch_team" if rule != "cooperative" else "round_over")


def test_bug_centre_knight_left_out_fails_the_formation() -> None:
    """Basic, 4 players: knights 1-4 and the witch, all 5 on the table.  The
    players' tiles ascending with the witch left out used to win; the knight
    in the centre left out now fails (§5 b): the witch team (green holds the
    witch) takes 3."""
    engine = make(4)
    out = play_round(engine, "k1", ["k1", "k2", "k3"], ["witch", "k4"], ["green"])
    assert reports(out, "formation")[0]["verdict"] == "witch"
    assert points(out) == {"red": 0, "blue": 0, "green": 3, "yellow": 0}


def test_bug_special_witch_is_tappable_as_a_centre_tile() -> None:
    """Special, 3 players: 6 tiles on the table (3 players', 3 centre).  The
    witch laid fails the formation (§5 a); left out, the five knights
    ascending win."""
    laid = make(3, ("special",))
    out = play_round(laid, "k2", ["k1", "k2", "witch", "k3", "k5", "k6"], [], ["blue"])
    assert reports(out, "formation")[0] == {"event": "formation", "verdict": "witch", "excluded": [],
                                            "tiles": ["skb/knight/1", "skb/knight/2", "skb/witch",
                                                      "skb/knight/3", "skb/knight/5", "skb/knight/6"]}
    assert points(out) == {"red": 0, "blue": 3, "green": 0}
    out_ = make(3, ("special",))
    out = play_round(out_, "k2", ["k1", "k2", "k3", "k5", "k6"], ["witch"], [])
    assert reports(out, "formation")[0]["verdict"] == "knights"
    assert points(out) == {"red": 2, "blue": 2, "green": 2}


def test_bug_bewitched_captain_found_by_check_is_witch_win() -> None:
    """Basic (6 players: no centre, so the witch lay in front of a
    player), captain yellow (knight 3) bewitched, the witch's holder green
    left out; at scoring only yellow taps, ``next``; the captain check names
    yellow.  Yellow's tap answers the captain check only; the holder is then
    asked for in its own step, and green's tap is the holder's, never the
    captain's: the witch team wins, yellow 3, green 3."""
    engine = make(6)
    feed(engine, *walk_to_the_witch_holder())
    assert engine.state.step == "witch_holder" and engine.state.captain == "yellow"
    assert keys(engine.prompt()) == ["skb.witch_holder.prompt"]
    refused(engine, "next", "skb.refuse.witch_holder_must_tap")
    refused(engine, "yellow", "skb.refuse.captain_holds_a_knight")
    out = feed(engine, "green")
    assert reports(out, "formation")[0]["verdict"] == "witch"
    assert "skb.verdict.witch.captain_bewitched" in keys(out)
    assert points(out) == {"red": 0, "blue": 0, "green": 3, "yellow": 3, "purple": 0, "orange": 0}


@pytest.mark.parametrize("tile", ["k3", "witch", "k7", "skb/knight/6"])
def test_bug_tile_before_command_phase_is_not_named(tile: str) -> None:
    """A tile that slips over the reader during the quest is not
    named, checked or judged: the same line (and an accepted beep) whatever
    the tile; ``back`` drops it and the quest goes on."""
    engine = make()
    before = copy.deepcopy(engine.state)
    out = feed(engine, tile)
    assert out == [Say("skb.captain.ready")]
    assert engine.prompt() == [Say("skb.captain.ready")]
    refused(engine, "k1", "skb.refuse.captain_ready")  # the same refusal whatever was tapped
    refused(engine, "red", "skb.refuse.captain_ready")
    feed(engine, "back")
    assert engine.state == before and engine.state.step == "quest"


def test_bug_tile_before_command_phase_next_reveals_it() -> None:
    engine = make()
    feed(engine, "witch")
    out = feed(engine, "next")  # confirmed: now public, and the witch ends the round
    assert keys(out)[:2] == ["skb.captain.witch", "skb.verdict.witch.captain_witch"]
    engine = make()
    feed(engine, "k7")  # not in the 5-player tile set: refused only once the captain confirms
    refused(engine, "next", "skb.refuse.not_in_tile_set")


# § Conduct: the witch may not recommend a bewitched player, nor the reverse.
def test_conduct_a_counted_election_where_the_witch_recommended_a_bewitched_player() -> None:
    """Basic, 6 players (the witch lay in front of a player).  Blue holds the
    witch and recommended yellow, who is bewitched: once both tap at scoring
    the companion says so (``conduct``); the verdict stands."""
    engine = make(6)
    votes = {"red": "red", "blue": "yellow", "green": "red", "yellow": "red", "purple": "red", "orange": "red"}
    feed(engine, "next", "next", *[w for v, c in votes.items() for w in (v, c)])
    assert engine.state.captain == "red"
    feed(engine, "k1", "k1", "k2", "k3", "k4", "k5", "next", "witch", "blue", "yellow")
    out = feed(engine, "next")
    assert reports(out, "conduct") == [{"event": "conduct", "round": 1, "recommendations": [["blue", "yellow"]]}]
    assert said(out, "skb.conduct.note") == {"voter": "blue", "player": "yellow"}
    assert reports(out, "formation")[0]["verdict"] == "knights"  # the verdict stands
    assert points(out)["blue"] == 0 and points(out)["red"] == 2


@pytest.mark.parametrize(("team", "rounds_votes"), [
    (["blue", "yellow", "green"], {"blue": "yellow"}),  # three on the team: blue and yellow may both be bewitched
    (["blue"], {"blue": "blue"}),  # recommending oneself is allowed
])
def test_conduct_is_said_only_when_certain(team: list[str], rounds_votes: dict[str, str]) -> None:
    engine = make(6)
    votes = {p: "red" for p in COLOURS[:6]} | rounds_votes
    feed(engine, "next", "next", *[w for v, c in votes.items() for w in (v, c)])
    feed(engine, "k1", "k1", "k2", "k3", "k4", "k5", "next", "witch", *team)
    out = feed(engine, "next")
    assert not reports(out, "conduct") and "skb.conduct.note" not in keys(out)


def test_conduct_without_a_counted_election_says_nothing() -> None:
    engine = make(6)
    out = play_round(engine, "k1", ["k1", "k2", "k3", "k4", "k5"], ["witch"], ["blue", "yellow"])
    assert not reports(out, "conduct")


@pytest.mark.parametrize(("rule", "n", "cards"), [("basic", 5, 2), ("special", 3, 3), ("special", 4, 3),
                                                  ("advanced", 6, 2), ("cooperative", 4, 2)])
def test_deal_says_each_colours_player_cards_and_chips(rule: str, n: int, cards: int) -> None:
    """Seed: basic/advanced 2 player cards, special 3 (two quest passes); 2 chips each."""
    engine = SevenKnights(Setup(players=COLOURS[:n], rules=(rule,)))
    assert said(engine.start(), "skb.deal.cards") == {"cards": cards}


def test_cooperative_formation_holding_says_nothing_of_a_witch() -> None:
    engine = make(5, ("cooperative",))
    out = play_round(engine, "k1", ["k1", "k2", "k3", "k4", "k5"], [], [])
    assert "skb.formation.holds.cooperative" in keys(out) and "skb.formation.holds" not in keys(out)


@pytest.mark.parametrize("words", [("next", "next", "next"), ("k2", "next")])
def test_conceding_is_explained_when_it_first_becomes_possible(words: tuple[str, ...]) -> None:
    """FAQ: a bewitched captain may concede — said when the command phase (or
    the captain's confirmed tile) makes it possible, not in cooperative."""
    assert "skb.concede.hint" in keys(feed(make(), *words))
    assert "skb.concede.hint" not in keys(feed(make(5, ("cooperative",)), *words))


def test_bug_a_slipped_tile_is_not_named_in_the_public_log(table) -> None:
    """Regression: the accepted event of a tile tapped
    before the command phase named it; until next confirms it, it is skb/* whatever the tile."""
    from companion.core.messages import Event

    public: list[dict] = []
    table.sim.app.router.subscribe(lambda m: public.append(dict(m.fields)) if isinstance(m, Event) else None,
                                   "table")
    table.tap("game/seven-knights", "player/red", "player/blue", "player/green", "player/yellow")
    table.press("next")
    for tile in ("skb/witch", "skb/knight/3"):
        start = len(public)
        table.tap(tile)
        assert [e["input"] for e in public[start:] if e["event"] == "accepted"] == ["skb/*"]
        assert tile not in str(public[start:])
        table.press("back")  # dropped: the phase goes on


def test_the_table_view_holds_the_formation_as_laid_the_tiles_left_out_and_the_verdict() -> None:
    """What a player who missed a line needs, and only once it was said: the
    formation tile by tile (``laid``), the tiles left out (``aside``), each under
    the step that lays it (a page names the step, never the game's word), and
    the round's verdict once given; a tile tapped before the command phase is
    not named until the captain confirms it."""
    engine = make(5)
    feed(engine, "k4")  # the captain is ready: the tile not named
    facts, lines = engine.view().facts, engine.view().lines
    assert "laid" not in facts and "aside" not in facts and "verdict" not in facts and list(lines) == []
    assert "knight/4" not in str(facts)
    feed(engine, "next")  # confirmed: the formation begins, with its first tile revealed
    assert "laid" not in engine.view().facts
    seen = []
    for word in ("k1", "k2", "k4", "k3"):
        feed(engine, word)
        seen.append(parse(word).identity)  # type: ignore[attr-defined]
        assert engine.view().facts["laid"] == {"step": "formation", "tiles": seen}
        assert "aside" not in engine.view().facts and "verdict" not in engine.view().facts
    feed(engine, "next", "witch")
    facts = engine.view().facts
    assert facts["aside"] == {"step": "left_out", "tiles": ["skb/witch"]} and "verdict" not in facts
    feed(engine, "k5")  # every tile on the table: the witch team taps; no verdict yet
    assert engine.view().facts["aside"]["tiles"] == ["skb/witch", "skb/knight/5"]
    assert "verdict" not in engine.view().facts
    feed(engine, "green", "next")
    view = engine.view()
    assert view.facts["verdict"] == "witch"  # a knight left out: said, and on the board
    assert ("skb.board.verdict.witch", {}) in view.lines
    assert ("skb.board.laid", {"tiles": seen}) in view.lines
    feed(engine, "next")  # the next round: a clean table
    assert not {"laid", "aside", "verdict"} & set(engine.view().facts)
