"""One Night's vote on the phones, and what the pages show of the vote, the
count and the reveal.

A phone vote is sealed until every player has voted (on a phone, or by the
table tapping their pointing), then counted exactly as the pointing is;
nothing public — speech, the public view and board, the headline, the
legal moves, another seat's page, a label, a timer — differs with whom a
phone voted for before the count (the rules' *Day* 3–4; DESIGN, *Audiences*).
The ``test_finding_...`` tests are the pages' findings on One Night's views."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from companion.app import config
from companion.app.catalogue import line_folders
from companion.app.simulate import Simulation, load_script
from companion.core.engine import Setup
from companion.core.events import TABLE, Output, Say, Submit, Tap, Tell
from companion.core.messages import Event, ReadSide
from companion.games.one_night.engine import OneNight
from companion.games.one_night.tests.test_one_night import (
    BACK,
    CARDS,
    NEXT,
    Table,
    at_reveal,
    refusal,
    report,
)
from conftest import example_script
from voice.lines import Narrator

ROOT = Path(__file__).resolve().parents[4]
LINES = Narrator(line_folders())  # the shared lines and every game's
VOTES = {"red": "blue", "blue": "green", "green": "blue", "yellow": "blue", "purple": "green"}


def voting(n: int = 5) -> Table:
    """The call is said: "one, two, three!" is still to come."""
    table = Table.started(n)
    table.feed(NEXT)
    table.run_until("discussion")
    table.feed(NEXT)
    assert table.engine.state.step == "vote"
    return table


def vote(table: Table, player: str, choice: str) -> list[Output]:
    return table.feed(Submit(player, "vote", choice))


def text(key: str, params: dict[str, Any], lang: str = "en") -> str:
    return LINES(key, params, lang).text


# ------------------------------------------------------------ the phone vote
def test_a_phone_vote_is_offered_to_each_seat_from_the_call_until_the_count() -> None:
    table = voting()
    engine = table.engine
    ask = engine.legal("red").submits["vote"]
    assert ask.choices == ("blue", "green", "yellow", "purple")  # another player, as a finger points
    vote(table, "red", "blue")
    table.run_until("count")
    assert "vote" in engine.legal("red").submits  # changed until the count
    table.tap("player/green", "player/red")  # the table taps green's pointing
    assert "vote" not in engine.legal("green").submits  # green has voted: by the table's taps
    assert refusal(table, "player/red").key == "onw.refuse.already_voted"  # red has voted: on the phone
    for voter in ("blue", "yellow", "purple"):
        vote(table, voter, "red")
    assert engine.state.step == "reveal" and engine.state.counted
    assert all("vote" not in engine.legal(p).submits for p in engine.players)  # the count holds


def test_phone_votes_are_sealed_until_everyone_has_voted_then_counted_as_the_pointing() -> None:
    phones = voting()
    for voter, choice in VOTES.items():
        assert [type(o) for o in vote(phones, voter, choice)] == [Tell]  # heard by nobody, seen by the voter
        assert phones.engine.state.votes == {}  # sealed
    phones.run_until("reveal")  # "three!": everyone has voted, so the count at once
    said = [(o.key, dict(o.params)) for _, o in phones.log if isinstance(o, Say)][-5:]
    assert said == [("onw.vote.three", {}), ("onw.count.total", {"player": "blue", "n": 3}),
                    ("onw.count.total", {"player": "green", "n": 2}),
                    ("onw.count.executed_one", {"players": ["blue"], "n": 3}),
                    ("onw.reveal.prompt", {"players": list(CARDS)})]
    pointed = at_reveal()
    for voter, choice in VOTES.items():
        pointed.tap(f"player/{voter}", f"player/{choice}")
    assert phones.engine.state.executed == pointed.engine.state.executed == ["blue"]
    assert phones.engine.state.votes == pointed.engine.state.votes == VOTES
    for table in (phones, pointed):
        for player, card in CARDS.items():
            table.tap(f"player/{player}", card)
    assert report(phones.feed(NEXT)) == report(pointed.feed(NEXT))


def test_phones_and_taps_mix_and_the_last_vote_in_closes_the_count() -> None:
    table = at_reveal()
    vote(table, "red", "blue")
    vote(table, "blue", "green")
    assert table.engine.public_view()["tally"] == {"for": {}, "done": 2, "of": 5,
                                                   "still": ["green", "yellow", "purple"]}
    assert refusal(table, "onw/seer/1").key == "onw.refuse.player_first"
    table.tap("player/green")
    assert refusal(table, "onw/seer/1").key == "onw.refuse.votes_incomplete"  # phones voted: the count first
    table.tap("player/blue")
    assert table.engine.public_view()["tally"]["for"] == {"blue": 1}  # the pointing, as said; never a phone's
    table.tap("player/yellow", "player/blue")
    out = table.tap("player/purple", "player/green")
    assert table.said(out) == ["onw.count.voter", "onw.count.recorded", "onw.count.total", "onw.count.total",
                               "onw.count.executed_one", "onw.reveal.prompt"]
    assert table.engine.state.step == "reveal" and table.engine.state.executed == ["blue"]
    assert table.engine.state.votes == VOTES | {"green": "blue"} == {
        "red": "blue", "blue": "green", "green": "blue", "yellow": "blue", "purple": "green"}


def test_a_phone_vote_may_change_until_the_count_and_back_never_takes_it() -> None:
    table = at_reveal()
    vote(table, "red", "green")
    table.tap("player/blue", "player/red")
    vote(table, "red", "blue")  # changed
    table.feed(BACK)
    table.feed(BACK)
    assert table.engine.state.votes == {}  # back takes the table's taps, not the phone's
    assert table.engine.sealed["vote"] == {"red": "blue"}
    for voter in ("blue", "green", "yellow", "purple"):
        table.tap(f"player/{voter}", f"player/{VOTES[voter]}")
    assert table.engine.state.votes["red"] == "blue" and table.engine.state.executed == ["blue"]
    assert table.power_cut().engine.state.executed == ["blue"]  # the journal holds the submits: replayed


def test_a_phone_vote_after_its_players_card_was_tapped_frees_the_table_for_the_next() -> None:
    table = at_reveal()
    table.tap("player/red")  # red's card: the pointing or the role card would follow
    vote(table, "red", "blue")  # red votes on the phone instead
    assert table.engine.state.pending is None
    assert table.engine.prompt() == [Say("onw.count.waiting", {"n": 1, "count": 5})]
    table.tap("player/blue", "player/green")
    assert table.engine.state.votes == {"blue": "green"}


def test_a_vote_for_oneself_or_nobody_at_the_table_is_refused_on_that_phone() -> None:
    table = voting()
    for value in ("red", "pink", 3):
        r = table.refused(Submit("red", "vote", value))
        assert r.key == "onw.refuse.vote_choice"
    assert table.engine.sealed == {}


# ------------------------------------------------------------------ privacy
def public_trace(engine: OneNight, inp: Any, out: list[Output]) -> Any:
    """Everything anyone but the submitting player may know after ``inp``:
    what is said and armed (every output but a tell), the public view and
    board, the headline, the legal moves of the table and of every seat, the
    input's public label, and the page of a seat that never votes on a phone
    (purple)."""
    return json.loads(json.dumps({
        "out": [repr(o) for o in out if not isinstance(o, Tell)],
        "label": engine.public_label(inp) if isinstance(inp, Submit) else inp.label,
        "view": engine.public_view(), "board": engine.board(), "headline": engine.headline(),
        "legal": repr(engine.legal()), "seats": {p: repr(engine.legal(p)) for p in engine.players},
        "purple": [engine.private_view("purple"), engine.page("purple")],
    }, default=repr))


def play_trace(inputs: list[Any]) -> list[Any]:
    """The public trace of ``inputs`` (a float: that many seconds pass) from the call on."""
    table = voting()
    trace = []
    for inp in inputs:
        if isinstance(inp, float):
            table.advance(inp)
            trace.append(public_trace(table.engine, Tap("-"), [o for t, o in table.log if t > table.t - inp]))
            continue
        label = table.engine.public_label(inp) if isinstance(inp, Submit) else inp.label
        before = public_trace(table.engine, inp, [])
        out = table.feed(inp)
        assert all(o.to == inp.player for o in out if isinstance(o, Tell))  # a tell: the voter's page only
        if label == "":  # a changed vote: not even its fact is public
            assert public_trace(table.engine, inp, []) == before
            assert [o for o in out if not isinstance(o, Tell)] == []
            continue
        trace.append(public_trace(table.engine, inp, out))
    return trace


def test_nothing_public_tells_whom_a_phone_voted_for_before_the_count() -> None:
    """Two tables whose phones vote alike but for others (one changes a vote)
    are the same to everyone but each voter, up to the count."""
    a = play_trace([Submit("red", "vote", "blue"), Submit("blue", "vote", "green"), 4.5,
                    Submit("green", "vote", "blue"), Submit("green", "vote", "yellow"), Tap("player/purple"),
                    Submit("yellow", "vote", "red")])
    b = play_trace([Submit("red", "vote", "green"), Submit("blue", "vote", "red"), 4.5,
                    Submit("green", "vote", "purple"), Tap("player/purple"), Submit("yellow", "vote", "blue")])
    assert a == b
    assert [t["view"]["tally"]["done"] for t in a] == [1, 2, 2, 3, 3, 4]


def test_a_seat_sees_its_own_vote_and_never_anothers() -> None:
    table = voting()
    vote(table, "red", "blue")
    engine = table.engine
    assert engine.private_view("red") == {"vote": "blue", "open": True}
    assert engine.page("red") == [("onw.page.vote_open", {"player": "blue"})]
    assert all(engine.private_view(p) == {} and engine.page(p) == [] for p in engine.players if p != "red")


def test_on_the_table_the_public_side_is_the_same_whoever_the_phones_voted_for(tmp_path: Path) -> None:
    """The shipped ten-player script on the simulated table, against the same
    script with every phone's choice moved on by one seat: the public page
    and every event the table hears are the same until the count, and each
    vote is told to its own seat only."""
    script = load_script(example_script("one-night/ultimate-10p-phones.yaml"))
    players = ["red", "blue", "green", "yellow", "purple", "orange", "white", "black", "pink", "grey"]

    def moved(value: Any) -> Any:
        if not isinstance(value, Submit) or value.player == value.value:
            return value
        choice = players[(players.index(value.value) + 1) % len(players)]
        return Submit(value.player, "vote", choice if choice != value.player else players[(players.index(choice) + 1) % 10])

    def public(steps: list[tuple[str, Any]], state: Path) -> list[Any]:
        cfg = config.load([ROOT / "config" / "companion.yaml"], script.overrides or None)
        heard: list[Event] = []
        read_side = ReadSide()
        sim = Simulation(cfg, state, lambda e: None, draws=script.draws, read_side=read_side)
        sim.app.router.subscribe(lambda m: heard.append(m) if isinstance(m, Event) else None)
        seen: list[Any] = []
        try:
            for kind, value in steps:
                before = len(heard)
                sim.step(kind, value)
                for e in heard[before:]:
                    if e.fields.get("event") == "tell":
                        assert e.audience == f"player:{value.player}", e
                snap = copy.deepcopy(read_side.public())
                snap.pop("headline", None)  # its deadline is a wall-clock time: the words are the pages'
                seen.append((snap, [dict(e.fields) for e in heard[before:] if e.audience == TABLE]))
                engine = sim.loop.table.engine
                if engine is not None and engine.state.counted:
                    break
        finally:
            sim.close()
        return seen

    steps = [(kind, value) for _, kind, value in script.steps]
    a = public(steps, tmp_path / "a")
    b = public([(kind, moved(value)) for kind, value in steps], tmp_path / "b")
    assert len(a) == len(b) and a[:-1] == b[:-1]  # the last step is the count: it says the totals
    assert a[-1] != b[-1]


# ----------------------------------------------------- the pages' findings
def test_finding_the_roles_in_play_are_on_the_board_for_the_whole_game() -> None:
    table = at_reveal()
    board = table.engine.board()
    deck = table.engine.deck  # the seed's default for five: 2 werewolves, seer, thief, 3 villagers
    assert board[0] == ("onw.board.deck", {"cards": sum(deck.values())})
    assert [(k, p["role"], p["count"]) for k, p in board[1:1 + len(deck)]] == [
        ("onw.board.deck_role" if n > 1 else "onw.board.deck_role_one", role, n) for role, n in deck.items()]
    assert [text(k, p) for k, p in board[:3]] == ["In play, 7 cards:", "Villager ×3", "Werewolf ×2"]
    assert [text(k, p, "ja") for k, p in board[:3]] == ["使う役職（7枚）：", "村人3枚", "人狼2枚"]
    deal = Table.started()
    assert deal.engine.board()[:1 + len(deck)] == board[:1 + len(deck)]  # from the deal on


def test_finding_the_deck_being_tapped_is_on_the_board_before_the_start(tmp_path: Path) -> None:
    cfg = config.load([ROOT / "config" / "companion.yaml"], None)
    read_side = ReadSide()
    sim = Simulation(cfg, tmp_path, lambda e: None, read_side=read_side)
    try:
        for tap in ("game/one-night", "rules/ultimate", "onw/werewolf/1", "onw/werewolf/2", "onw/robber/1"):
            sim.step("tap", tap)
        board = [line["text"] for line in read_side.public()["board"]]
        assert board == ["In play, 3 cards:", "Werewolf ×2", "Robber"]
    finally:
        sim.close()


def test_finding_the_vote_and_the_reveal_have_their_own_prompts() -> None:
    table = voting()
    assert table.engine.prompt() == [Say("onw.vote.prompt")]
    table.run_until("count")
    assert table.engine.prompt() == [Say("onw.count.prompt", {"players": list(CARDS)})]
    for voter, choice in VOTES.items():
        table.tap(f"player/{voter}", f"player/{choice}")
    assert table.engine.prompt() == [Say("onw.reveal.prompt", {"players": list(CARDS)})]
    for lang in ("en", "ja"):
        count = text("onw.count.prompt", {"players": ["red"]}, lang)
        reveal = text("onw.reveal.prompt.first", {"players": ["red"]}, lang)
        assert len(count.split()) <= 30 and ("count" in count or "数え" in count)
        assert "count" not in reveal and "数え" not in reveal  # the reveal's line is the reveal's only


def test_finding_while_votes_are_counted_the_step_is_the_count_and_counts_votes() -> None:
    table = at_reveal()
    engine = table.engine
    assert engine.state.step == "count"
    assert engine.headline()["count"] == {"done": 0, "of": 5, "what": "votes"}
    assert text("step.one-night.count", {}) == "the count" and text("step.one-night.count", {}, "ja") == "集計"
    table.tap("player/red", "player/blue")
    assert engine.headline()["count"] == {"done": 1, "of": 5, "what": "votes"}
    assert engine.headline()["waiting_for"] == ["blue", "green", "yellow", "purple"]


def test_finding_the_tally_names_who_still_has_to_vote() -> None:
    table = at_reveal()
    table.tap("player/red", "player/blue", "player/green", "player/blue")
    assert table.engine.public_view()["tally"]["still"] == ["blue", "yellow", "purple"]
    board = [text(k, p) for k, p in table.engine.board()]
    assert board[-3:] == ["Blue: 2 votes", "2 of 5 have voted.", "Still to vote: Blue, Yellow and Purple."]


def test_finding_the_executed_stay_on_the_board_and_in_the_result() -> None:
    table = at_reveal()
    for voter, choice in VOTES.items():
        table.tap(f"player/{voter}", f"player/{choice}")
    for player, card in CARDS.items():
        table.tap(f"player/{player}", card)
    table.feed(NEXT)
    engine = table.engine
    assert engine.finished
    assert engine.public_view()["executed"] == ["blue"]  # the result keeps the finished game's public view
    assert text(*engine.board()[-1]) == "Executed: Blue."


@pytest.mark.parametrize(("lang", "one", "two"), [
    ("en", "Executed, with 3 votes: Blue.", "Executed, with 2 votes each: Blue and Green."),
    ("ja", "3票で処刑されるのは、青です。", "それぞれ2票で処刑されるのは、青、緑です。"),
])
def test_finding_one_executed_player_is_said_in_the_singular(lang: str, one: str, two: str) -> None:
    alone = at_reveal()
    for voter, choice in VOTES.items():
        alone.tap(f"player/{voter}", f"player/{choice}")
    (line,) = [o for _, o in alone.log if isinstance(o, Say) and o.key.startswith("onw.count.executed")]
    assert text(line.key, dict(line.params), lang) == one
    tie = at_reveal()
    for voter, choice in {**VOTES, "yellow": "green", "purple": "red"}.items():
        tie.tap(f"player/{voter}", f"player/{choice}")
    (line,) = [o for _, o in tie.log if isinstance(o, Say) and o.key.startswith("onw.count.executed")]
    assert text(line.key, dict(line.params), lang) == two


def test_a_deck_of_every_role_is_counted_on_the_board() -> None:
    """Both editions' every role: the board names each, as the deal says it."""
    for rules, deck in ((("ultimate",), ("doppelganger", "werewolf", "minion", "mason", "mason", "seer", "robber",
                                         "troublemaker", "drunk", "insomniac", "hunter", "tanner", "villager")),
                        ((), ("werewolf", "werewolf", "seer", "thief", "madman", "tanner", "villager", "villager",
                              "villager"))):
        players = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black", "pink", "grey")
        cards = [f"onw/{r}/{deck[:i].count(r) + 1}" if r != "robber" else "onw/robber/1" for i, r in enumerate(deck)]
        n = len(deck) - (3 if rules else 2)
        engine = OneNight(Setup(players[:n], rules, {}, tuple(cards)))
        shown = [p["role"] for k, p in engine.board() if k.startswith("onw.board.deck_role")]
        assert sorted(shown) == sorted(set(deck))


