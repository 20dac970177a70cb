"""Madness Hour: each rule of rules/madness-hour.md, named by rule, on the
engine alone.  Every expected result is worked out by hand from the spec's
tables, never by asking the engine's own rules."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from companion.core.engine import Setup
from companion.core.events import Output, Press, Refusal, Report, Say, Submit, Tap
from companion.games.madness_hour import MadnessHour

SEATS = ("red", "blue", "green", "yellow", "purple")


def new_game(n: int = 5, girl: str = "red", card: str | None = "human") -> MadnessHour:
    e = MadnessHour(Setup(players=SEATS[:n]))
    e.start()
    e.handle(Tap(f"player/{girl}"))
    e.handle(Tap(f"mh/girl/{card}") if card else Press("next"))
    return e


def to_vote(e: MadnessHour, dead: tuple[str, ...] = ()) -> None:
    for p in dead:
        e.handle(Tap(f"player/{p}"))
        e.handle(Tap("mh/state/dead"))
    e.handle(Tap("mh/climax"))
    e.handle(Press("next"))  # the discussion ended early


def vote(e: MadnessHour, votes: Mapping[str, str]) -> list[Output]:
    out: list[Output] = []
    for p, side in votes.items():
        e.handle(Tap(f"player/{p}"))
        out += e.handle(Tap(f"mh/side/{side}"))
    return out


def fight(e: MadnessHour, entries: Mapping[str, Mapping[str, int]]) -> list[Output]:
    for p, fields in entries.items():
        for f, v in fields.items():
            e.handle(Submit(p, f, v))
    return e.handle(Press("next"))


def ending(e: MadnessHour, states: Mapping[str, str], card: str | None = None) -> dict[str, Any]:
    if card:
        e.handle(Tap(f"mh/girl/{card}"))
    for p, st in states.items():
        e.handle(Tap(f"player/{p}"))
        e.handle(Tap(f"mh/state/{st}"))
    (report,) = [o for o in e.handle(Press("next")) if isinstance(o, Report)]
    assert report.event == "mh_result"
    return dict(report.fields)


def said(outputs: list[Output]) -> list[str]:
    return [o.key for o in outputs if isinstance(o, Say)]


# ------------------------------------------------------------------ set-up
@pytest.mark.parametrize(("n", "exploration", "rooms"), [(2, 22, 10), (3, 35, 17), (4, 38, 28), (5, 38, 33)])
def test_setup_cards_by_player_count(n: int, exploration: int, rooms: int) -> None:
    out = MadnessHour(Setup(players=SEATS[:n])).start()
    assert Say("mh.setup.cards", {"count": n, "exploration": exploration, "rooms": rooms}) in out


@pytest.mark.parametrize("n", [1, 6])
def test_setup_two_to_five_players_the_girl_included(n: int) -> None:
    with pytest.raises(Refusal):
        MadnessHour.check_setup(("red", "blue", "green", "yellow", "purple", "orange")[:n], (), {})


# -------------------------------------------------------------- the ending
# The spec's table, by hand: girl, girl alive → which investigators win (and the Girl iff alive).
# Investigators: blue sane alive, green mad alive, yellow sane dead, purple mad dead.
WINNER_TABLE = [
    ("human", True, ["red", "blue"]),  # the Girl + surviving sane
    ("human", False, ["green"]),  # surviving mad
    ("evil-god", True, ["red", "green"]),  # the Girl + surviving mad
    ("evil-god", False, ["blue"]),  # surviving sane
]


@pytest.mark.parametrize(("card", "alive", "expected"), WINNER_TABLE,
                         ids=[f"{c}-{'alive' if a else 'dead'}" for c, a, _ in WINNER_TABLE])
def test_ending_winner_table_only_the_living_escape(card: str, alive: bool, expected: list[str]) -> None:
    e = new_game(card=card)
    # yellow (sane) and purple (mad) die before the climax; the vote is unanimous
    to_vote(e, dead=("yellow", "purple"))
    vote(e, {"blue": "keep" if alive else "kill", "green": "keep" if alive else "kill"})
    result = ending(e, {"blue": "sane", "green": "mad"})
    dead = [p for p in SEATS if p in ("yellow", "purple") or (p == "red" and not alive)]
    assert result == {"girl": card, "girl_alive": alive, "dead": dead, "winners": expected}
    assert e.result().winners == tuple(expected)
    assert dict(e.result().totals) == {p: int(p in expected) for p in SEATS}  # each winner +1


def test_ending_the_dead_never_win_even_on_the_winning_state() -> None:
    # evil god, killed: sane survivors win — yellow, sane but dead before the climax, does not
    e = new_game(card="evil-god")
    to_vote(e, dead=("yellow",))
    vote(e, {"blue": "kill", "green": "kill", "purple": "kill"})
    with pytest.raises(Refusal) as no:
        e.handle(Tap("player/yellow"))
    assert no.value.key == "mh.refuse.state_for_dead"
    result = ending(e, {"blue": "sane", "green": "mad", "purple": "sane"})
    assert result["winners"] == ["blue", "purple"] and "yellow" in result["dead"]


def test_ending_a_state_card_for_a_dead_player_is_refused() -> None:
    e = new_game()
    to_vote(e, dead=("yellow",))
    vote(e, {"blue": "keep", "green": "keep", "purple": "keep"})
    with pytest.raises(Refusal) as no:
        e.handle(Tap("player/yellow"))
    assert no.value.key == "mh.refuse.state_for_dead"


def test_ending_the_girl_shows_her_card_now_if_she_kept_it() -> None:
    e = new_game(card=None)
    to_vote(e)
    vote(e, dict.fromkeys(("blue", "green", "yellow", "purple"), "keep"))
    with pytest.raises(Refusal) as no:
        ending(e, dict.fromkeys(("blue", "green", "yellow", "purple"), "sane"))
    assert no.value.key == "mh.refuse.ending_incomplete"  # no Girl card yet
    result = ending(e, {}, card="human")
    assert result["winners"] == list(SEATS)  # human, alive: the Girl and every sane survivor


# ------------------------------------------------------------- the climax
def test_climax_unanimous_keep_needs_no_battle() -> None:
    e = new_game(card="human")
    to_vote(e)
    out = vote(e, dict.fromkeys(("blue", "green", "yellow", "purple"), "keep"))
    assert "mh.vote.unanimous_keep" in said(out) and e.state.step == "ending"
    assert e.state.girl_alive is True and e.state.dead == []


def test_climax_unanimous_kill_needs_no_battle() -> None:
    e = new_game(card="human")
    to_vote(e)
    out = vote(e, dict.fromkeys(("blue", "green", "yellow", "purple"), "kill"))
    assert "mh.vote.unanimous_kill" in said(out) and e.state.step == "ending"
    assert e.state.girl_alive is False and e.state.dead == []  # the Girl dies; no investigator
    result = ending(e, {"blue": "sane", "green": "mad", "yellow": "mad", "purple": "sane"})
    assert result["winners"] == ["green", "yellow"]  # human, dead: surviving mad


def test_climax_a_vote_may_change_until_all_have_voted() -> None:
    e = new_game()
    to_vote(e)
    vote(e, {"blue": "kill", "green": "keep", "yellow": "keep"})
    vote(e, {"blue": "keep"})  # blue changes their mind
    vote(e, {"purple": "keep"})
    assert e.state.step == "ending" and e.state.girl_alive is True


def test_climax_higher_total_wins_and_the_losing_side_dies() -> None:
    e = new_game()
    to_vote(e)
    vote(e, {"blue": "keep", "green": "kill", "yellow": "kill", "purple": "keep"})
    # keep: blue 3 + 2 = 5, purple 1 = 1 → 6; kill: green 4, yellow 2 + 1 = 3 → 7
    out = fight(e, {"blue": {"strength": 3, "items": 2}, "purple": {"strength": 1},
                    "green": {"strength": 4}, "yellow": {"strength": 2, "items": 1}})
    assert Say("mh.battle.totals", {"keep": 6, "kill": 7}) in out and "mh.battle.won_kill" in said(out)
    assert e.state.dead == ["blue", "purple"] and e.state.girl_alive is False


def test_climax_a_tie_goes_to_the_keep_side() -> None:
    e = new_game()
    to_vote(e)
    vote(e, {"blue": "keep", "green": "kill", "yellow": "kill", "purple": "keep"})
    # keep: 4 + 3 = 7; kill: 5 + 2 = 7
    out = fight(e, {"blue": {"strength": 4}, "purple": {"strength": 3},
                    "green": {"strength": 5}, "yellow": {"strength": 2}})
    assert Say("mh.battle.totals", {"keep": 7, "kill": 7}) in out and "mh.battle.won_keep_tie" in said(out)
    assert e.state.dead == ["green", "yellow"] and e.state.girl_alive is True


def test_climax_mystic_items_add_one_each_at_most_four_per_revealing_investigator() -> None:
    e = new_game()
    to_vote(e)
    vote(e, {"blue": "keep", "green": "kill", "yellow": "kill", "purple": "keep"})
    # kill: green 1 + mystic 6 (capped +4) = 5, yellow 1 + mystic 5 (capped +4) = 5 → 10 (cap per investigator)
    # keep: blue 6 + mystic 3 (+3) = 9, purple 0 → 9
    out = fight(e, {"blue": {"strength": 6, "mystic": 3}, "purple": {"strength": 0},
                    "green": {"strength": 1, "mystic": 6}, "yellow": {"strength": 1, "mystic": 5}})
    assert Say("mh.battle.totals", {"keep": 9, "kill": 10}) in out
    assert Say("mh.battle.revealed", {"players": ["blue", "green", "yellow"]}) in out
    # blue revealed madness (and died on the losing side); green and yellow are known mad
    result = ending(e, {}, card=None)
    assert result == {"girl": "human", "girl_alive": False, "dead": ["red", "blue", "purple"],
                      "winners": ["green", "yellow"]}  # human, dead: surviving mad


def test_climax_without_phones_the_table_taps_the_winning_side() -> None:
    e = new_game(card="evil-god")
    to_vote(e)
    vote(e, {"blue": "keep", "green": "kill", "yellow": "kill", "purple": "keep"})
    e.handle(Tap("mh/side/kill"))
    assert e.state.dead == ["blue", "purple"] and e.state.girl_alive is False
    result = ending(e, {"green": "sane", "yellow": "mad"})
    assert result["winners"] == ["green"]  # evil god, dead: surviving sane


def test_climax_the_battle_waits_for_every_fighters_strength() -> None:
    e = new_game()
    to_vote(e)
    vote(e, {"blue": "keep", "green": "kill", "yellow": "kill", "purple": "keep"})
    e.handle(Submit("blue", "strength", 3))
    with pytest.raises(Refusal) as no:
        e.handle(Press("next"))
    assert no.value.params["players"] == ["green", "yellow", "purple"]
    for bad in (Submit("red", "strength", 3), Submit("blue", "luck", 1), Submit("blue", "strength", 99),
                Submit("blue", "strength", "3")):
        with pytest.raises(Refusal):
            e.handle(bad)
    assert e.sealed == {"blue": {"strength": 3}}


def test_dead_before_the_climax_do_not_vote_and_do_not_fight() -> None:
    e = new_game()
    to_vote(e, dead=("green",))
    with pytest.raises(Refusal) as no:
        e.handle(Tap("player/green"))
    assert no.value.key == "mh.refuse.dead"
    out = vote(e, {"blue": "keep", "yellow": "keep", "purple": "keep"})  # three living: unanimous
    assert "mh.vote.unanimous_keep" in said(out)


# ------------------------------------------------- the rulings (rules/madness-hour.md, [ruling]s)
def mark_dead(e: MadnessHour, *players: str) -> list[Output]:
    out: list[Output] = []
    for p in players:
        e.handle(Tap(f"player/{p}"))
        out += e.handle(Tap("mh/state/dead"))
    return out


def test_vote_closes_when_a_death_leaves_every_living_investigator_voted() -> None:
    """Three investigators, two have voted, the third is marked
    dead. By hand: the living are blue and green, both voted keep → unanimous
    keep, no battle, the Girl lives; nobody died in the climax (yellow died
    before it). Human, alive: the Girl + sane survivors = red, blue, green."""
    e = new_game(n=4, card="human")
    to_vote(e)
    vote(e, {"blue": "keep", "green": "keep"})
    out = mark_dead(e, "yellow")
    assert said(out) == ["mh.dead.marked", "mh.vote.unanimous_keep", "mh.outcome.girl_lives", "mh.ending.prompt"]
    assert e.state.step == "ending" and e.state.girl_alive is True and e.state.dead == ["yellow"]
    assert ending(e, {"blue": "sane", "green": "sane"}) == {
        "girl": "human", "girl_alive": True, "dead": ["yellow"], "winners": ["red", "blue", "green"]}


def test_vote_a_death_that_leaves_a_split_vote_opens_the_battle() -> None:
    """blue keep, green kill; yellow and purple not voted yet; purple dies, then
    yellow votes kill → the living (blue, green, yellow) all voted, split → battle.
    And a dead voter's vote is gone: blue voted then died → only green, yellow count."""
    e = new_game(n=5)
    to_vote(e)
    vote(e, {"blue": "keep", "green": "kill"})
    mark_dead(e, "purple")
    assert e.state.step == "vote"  # yellow still to vote
    out = vote(e, {"yellow": "kill"})
    assert "mh.vote.split" in said(out) and e.state.step == "battle"
    e = new_game(n=5)
    to_vote(e)
    vote(e, {"blue": "keep", "green": "kill", "yellow": "kill"})
    out = mark_dead(e, "blue", "purple")  # blue's keep is gone; green, yellow kill: unanimous
    assert "mh.vote.unanimous_kill" in said(out) and e.state.votes == {"green": "kill", "yellow": "kill"}
    assert e.state.girl_alive is False and e.state.dead == ["blue", "purple"]


