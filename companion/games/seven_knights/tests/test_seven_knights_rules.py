"""Seven Knights Bewitched: the pure judgements — tile sets per rule set and
player count, setup checks, options, election, verdict and points.
Rules: /work/shared/rules/seven-knights-bewitched.md (§ numbers are its
"Round" list)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from companion.app import config
from companion.core.engine import Setup
from companion.core.events import Refusal, Say
from companion.games import ENGINES
from companion.games.seven_knights.engine import SevenKnights
from companion.games.seven_knights.rules import (
    ALL_TILES,
    KNIGHTS,
    WITCH,
    elect,
    formation_failure,
    judge,
    knight_number,
    options_from,
    round_points,
    winners,
)

COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")


def k(*numbers: int) -> list[str]:
    return [f"skb/knight/{n}" for n in numbers]


def test_registered_with_the_contract_attributes() -> None:
    assert ENGINES["seven-knights"] is SevenKnights
    assert SevenKnights.tag_prefixes == ("skb/",)
    assert (SevenKnights.min_players, SevenKnights.max_players) == (3, 8)
    assert SevenKnights.known_rules() == ("basic", "special", "advanced", "cooperative")


# --------------------------------------------------- § Rule sets: the table
# (rule set, players) -> (tiles used, face down in the centre, set aside unseen); None = not allowed.
TILE_SETS: dict[tuple[str, int], tuple[list[str], int, int] | None] = {
    # basic [ruling]: knights 1..N + witch at 4-5 (one left for the centre), 1..N-1 + witch at 6-8
    ("basic", 3): None,
    ("basic", 4): (k(1, 2, 3, 4) + [WITCH], 1, 0),
    ("basic", 5): (k(1, 2, 3, 4, 5) + [WITCH], 1, 0),
    ("basic", 6): (k(1, 2, 3, 4, 5) + [WITCH], 0, 0),
    ("basic", 7): (k(1, 2, 3, 4, 5, 6) + [WITCH], 0, 0),
    ("basic", 8): (list(ALL_TILES), 0, 0),
    # special: all 8; knights dealt, 3 of the rest to the centre, 2 (3p) / 1 (4p) aside
    ("special", 3): (list(ALL_TILES), 3, 2),
    ("special", 4): (list(ALL_TILES), 3, 1),
    ("special", 5): None,
    ("special", 6): None,
    ("special", 7): None,
    ("special", 8): None,
    # advanced: all 8; 1 to the centre at 4-5 players; the rest aside
    ("advanced", 3): None,
    ("advanced", 4): (list(ALL_TILES), 1, 3),
    ("advanced", 5): (list(ALL_TILES), 1, 2),
    ("advanced", 6): (list(ALL_TILES), 0, 2),
    ("advanced", 7): (list(ALL_TILES), 0, 1),
    ("advanced", 8): None,
    # cooperative [ruling]: knights 1..N, no witch, nothing left over
    ("cooperative", 3): None,
    ("cooperative", 4): (k(1, 2, 3, 4), 0, 0),
    ("cooperative", 5): (k(1, 2, 3, 4, 5), 0, 0),
    ("cooperative", 6): (k(1, 2, 3, 4, 5, 6), 0, 0),
    ("cooperative", 7): (k(1, 2, 3, 4, 5, 6, 7), 0, 0),
    ("cooperative", 8): None,
}


@pytest.mark.parametrize(("rule", "n"), sorted(TILE_SETS))
def test_rule_sets_table_tiles_centre_and_aside(rule: str, n: int) -> None:
    """§ Rule sets: which tiles each rule set uses at each player count, how
    many go face down to the centre and how many are set aside unseen."""
    players = COLOURS[:n]
    expected = TILE_SETS[(rule, n)]
    if expected is None:
        with pytest.raises(Refusal) as exc:
            SevenKnights.check_setup(players, (rule,), {})
        assert exc.value.key == "skb.refuse.rule_set_players"
        return
    SevenKnights.check_setup(players, (rule,), {})
    engine = SevenKnights(Setup(players=players, rules=(rule,)))
    tiles, centre, aside = expected
    assert list(engine.tiles) == tiles
    said = {o.key: dict(o.params) for o in engine.start() if isinstance(o, Say)}
    assert said[f"skb.rules.{rule}"] == {"n": n}
    assert said["skb.setup.tiles"] == {"tiles": tiles}
    centre_said = [said[key]["n"] for key in ("skb.deal.centre", "skb.deal.centre.one",
                                              "skb.deal.centre_from_rest") if key in said]
    aside_said = [said[key]["n"] for key in ("skb.deal.aside", "skb.deal.aside.one") if key in said]
    assert centre_said == ([centre] if centre else [])
    assert aside_said == ([aside] if aside else [])
    # special deals knights only (the witch never lies in front of a player)
    assert ("skb.deal.knights_only" in said) == (rule == "special")
    assert ("skb.deal.each" in said) == (rule != "special")
    assert n + centre + aside == len(tiles)


@pytest.mark.parametrize(("n", "rule"), [(3, "special"), (4, "basic"), (5, "basic"), (6, "basic"),
                                         (7, "basic"), (8, "basic")])
def test_default_rule_set_by_player_count(n: int, rule: str) -> None:
    """No rule card: 3 players play special, 4-8 play basic."""
    SevenKnights.check_setup(COLOURS[:n], (), {})
    assert SevenKnights(Setup(players=COLOURS[:n])).rule_name == rule


def test_rule_card_may_carry_its_prefix() -> None:
    assert SevenKnights(Setup(players=COLOURS[:4], rules=("rules/advanced",))).rule_name == "advanced"


@pytest.mark.parametrize(("n", "rules", "key"), [
    (2, (), "refuse.player_count"),
    (9, (), "refuse.player_count"),
    (4, ("basic", "advanced"), "skb.refuse.one_rule_set"),
    (4, ("special", "special"), "skb.refuse.one_rule_set"),
    (4, ("hard",), "skb.refuse.unknown_rule_set"),
    (5, ("special",), "skb.refuse.rule_set_players"),
    (8, ("advanced",), "skb.refuse.rule_set_players"),
    (8, ("cooperative",), "skb.refuse.rule_set_players"),
    (3, ("basic",), "skb.refuse.rule_set_players"),
])
def test_check_setup_refusals(n: int, rules: tuple[str, ...], key: str) -> None:
    """The rule set must suit the player count; one rule-set card at most."""
    with pytest.raises(Refusal) as exc:
        SevenKnights.check_setup(tuple(f"player{i}" for i in range(n)), rules, {})
    assert exc.value.key == key


# ------------------------------------------------------------------ options
@pytest.mark.parametrize(("options", "message"), [
    ({"start_marker": "left"}, "start_marker"),
    ({"tile_sets": ["basic"]}, "tile_sets"),
    ({"tile_sets": {"hard": {4: k(1, 2, 3, 4)}}}, "unknown rule set 'hard'"),
    ({"tile_sets": {"basic": k(1, 2, 3)}}, "tile_sets at basic: must map"),
    ({"tile_sets": {"basic": {"six": k(1, 2, 3)}}}, "player count"),
    ({"tile_sets": {"basic": {True: k(1, 2, 3)}}}, "player count"),
    ({"tile_sets": {"basic": {3: k(1, 2, 3) + [WITCH]}}}, "basic is for 4 to 8"),
    ({"tile_sets": {"basic": {4: "skb/knight/1"}}}, "list of tiles"),
    ({"tile_sets": {"basic": {4: k(1, 2, 3, 8)}}}, "unknown tile 'skb/knight/8'"),
    ({"tile_sets": {"basic": {4: k(1, 2, 3, 3)}}}, "listed twice"),
    ({"tile_sets": {"basic": {6: k(1, 2, 3, 4) + [WITCH]}}}, "cannot give one to each of 6"),
    ({"tile_sets": {"special": {4: k(1, 2, 3) + [WITCH]}}}, "3 dealable tiles"),
    ({"tile_sets": {"cooperative": {4: k(1, 2, 3, 4) + [WITCH]}}}, "no witch tile"),
])
def test_bad_options_are_refused_at_load_naming_file_line_and_entry(tmp_path: Path, options: dict,
                                                                    message: str) -> None:
    """The game's own check, run by the config schema: a bad override never reaches a table."""
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({"games": {"seven-knights": options}}))
    with pytest.raises(config.ConfigError, match=message) as e:
        config.load([p])
    assert e.value.file == str(p) and e.value.line is not None and e.value.line >= 3
    assert str(e.value).startswith(f"{p}:{e.value.line}: games.seven-knights.")