# ------------------------------------------------------------- downstream
def test_finding_two_tanners_who_die_are_two_teams_of_one_in_the_league() -> None:
    """The tanner is alone (rules, *Who wins* 1: each tanner who dies wins):
    with the doppelganger a second tanner, the league rates each as a side of
    its own, not the two as one team."""
    from venue import league

    cards = ("onw/doppelganger/1", "onw/tanner/1", "onw/werewolf/1", "onw/werewolf/2", "onw/seer/1",
             "onw/robber/1", "onw/troublemaker/1", "onw/villager/1")
    table = Table(OneNight(Setup(("red", "blue", "green", "yellow", "purple"), ("ultimate",), {}, cards)))
    table._apply(table.engine.start())
    table.feed(NEXT)
    table.run_until("discussion")
    table.feed(NEXT)
    table.run_until("count")
    for voter, choice in {"red": "blue", "blue": "red", "green": "red", "yellow": "blue", "purple": "green"}.items():
        vote(table, voter, choice)  # red 2, blue 2: both executed
    table.tap("player/red", "onw/tanner/1", "player/blue", "onw/doppelganger/1", "onw/tanner/1",
              "player/green", "onw/werewolf/1", "player/yellow", "onw/seer/1", "player/purple", "onw/villager/1")
    table.feed(NEXT)
    result = table.engine.result()
    assert set(result.winners) == {"red", "blue"}
    # as the outbox sends the play to the venue
    players = [{"name": p, "seat": p, "winner": p in result.winners, "team": result.teams.get(p), "place": None}
               for p in table.engine.players]
    sides, ranks = league.sides(players, "teams")
    assert sorted(s for s, r in zip(sides, ranks, strict=True) if r == 1) == [[0], [1]]  # red alone, blue alone


def test_the_bg_stats_export_records_every_players_final_role_of_every_role(tmp_path: Path) -> None:
    from companion.runtime.journal import Journal
    from web.bgstats import record

    for name in ("ultimate-10p-phones", "jinrou-7p-phones"):
        path = example_script(f"one-night/{name}.yaml")
        script = load_script(path)
        sim = Simulation(config.load([ROOT / "config" / "companion.yaml"], script.overrides), tmp_path / name,
                         lambda e: None, draws=script.draws)
        try:
            for _, kind, value in script.steps:
                sim.step(kind, value)
        finally:
            sim.close()
        journal = Journal(tmp_path / name / "journal.sqlite", readonly=True)
        try:
            (played,) = journal.plays()
        finally:
            journal.close()
        final = yaml.safe_load(path.read_text())["expect"]["onw_result"]["final_roles"]
        assert {p["name"]: p["role"] for p in record(played)["players"]} == final