def test_vote_everyone_marked_dead_in_the_vote_the_girl_walks_out_alive() -> None:
    """Blue votes kill, then blue and green are marked dead: nobody is alive → no
    battle, the Girl walks out alive. Evil god, alive: the Girl + surviving mad
    = red alone; dead: blue, green."""
    e = new_game(n=3, card="evil-god")
    to_vote(e)
    vote(e, {"blue": "kill"})
    out = mark_dead(e, "blue", "green")
    assert said(out)[-3:] == ["mh.vote.nobody_left", "mh.outcome.girl_lives", "mh.ending.ready"]
    assert e.state.step == "ending" and e.state.totals == {}
    (report,) = [o for o in e.handle(Press("next")) if isinstance(o, Report)]
    assert report.fields == {"girl": "evil-god", "girl_alive": True, "dead": ["blue", "green"], "winners": ["red"]}


def test_mystic_0_is_no_reveal_and_a_sane_investigator_stays_sane() -> None:
    """blue (keep) sends strength 3 and mystic 0; green (kill) strength 2. By hand:
    keep 3 > kill 2 → keep wins, green dies. Mystic 0 reveals nothing, so blue
    shows sane at the ending: human, alive → the Girl + sane survivors = red, blue."""
    e = new_game(n=3, card="human")
    to_vote(e)
    vote(e, {"blue": "keep", "green": "kill"})
    out = fight(e, {"blue": {"strength": 3, "mystic": 0}, "green": {"strength": 2}})
    assert "mh.battle.revealed" not in said(out) and e.state.revealed == []
    assert Say("mh.battle.totals", {"keep": 3, "kill": 2}) in out
    assert ending(e, {"blue": "sane"}) == {"girl": "human", "girl_alive": True, "dead": ["green"],
                                           "winners": ["red", "blue"]}