def test_tile_set_override_is_used_for_that_rule_set_and_count_only() -> None:
    """The tile set per player count is configurable (§ Rule sets)."""
    override = k(2, 3, 4, 5, 6, 7) + [WITCH]
    options = {"tile_sets": {"basic": {"6": override}}, "start_marker": "keep"}
    assert options_from(options).tile_sets == {"basic": {6: tuple(override)}}
    assert list(SevenKnights(Setup(players=COLOURS[:6], options=options)).tiles) == override
    assert list(SevenKnights(Setup(players=COLOURS[:7], options=options)).tiles) == k(1, 2, 3, 4, 5, 6) + [WITCH]
    assert options_from({}).start_marker == "pass"


# -------------------------------------------------- § Round 3: the election
SEATS = ("red", "blue", "green", "yellow", "purple")


@pytest.mark.parametrize(("start", "votes", "captain", "why"), [
    (0, {"red": "green", "blue": "green", "green": "red", "yellow": "green", "purple": "red"},
     "green", "most recommendations"),
    (0, {"red": "red", "blue": "green", "green": "green", "yellow": "red", "purple": "blue"},
     "green", "tie red/green, both recommended themselves: green is farther clockwise from red"),
    (0, {"red": "blue", "blue": "blue", "green": "red", "yellow": "red", "purple": "yellow"},
     "red", "tie blue/red: blue recommended themself, red did not"),
    (0, {"red": "yellow", "blue": "red", "green": "yellow", "yellow": "red", "purple": "purple"},
     "yellow", "tie red/yellow, neither self: yellow is farther clockwise from red"),
    (3, {"red": "yellow", "blue": "red", "green": "yellow", "yellow": "red", "purple": "purple"},
     "red", "same votes, start player yellow: red (2 seats on) beats yellow (0)"),
    (0, {"red": "red", "blue": "blue", "green": "green", "yellow": "yellow", "purple": "purple"},
     "purple", "all tied, all self: the last seat clockwise"),
    (2, {"red": "red", "blue": "blue", "green": "green", "yellow": "yellow", "purple": "purple"},
     "blue", "all tied, all self, start green: blue is farthest"),
    (0, {"red": "blue", "blue": "green", "green": "green", "yellow": "blue", "purple": "purple"},
     "blue", "tie blue/green (2 each): green self, blue not → blue"),
])
def test_rule_3_election_most_votes_then_not_self_then_farthest_clockwise(
        start: int, votes: dict[str, str], captain: str, why: str) -> None:
    """§3: most recommendations; tie → the tied player who did not recommend
    themself; still tied → the farthest clockwise from the start player."""
    assert elect(SEATS, start, votes) == captain, why


