"""One Night Werewolf: the reveal, the verdict (one test per victory rule), every
refusal, undo and resume.  Rules: /work/shared/rules/one-night-werewolf.md.

The ``Table`` harness runs the engine as the table loop does: timers on a
virtual clock (a delay counts from the scheduled time of the input that set
it), a journal of accepted inputs, and a power cut that replays the journal
into a fresh engine and calls ``resume()``.  test_one_night_night.py uses it too.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from companion.app import config
from companion.core.engine import Setup
from companion.core.events import (
    CancelTimer,
    Draw,
    Drawn,
    Input,
    Output,
    Press,
    Refusal,
    Report,
    Say,
    SetTimer,
    Tap,
    TimerFired,
)
from companion.games.one_night.engine import OneNight
from companion.runtime.draws import Drawer

COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white")
NEXT, BACK = Press("next"), Press("back")


def make(n: int = 5, players: tuple[str, ...] | None = None, **options: Any) -> OneNight:
    players = players or COLOURS[:n]
    OneNight.check_setup(players, (), options)
    return OneNight(Setup(players=players, options=options))


class Table:
    """An engine on a virtual clock, with a journal, as the table loop runs it:
    a ``Draw`` is answered from a seeded drawer and journaled as ``Drawn``."""

    def __init__(self, engine: OneNight, t: float = 0.0, seed: int = 0) -> None:
        self.engine = engine
        self.t = t
        self.seed = seed
        self.timers: dict[str, float] = {}  # name → due time
        self.log: list[tuple[float, Output]] = []
        self.journal: list[Input] = []

    @classmethod
    def started(cls, n: int = 5, seed: int = 0, **options: Any) -> Table:
        table = cls(make(n, **options), seed=seed)
        table._apply(table.engine.start())
        return table

    def _apply(self, outputs: list[Output]) -> list[Output]:
        draws = []
        for out in outputs:
            if isinstance(out, SetTimer):
                self.timers[out.name] = self.t + out.delay
            elif isinstance(out, CancelTimer):
                self.timers.pop(out.name, None)
            elif isinstance(out, Draw):
                draws.append(out)
            self.log.append((self.t, out))
        for request in draws:  # as the loop does: after the input's own outputs
            outputs = [*outputs, *self.feed(Drawn(request.name, Drawer(self.seed).draw(request)))]
        return outputs

    def feed(self, inp: Input) -> list[Output]:
        outputs = self.engine.handle(inp)
        self.journal.append(inp)
        return self._apply(outputs)

    def tap(self, *identities: str) -> list[Output]:
        return [out for ident in identities for out in self.feed(Tap(ident))]

    def refused(self, inp: Input) -> Refusal:
        """Feed an input that must be refused, and check that nothing changed."""
        state, undo = copy.deepcopy(self.engine.state), copy.deepcopy(self.engine._undo)
        with pytest.raises(Refusal) as info:
            self.engine.handle(inp)
        assert self.engine.state == state and self.engine._undo == undo
        return info.value

    def advance(self, seconds: float) -> None:
        """Let virtual time pass, firing every timer that falls due."""
        until = self.t + seconds
        while self.timers and min(self.timers.values()) <= until:
            name = min(self.timers, key=lambda k: self.timers[k])
            self.t = self.timers.pop(name)
            self.feed(TimerFired(name))
        self.t = until

    def run_until(self, step: str) -> None:
        while self.engine.state.step != step:
            assert self.timers, f"stuck in {self.engine.state.step}"
            self.advance(min(self.timers.values()) - self.t)

    def power_cut(self) -> Table:
        """Replay the journal into a fresh engine (timers are lost), then resume."""
        engine = OneNight(self.engine.setup)
        engine.start()
        for inp in self.journal:
            engine.handle(inp)
        table = Table(engine, self.t, self.seed)
        table.journal, table.log = list(self.journal), list(self.log)  # what was heard before the cut
        table._apply(engine.resume())
        return table

    def says(self, since: float = 0.0) -> list[tuple[float, str]]:
        return [(t, out.key) for t, out in self.log if isinstance(out, Say) and t >= since]

    def said(self, outputs: list[Output]) -> list[str]:
        return [out.key for out in outputs if isinstance(out, Say)]


def at_reveal(n: int = 5, **options: Any) -> Table:
    table = Table.started(n, **options)
    table.feed(NEXT)
    table.run_until("discussion")
    table.feed(NEXT)
    table.run_until("count")
    return table


# Final cards of five players; both werewolves among them unless a case says otherwise.
CARDS = {"red": "onw/werewolf/1", "blue": "onw/werewolf/2", "green": "onw/seer/1",
         "yellow": "onw/thief/1", "purple": "onw/villager/1"}
NO_WOLF = {"red": "onw/villager/1", "blue": "onw/villager/2", "green": "onw/seer/1",
           "yellow": "onw/thief/1", "purple": "onw/villager/3"}
ONE_WOLF = {**NO_WOLF, "blue": "onw/werewolf/2"}


def play(cards: dict[str, str], executed: list[str], n: int = 5) -> tuple[Table, list[Output]]:
    table = at_reveal(n)
    for player, card in cards.items():
        table.tap(f"player/{player}", card)
    table.tap(*(f"player/{p}" for p in executed))
    return table, table.feed(NEXT)


def report(outputs: list[Output]) -> dict[str, Any]:
    """The verdict's first fields (the seed's); the editions' (deck, final roles,
    the dead, the winning teams) are test_one_night_editions.py's."""
    (rep,) = [out for out in outputs if isinstance(out, Report) and out.event == "onw_result"]
    return {k: rep.fields[k] for k in ("executed", "winning_team", "winners")}