def test_mystic_entries_may_be_changed_or_cleared_until_the_battle_is_counted() -> None:
    """blue (keep): strength 3, items 2, mystic 2; then items 0 and mystic 0 take
    them back. green (kill): strength 4. By hand: keep 3 (not 3 + 2 + 2 = 7),
    kill 4 → kill wins, blue dies, nobody revealed; the Girl dies."""
    e = new_game(n=3, card="human")
    to_vote(e)
    vote(e, {"blue": "keep", "green": "kill"})
    for f, v in (("strength", 3), ("items", 2), ("mystic", 2), ("items", 0), ("mystic", 0)):
        e.handle(Submit("blue", f, v))
    assert e.sealed["blue"] == {"strength": 3}  # cleared, as the page shows
    out = fight(e, {"green": {"strength": 4}})
    assert Say("mh.battle.totals", {"keep": 3, "kill": 4}) in out and "mh.battle.revealed" not in said(out)
    assert e.state.dead == ["blue"] and e.state.revealed == []
    e = new_game(n=3, card="human")  # and mystic 1 is a reveal: +1, shown mad
    to_vote(e)
    vote(e, {"blue": "keep", "green": "kill"})
    out = fight(e, {"blue": {"strength": 3, "mystic": 1}, "green": {"strength": 4}})
    assert Say("mh.battle.totals", {"keep": 4, "kill": 4}) in out and e.state.revealed == ["blue"]