def test_rule_3_election_self_recommenders_drop_out_before_seat_distance() -> None:
    """All five tied with one vote each; red, blue and green did not recommend
    themselves, so the farthest clockwise of those three (green) is captain,
    although yellow and purple sit farther."""
    votes = {"red": "green", "blue": "red", "green": "blue", "yellow": "yellow", "purple": "purple"}
    assert elect(SEATS, 0, votes) == "green"
    assert elect(SEATS, 2, votes) == "blue"  # start green: red 3 seats on, blue 4


# ------------------------------------------------- § 5 formation verdict
@pytest.mark.parametrize(("formation", "excluded", "failure"), [
    (k(1, 2, 3, 4), [WITCH], None),
    (k(1, 3, 6), [], None),  # numbers may be missing: ascending, not consecutive
    (k(2), [], None),
    (k(1, 2) + [WITCH] + k(4), [], "witch_in_formation"),  # (a)
    ([WITCH], [], "witch_in_formation"),  # (a)
    (k(1, 2, 4), k(3), "knight_left_out"),  # (b)
    (k(1, 2, 4), [WITCH, *k(3)], "knight_left_out"),  # (b)
    (k(5), k(1, 2, 3, 4), "knight_left_out"),  # (b): a one-tile formation must not always win
    (k(1, 3, 2), [WITCH], "not_ascending"),  # (c)
    (k(4, 3, 2, 1), [], "not_ascending"),  # (c)
])
def test_rule_5_formation_verdict_a_b_c(formation: list[str], excluded: list[str],
                                        failure: str | None) -> None:
    """§5 [ruling]: knights win iff (a) no witch in the formation, (b) no
    knight left out, (c) strictly ascending."""
    assert formation_failure(formation, excluded) == failure