# --------------------------------------------------------------- victory rules
VICTORY = [
    # (rule, final cards, executed, winning team, winners)
    ("wolf among players, a werewolf executed: village wins",
     CARDS, ["red"], "village", ["green", "yellow", "purple"]),
    ("wolf among players, tie executes both werewolves: village wins",
     CARDS, ["red", "blue"], "village", ["green", "yellow", "purple"]),
    ("wolf among players, tie executes a werewolf and a villager: village wins (at least one wolf)",
     CARDS, ["blue", "purple"], "village", ["green", "yellow", "purple"]),
    ("wolf among players, only villagers executed: werewolves win",
     CARDS, ["green"], "werewolf", ["red", "blue"]),
    ("wolf among players, tie executes two villagers: werewolves win",
     CARDS, ["green", "purple"], "werewolf", ["red", "blue"]),
    ("wolf among players, everyone one vote so nobody executed: werewolves win",
     CARDS, [], "werewolf", ["red", "blue"]),
    ("one wolf among players (one in the centre), that wolf executed: village wins",
     ONE_WOLF, ["blue"], "village", ["red", "green", "yellow", "purple"]),
    ("no wolf among players, nobody executed: village wins (everyone)",
     NO_WOLF, [], "village", ["red", "blue", "green", "yellow", "purple"]),
    ("no wolf among players, someone executed: [ruling] nobody wins",
     NO_WOLF, ["green"], "nobody", []),
    ("no wolf among players, tie executes two: [ruling] nobody wins",
     NO_WOLF, ["red", "green"], "nobody", []),
]


@pytest.mark.parametrize("rule, cards, executed, team, winners", VICTORY, ids=[v[0] for v in VICTORY])
def test_victory_rule(rule: str, cards: dict[str, str], executed: list[str], team: str,
                      winners: list[str]) -> None:
    table, outputs = play(cards, executed)
    assert report(outputs) == {"executed": executed, "winning_team": team, "winners": winners}
    assert table.engine.finished
    result = table.engine.result()
    assert list(result.totals) == list(COLOURS[:5])  # every player, seat order
    assert result.totals == {p: int(p in winners) for p in COLOURS[:5]}
    assert list(result.winners) == winners