@pytest.mark.parametrize("card", ["human", "evil-god"])
def test_ruling_everyone_dead_before_the_climax_no_discussion_no_vote_the_girl_wins(card: str) -> None:
    """Blue and green died exploring; the climax card: no discussion (no timer),
    no vote; the Girl walks out alive and wins whichever card: winners [red],
    dead [blue, green]."""
    e = new_game(n=3, card=card)
    mark_dead(e, "blue", "green")
    out = e.handle(Tap("mh/climax"))
    assert "mh.climax.discuss" not in said(out) and not [o for o in out if type(o).__name__ == "SetTimer"]
    assert said(out) == ["mh.climax.nobody_left", "mh.outcome.girl_lives", "mh.ending.ready"]
    assert e.state.step == "ending" and e.state.girl_alive is True
    (report,) = [o for o in e.handle(Press("next")) if isinstance(o, Report)]
    assert report.fields == {"girl": card, "girl_alive": True, "dead": ["blue", "green"], "winners": ["red"]}


def test_ruling_dead_at_the_ending_is_refused_for_a_voter_and_changes_nothing() -> None:
    """A unanimous keep: blue, green, yellow all voted and all live. At the
    ending `dead` for blue is refused (only a death before the climax is marked);
    the state is as before the refusal."""
    e = new_game(n=4, card="human")
    to_vote(e)
    vote(e, {"blue": "keep", "green": "keep", "yellow": "keep"})
    e.handle(Tap("player/blue"))
    before = copy.deepcopy(e.state)
    with pytest.raises(Refusal) as no:
        e.handle(Tap("mh/state/dead"))
    assert no.value.key == "mh.refuse.dead_voter" and e.state == before
    e.handle(Tap("mh/state/sane"))
    assert ending(e, {"green": "mad", "yellow": "sane"}) == {
        "girl": "human", "girl_alive": True, "dead": [], "winners": ["red", "blue", "yellow"]}