@pytest.mark.parametrize(("kwargs", "winner", "reason"), [
    ({"captain_tile": WITCH, "formation": [], "witch_team": ["red"]}, "witch", "captain_witch"),
    ({"captain_bewitched": True, "formation": k(1, 2, 3), "witch_team": ["red"]}, "witch",
     "captain_bewitched"),
    ({"formation": k(1, 2, 3), "excluded": [WITCH], "witch_team": ["red"]}, "knights", "formation_holds"),
    ({"formation": k(1, 2, 3), "witch_team": []}, "knights", "formation_holds"),
    ({"formation": k(2, 1, 3), "witch_team": ["red"]}, "witch", "not_ascending"),
    ({"formation": k(2, 1, 3), "witch_team": []}, "nobody", "not_ascending"),  # FAQ
    ({"formation": k(1, 2), "excluded": k(3), "witch_team": []}, "nobody", "knight_left_out"),  # FAQ
    ({"formation": k(2, 1, 3, 4), "witch_team": [], "has_witch_team": False}, "nobody", "not_ascending"),
    ({"formation": k(1, 2, 3, 4), "witch_team": [], "has_witch_team": False}, "knights", "formation_holds"),
])
def test_rule_4_5_judge(kwargs: dict, winner: str, reason: str) -> None:
    """§4 captain witch / bewitched → witch team; §5 formation; FAQ: a failed
    formation with an empty witch team scores nobody; cooperative: failed →
    nobody."""
    args = {"excluded": [], "captain_tile": KNIGHTS[0], "captain_bewitched": False,
            "has_witch_team": True, **kwargs}
    verdict = judge(args.pop("formation"), args.pop("excluded"), **args)
    assert (verdict.winner, verdict.reason) == (winner, reason)


# ------------------------------------------------------------ § 6 scoring
@pytest.mark.parametrize(("winner", "round_no", "knight_points", "witch_points"), [
    ("knights", 1, 2, 0), ("knights", 2, 2, 0), ("knights", 3, 7, 0),
    ("witch", 1, 0, 3), ("witch", 2, 0, 3), ("witch", 3, 0, 7),
    ("nobody", 1, 0, 0), ("nobody", 3, 0, 0),
])
def test_rule_6_scoring_table(winner: str, round_no: int, knight_points: int, witch_points: int) -> None:
    points = round_points(winner, round_no, SEATS, ["blue", "purple"])
    assert points == {"red": knight_points, "blue": witch_points, "green": knight_points,
                      "yellow": knight_points, "purple": witch_points}


def test_rule_7_all_tied_highest_are_winners() -> None:
    assert winners(SEATS, {"red": 9, "blue": 12, "green": 12, "yellow": 0, "purple": 11}) == ("blue", "green")
    assert winners(SEATS, dict.fromkeys(SEATS, 0)) == SEATS


def test_knight_number() -> None:
    assert [knight_number(t) for t in KNIGHTS] == [1, 2, 3, 4, 5, 6, 7]
    with pytest.raises(ValueError):
        knight_number(WITCH)