def test_thief_who_stole_a_werewolf_is_a_werewolf_and_the_robbed_wolf_is_village() -> None:
    # Dealt: red werewolf, yellow thief.  The thief swapped with red: the final cards are
    # yellow werewolf/1, red thief/1.  Executing red (a werewolf at dusk) does not save the village.
    swapped = {**CARDS, "red": "onw/thief/1", "yellow": "onw/werewolf/1"}
    _, outputs = play(swapped, ["red"])
    assert report(outputs) == {"executed": ["red"], "winning_team": "werewolf",
                               "winners": ["blue", "yellow"]}


def test_robbed_werewolf_wins_with_the_village_when_the_thief_is_executed() -> None:
    swapped = {**CARDS, "red": "onw/thief/1", "yellow": "onw/werewolf/1"}
    _, outputs = play(swapped, ["yellow"])
    assert report(outputs) == {"executed": ["yellow"], "winning_team": "village",
                               "winners": ["red", "green", "purple"]}


def test_thief_who_stole_the_only_player_wolf_leaves_no_wolf_but_himself() -> None:
    # One wolf among players (blue), the thief (yellow) takes it: blue is now the thief (village).
    swapped = {**ONE_WOLF, "blue": "onw/thief/1", "yellow": "onw/werewolf/2"}
    _, outputs = play(swapped, [])
    assert report(outputs)["winning_team"] == "werewolf"
    assert report(outputs)["winners"] == ["yellow"]


def test_verdict_lines_name_the_executed_the_rule_and_the_winners() -> None:
    table, outputs = play(CARDS, ["blue", "red"])
    assert [(o.key, dict(o.params)) for o in outputs if isinstance(o, Say)] == [
        ("onw.verdict.executed", {"players": ["red", "blue"]}),  # seat order
        ("onw.verdict.werewolf_executed", {}),
        ("onw.verdict.winners", {"players": ["green", "yellow", "purple"]}),
    ]
    _, outputs = play(NO_WOLF, ["red"])
    assert table.said(outputs) == ["onw.verdict.executed", "onw.verdict.no_werewolf_someone_executed",
                                   "onw.verdict.no_winners"]
    _, outputs = play(CARDS, [])
    assert table.said(outputs)[:2] == ["onw.verdict.nobody_executed", "onw.verdict.werewolves_survive"]


def test_seven_players_reveal_with_one_centre_card() -> None:
    cards = {"red": "onw/villager/1", "blue": "onw/villager/2", "green": "onw/villager/3",
             "yellow": "onw/villager/4", "purple": "onw/seer/1", "orange": "onw/thief/1",
             "white": "onw/werewolf/2"}
    _, outputs = play(cards, ["white"], n=7)
    assert report(outputs) == {"executed": ["white"], "winning_team": "village",
                               "winners": ["red", "blue", "green", "yellow", "purple", "orange"]}


# ----------------------------------------------------------------------- reveal
def test_reveal_prompts_for_each_player_then_the_executed() -> None:
    table = at_reveal()
    assert table.engine.prompt() == [Say("onw.count.prompt", {"players": list(CARDS)})]  # the count first
    assert table.said(table.tap("player/green")) == ["onw.reveal.card_or_vote"]  # a vote may follow
    out = table.tap("onw/seer/1")
    assert [(o.key, dict(o.params)) for o in out if isinstance(o, Say)] == [
        ("onw.reveal.role", {"player": "green", "role": "seer"})]
    assert table.engine.prompt() == [Say("onw.reveal.prompt", {"players": ["red", "blue", "yellow", "purple"]})]
    for player in ("red", "blue", "yellow"):
        table.tap(f"player/{player}", CARDS[player])
    assert table.said(table.tap("player/purple", "onw/villager/1")) == [
        "onw.reveal.role_card", "onw.reveal.role", "onw.reveal.all_done"]
    assert table.engine.prompt() == [Say("onw.reveal.executed_prompt")]
    assert table.said(table.tap("player/blue")) == ["onw.reveal.executed"]