def test_ruling_the_setup_tells_the_girl_to_put_her_other_card_back_in_the_box_unseen() -> None:
    """The seed: もう１枚のカードは、箱にしまう — said in both languages."""
    lines = Path(__file__).resolve().parents[4] / "companion" / "games" / "madness_hour" / "lines"
    en = yaml.safe_load((lines / "en.yaml").read_text())["mh.girl.card_prompt"]
    ja = yaml.safe_load((lines / "ja.yaml").read_text())["mh.girl.card_prompt"]
    assert "other Girl card back in the box unseen" in en
    assert "もう一枚は見ずに箱にしまって" in ja["text"] and "もういちまいはみずにはこにしまって" in ja["kana"]


# -------------------------------------------------------------- turn calling
def test_turns_the_girl_then_the_investigators_clockwise_skipping_the_dead() -> None:
    e = new_game(girl="green")
    calls = [e.handle(Press("next")) for _ in range(5)]
    e.handle(Tap("player/yellow"))
    e.handle(Tap("mh/state/dead"))
    calls += [e.handle(Press("next")) for _ in range(4)]
    who = [next(o.params["player"] for o in out if isinstance(o, Say) and "player" in o.params) for out in calls]
    assert who == ["green", "yellow", "purple", "red", "blue", "green", "purple", "red", "blue"]
    rounds = [o.params["round"] for out in calls for o in out if isinstance(o, Say) and o.key == "mh.turn.round"]
    assert rounds == [1, 2]


def test_the_table_shows_no_round_before_the_girl_s_first_turn() -> None:
    """A round is the Girl's turn and the investigators' after it: the climax tapped
    before any turn was called has no round to show (the TV drew "Round 0", 第0ラウンド);
    called once, the table shows round 1."""
    e = new_game()
    assert "round" not in e.public_view()
    e.handle(Tap("mh/climax"))
    assert e.state.step == "discussion" and "round" not in e.public_view()
    e = new_game()
    e.handle(Press("next"))  # the Girl's turn: round 1
    e.handle(Tap("mh/climax"))
    assert e.public_view()["round"] == 1