def test_undo_in_reveal_takes_back_taps_one_by_one() -> None:
    table = at_reveal()
    table.tap("player/red", "onw/werewolf/1", "player/blue")
    assert table.engine.state.pending == "blue"
    assert table.engine.handle(BACK)[0] == Say("undo.done")
    assert table.engine.state.pending is None and table.engine.state.revealed == {"red": "onw/werewolf/1"}
    table.engine.handle(BACK)
    assert table.engine.state.pending == "red" and table.engine.state.revealed == {}
    # A wrong card is fixed with back, then the right one.
    table.tap("onw/werewolf/2")
    table.engine.handle(BACK)
    table.tap("onw/werewolf/1")
    assert table.engine.state.revealed == {"red": "onw/werewolf/1"}


def test_undo_reaches_the_last_reveal_and_executed_taps_but_not_the_verdict() -> None:
    table = at_reveal()
    for player, card in CARDS.items():
        table.tap(f"player/{player}", card)
    table.tap("player/green")
    table.engine.handle(BACK)
    assert table.engine.state.executed == []
    table.engine.handle(BACK)  # the last role card: purple must reveal again
    assert "purple" not in table.engine.state.revealed and table.engine.state.pending == "purple"
    table.tap("onw/villager/1")
    table.feed(NEXT)
    assert table.engine.finished
    assert table.refused(BACK).key == "refuse.nothing_to_undo"


# --------------------------------------------------------------------- refusals
def refusal(table: Table, inp: Input | str) -> Refusal:
    return table.refused(Tap(inp) if isinstance(inp, str) else inp)


def test_refuse_role_card_twice() -> None:
    table = at_reveal()
    table.tap("player/red", "onw/werewolf/1", "player/blue")
    r = refusal(table, "onw/werewolf/1")
    assert (r.key, r.params) == ("onw.refuse.card_twice",
                                 {"card": "onw/werewolf/1", "role": "werewolf", "player": "red"})


def test_refuse_role_card_not_in_this_deck() -> None:
    table = at_reveal(4)  # 2 villagers: villager/3 and /4 stay in the box
    table.tap("player/red")
    assert refusal(table, "onw/villager/4").key == "onw.refuse.not_in_deck"
    assert refusal(table, "onw/villager/3").key == "onw.refuse.not_in_deck"
    assert refusal(table, "onw/dragon/1").key == "onw.refuse.not_in_deck"
    table.tap("onw/villager/2")


def test_refuse_player_revealing_twice_and_executed_taps_before_all_reveals() -> None:
    table = at_reveal()
    table.tap("player/red", "onw/werewolf/1")
    r = refusal(table, "player/red")
    assert r.key == "onw.refuse.already_revealed"
    assert r.params == {"player": "red", "players": ["blue", "green", "yellow", "purple"]}


def test_refuse_role_card_before_player_card() -> None:
    assert refusal(at_reveal(), "onw/seer/1").key == "onw.refuse.player_first"


def test_refuse_player_card_while_a_role_card_is_awaited() -> None:
    table = at_reveal()
    table.tap("player/green", "onw/seer/1", "player/red")  # once a card is shown, no more votes
    r = refusal(table, "player/blue")
    assert (r.key, r.params) == ("onw.refuse.role_card_expected", {"player": "red"})


def test_refuse_player_not_in_this_game() -> None:
    table = at_reveal(4)
    r = refusal(table, "player/purple")
    assert (r.key, r.params) == ("onw.refuse.unknown_player", {"player": "purple"})


def test_refuse_next_before_all_have_revealed() -> None:
    table = at_reveal()
    for player in ("red", "blue", "green", "yellow"):
        table.tap(f"player/{player}", CARDS[player])
    r = refusal(table, NEXT)
    assert (r.key, r.params) == ("onw.refuse.reveal_incomplete", {"players": ["purple"]})
    table.tap("player/purple")
    assert refusal(table, NEXT).key == "onw.refuse.reveal_incomplete"


def test_refuse_after_all_revealed_a_centre_card_and_a_double_execution() -> None:
    table = at_reveal(3)  # red, blue, green; deck: 1 villager, 2 werewolves, seer, thief
    for player, card in {"red": "onw/werewolf/1", "blue": "onw/seer/1", "green": "onw/thief/1"}.items():
        table.tap(f"player/{player}", card)
    assert refusal(table, "onw/villager/1").key == "onw.refuse.all_revealed"
    assert refusal(table, "onw/seer/1").key == "onw.refuse.card_twice"
    table.tap("player/red")
    assert refusal(table, "player/red").key == "onw.refuse.executed_twice"


# Day 4: N players cast N votes; the executed are those with the most votes
# (2 or more each, since one vote each executes nobody): at most N // 2.
# Worked out by hand: 3 → 1, 4 → 2, 5 → 2, 6 → 3, 7 → 3.
@pytest.mark.parametrize(("n", "most"), [(3, 1), (4, 2), (5, 2), (6, 3), (7, 3)])
def test_rule_day_4_refuses_an_executed_set_the_vote_cannot_produce(n: int, most: int) -> None:
    table = at_reveal(n)
    players = list(table.engine.players)
    for player, card in zip(players, table.engine.cards, strict=False):
        table.tap(f"player/{player}", card)
    table.tap(*(f"player/{p}" for p in players[:most]))
    r = refusal(table, f"player/{players[most]}")
    assert (r.key, r.params) == ("onw.refuse.impossible_execution", {"count": n, "most": most})
    assert table.engine.state.executed == players[:most]




@pytest.mark.parametrize("where", ["deal", "discussion", "vote", "count", "done"])
def test_refuse_cards_of_another_game_wherever_they_are_not_taken(where: str) -> None:
    table = Table.started()
    if where != "deal":
        table.feed(NEXT)
        table.run_until("discussion")
    if where in ("vote", "count", "done"):
        table.feed(NEXT)
    if where in ("count", "done"):
        table.run_until("count")
    if where == "done":
        for player, card in CARDS.items():
            table.tap(f"player/{player}", card)
        table.feed(NEXT)
    assert table.engine.state.step == where
    r = refusal(table, "skb/knight/1")
    assert r.key == ("onw.refuse.finished" if where == "done" else "onw.refuse.foreign")


def test_refuse_what_each_timed_step_does_not_take() -> None:
    table = Table.started()
    assert refusal(table, "onw/seer/1").key == "onw.refuse.deal"
    assert refusal(table, "player/red").key == "onw.refuse.deal"
    assert refusal(table, TimerFired("discussion")).key == "onw.refuse.stale_timer"
    assert refusal(table, BACK).key == "refuse.nothing_to_undo"
    table.feed(NEXT)
    table.run_until("discussion")
    assert refusal(table, "player/red").key == "onw.refuse.discussion"
    assert refusal(table, "onw/seer/1").key == "onw.refuse.discussion"
    assert refusal(table, TimerFired("vote:1")).key == "onw.refuse.stale_timer"
    table.feed(NEXT)
    assert refusal(table, NEXT).key == "onw.refuse.counting"
    assert refusal(table, "player/red").key == "onw.refuse.counting"
    assert refusal(table, TimerFired("vote:2")).key == "onw.refuse.stale_timer"
    table.run_until("count")
    assert refusal(table, TimerFired("vote:3")).key == "onw.refuse.stale_timer"
    for player, card in CARDS.items():
        table.tap(f"player/{player}", card)
    table.feed(NEXT)
    assert refusal(table, NEXT).key == "onw.refuse.finished"


def test_refuse_bad_setup() -> None:
    with pytest.raises(Refusal) as r:
        OneNight.check_setup(COLOURS[:2], (), {})
    assert r.value.key == "refuse.player_count"
    with pytest.raises(Refusal) as r:
        OneNight.check_setup(COLOURS[:8] + ("black",), (), {})
    assert r.value.key == "refuse.player_count"


@pytest.mark.parametrize("options, key", [
    ({"window_s": 0}, "window_s"), ({"pace": -1}, "pace"), ({"jitter_s": [5, 1]}, "jitter_s"),
    ({"jitter_s": 3}, "jitter_s"), ({"warnings_s": [0]}, "warnings_s"), ({"masking": "maybe"}, "masking"),
    ({"discussion_min": "3"}, "discussion_min"), ({"deck": [1]}, "deck"),
    ({"deck": {4: {"villager": 1, "werewolf": 1}}}, "deck"), ({"deck": {4: {"dragon": 9}}}, "deck"),
    ({"deck": {4: {"villager": -1, "werewolf": 9}}}, "deck"),
    ({"deck": {5: {"villager": 2, "werewolf": 3, "seer": 1, "thief": 1}}}, "deck"),  # the set has 2 werewolves
    ({"edition": "daybreak"}, "edition"), ({"windows": {"dragon": 5}}, "windows"),
    ({"windows": {"seer": 0}}, "windows"), ({"windows": [5]}, "windows"),
])
def test_bad_options_are_refused_when_the_config_is_loaded(tmp_path: Path, options: dict[str, Any],
                                                           key: str) -> None:
    """One way to refuse bad options: the game's checks, run by the config
    schema, name the file, the line and the setting; no night starts with them."""
    p = tmp_path / "c.yaml"
    p.write_text(f"language: en\ngames:\n  one-night: {yaml.safe_dump(options, default_flow_style=True)}")
    with pytest.raises(config.ConfigError) as e:
        config.load([p])
    assert e.value.file == str(p) and e.value.line == 3
    assert str(e.value).startswith(f"{p}:3: games.one-night.{key} ")


# ----------------------------------------------------------------------- resume
def test_resume_in_reveal_keeps_every_tap_and_says_where_we_are() -> None:
    table = at_reveal()
    table.tap("player/red", "onw/werewolf/1", "player/blue")
    out = table.power_cut().engine.resume()
    assert out == [Say("onw.resume.reveal", {"players": ["red"]}), Say("onw.reveal.role_card", {"player": "blue"})]


def test_resume_in_deal_repeats_the_deck() -> None:
    table = Table.started(4)
    resumed = table.power_cut()
    assert resumed.said([o for _, o in resumed.log[len(table.log):]]) == [
        "onw.resume.deal", "onw.deck.intro", "onw.deck.role", "onw.deck.role", "onw.deck.role",
        "onw.deck.role", "onw.deck.centre", "onw.deal.prompt"]


def test_resume_in_the_vote_restarts_the_count() -> None:
    table = Table.started()
    table.feed(NEXT)
    table.run_until("discussion")
    table.feed(NEXT)
    table.advance(2.5)  # "one" said
    resumed = table.power_cut()
    assert resumed.says(resumed.t) == [(resumed.t, "onw.resume.vote"), (resumed.t, "onw.vote.call")]
    resumed.run_until("count")
    assert [k for _, k in resumed.says(44.5)][2:] == ["onw.vote.one", "onw.vote.two", "onw.vote.three",
                                                  "onw.count.prompt"]
    assert resumed.power_cut().engine.state.step == "count"  # the journal, with "one" twice, replays


def test_resume_when_finished_repeats_the_verdict() -> None:
    table, _ = play(CARDS, ["red"])
    resumed = table.power_cut()
    assert resumed.engine.finished
    assert resumed.said([o for _, o in resumed.log[len(table.log):]]) == [
        "onw.resume.done", "onw.verdict.werewolf_executed"]


# ------------------------------------------- the optional vote count (Day 4)
def count(table: Table, votes: dict[str, str]) -> list[Output]:
    out: list[Output] = []
    for voter, choice in votes.items():
        out += table.tap(f"player/{voter}", f"player/{choice}")
    return out


def reveal_all(table: Table) -> list[Output]:
    out: list[Output] = []
    for player, card in CARDS.items():
        out += table.tap(f"player/{player}", card)
    return out


@pytest.mark.parametrize(("votes", "executed", "line"), [
    ({"red": "blue", "blue": "green", "green": "blue", "yellow": "blue", "purple": "green"},
     ["blue"], "onw.count.executed_one"),  # blue 3, green 2: most votes
    ({"red": "blue", "blue": "green", "green": "blue", "yellow": "green", "purple": "red"},
     ["blue", "green"], "onw.count.executed"),  # blue 2, green 2: a tie executes both
    ({"red": "blue", "blue": "green", "green": "yellow", "yellow": "purple", "purple": "red"},
     [], "onw.count.everyone_tied"),  # one vote each: [ruling] nobody
])
def test_rule_day_4_vote_count_finds_the_executed(votes: dict[str, str], executed: list[str], line: str) -> None:
    table = at_reveal()
    out = count(table, votes)
    said = table.said(out)
    assert said[:2] == ["onw.count.voter", "onw.count.recorded"] or said[0] == "onw.reveal.card_or_vote"
    assert [dict(o.params) for o in out if isinstance(o, Say) and o.key == "onw.count.recorded"][-1] == {
        "player": votes["purple"], "n": 5, "count": 5}
    assert line in said
    assert table.engine.state.executed == executed
    reveal_all(table)
    assert table.engine.prompt() == [Say("onw.reveal.all_counted")]
    assert refusal(table, "player/red").key == "onw.refuse.votes_counted"  # the count holds
    assert report(table.feed(NEXT))["executed"] == executed


def test_vote_count_running_count_refusals_and_back() -> None:
    table = at_reveal()
    assert table.said(table.tap("player/red")) == ["onw.reveal.card_or_vote"]
    out = table.tap("player/blue")
    assert [(o.key, dict(o.params)) for o in out if isinstance(o, Say)] == [
        ("onw.count.recorded", {"player": "blue", "n": 1, "count": 5})]
    assert table.engine.prompt() == [Say("onw.count.waiting", {"n": 1, "count": 5})]
    r = refusal(table, "player/red")
    assert (r.key, r.params) == ("onw.refuse.already_voted", {"player": "red", "n": 4})
    assert table.said(table.tap("player/blue")) == ["onw.count.voter"]
    r = refusal(table, "onw/werewolf/2")  # a role card before the count is finished
    assert r.key == "onw.refuse.votes_incomplete" and r.params["n"] == 4
    table.tap("player/red")
    table.engine.handle(BACK)  # blue's vote taken back: blue points again
    assert table.engine.state.votes == {"red": "blue"} and table.engine.state.pending == "blue"


def test_tv_board_tally_is_the_count_as_said_aloud() -> None:
    """The public view's tally (the TV board's) holds what the count's
    lines said, vote by vote — each vote's target and how many have voted — and
    nothing else: not who pointed at whom, no tally before the count begins."""
    table = at_reveal()
    assert table.engine.public_view()["tally"] == {"for": {}, "done": 0, "of": 5, "still": list(CARDS)}
    votes = {"red": "blue", "blue": "green", "green": "blue", "yellow": "blue", "purple": "green"}
    got: dict[str, int] = {}
    for voter, choice in votes.items():
        out = table.tap(f"player/{voter}", f"player/{choice}")
        (said,) = [dict(o.params) for o in out if isinstance(o, Say) and o.key == "onw.count.recorded"]
        got[said["player"]] = got.get(said["player"], 0) + 1
        tally = table.engine.public_view()["tally"]
        still = [p for p in CARDS if p not in list(votes)[:said["n"]]]  # who still has to vote: names only
        assert tally == {"for": got, "done": said["n"], "of": said["count"], "still": still}
    assert set(json_keys(table.engine.public_view())) == {"step", "whose_turn", "tally", "for", "done", "of",
                                                            "still", "blue", "green", "edition", "deck",
                                                            "executed", *table.engine.deck}  # the deck: public


def json_keys(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [*node, *(k for v in node.values() for k in json_keys(v))]
    return [k for v in node for k in json_keys(v)] if isinstance(node, list) else []
