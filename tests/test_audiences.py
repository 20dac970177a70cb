"""Core v2: audiences, submits and secret draws, through the real loop, router,
journal and simulated hardware, with a small sealed-bid game made for the test
(no shipped game uses every mechanism yet).

- a private output (``Tell``) reaches only its player's sink: never the
  speaker, the public part of the log, the public snapshot or ``repeat``;
- a submit is journaled and replayed; ``back`` never takes one away;
- a secret draw is journaled before anything follows from it, and nothing
  stored beforehand predicts it.
"""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from companion.app import config, scores
from companion.app.simulate import Simulation, load_script
from companion.core.engine import Ask, Engine, Legal, Result
from companion.core.events import TABLE, Draw, Drawn, Input, Output, Press, Refusal, Say, Submit, Tap, Tell
from companion.core.messages import Event, seat_audience
from companion.runtime.journal import Journal
from conftest import example_script
from voice.base import RecordingVoice

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class AuctionState:
    step: str = "bidding"  # bidding | rolling | done
    marks: int = 0  # table taps of auc/mark: something back can take away
    winner: str | None = None
    die: int | None = None


class Auction(Engine):
    """Everyone submits a sealed bid (0-5) and may change it until all are in;
    then a secret die is drawn and told to the highest bidder only."""

    game: ClassVar[str] = "auction"
    tag_prefixes: ClassVar[tuple[str, ...]] = ("auc/",)
    components: ClassVar[tuple[str, ...]] = ("auc/mark",)
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    state: AuctionState
    BID = Ask("auc.field.bid", 0, 5)

    def __init__(self, setup: Any) -> None:
        super().__init__(setup)
        self.players = setup.players
        self.state = AuctionState()

    def start(self) -> list[Output]:
        return self.prompt()

    def _handle(self, inp: Input) -> list[Output]:
        st = self.state
        if isinstance(inp, Tap) and inp.identity == "auc/mark" and st.step == "bidding":
            st.marks += 1
            return [Say("auc.marked", {"n": st.marks})]
        if isinstance(inp, Submit) and st.step == "bidding" and inp.field == "bid":
            if problem := self.BID.check(inp.value):
                raise Refusal("auc.refuse.bid", f"a bid {problem}")
            self.sealed[inp.player] = inp.value
            out: list[Output] = [Tell(inp.player, "auc.bid_taken", {"bid": inp.value}, {"bid": inp.value})]
            if len(self.sealed) < len(self.players):
                return out
            st.step = "rolling"
            return [*out, Say("auc.all_in"), Draw("die", 1, 6)]
        if isinstance(inp, Drawn) and inp.name == "die" and st.step == "rolling":
            top = max(self.sealed.values())
            st.winner = next(p for p in self.players if self.sealed[p] == top)
            st.die, st.step = int(inp.value), "done"
            return [Say("auc.winner", {"player": st.winner}), Tell(st.winner, "auc.die", {"die": st.die})]
        if isinstance(inp, Press) and inp.button == "next" and st.step == "done":
            st.step = "over"
            return []
        raise Refusal("auc.refuse.not_now", "not now")

    def prompt(self) -> list[Output]:
        return [Say(f"auc.{self.state.step}")]

    def resume(self) -> list[Output]:
        return [*self.prompt(), *([Draw("die", 1, 6)] if self.state.step == "rolling" else [])]

    def public_view(self) -> dict[str, Any]:
        return {"step": self.state.step, "bids_in": len(self.sealed), "winner": self.state.winner}

    def private_view(self, player: str) -> dict[str, Any]:
        view: dict[str, Any] = {"bid": self.sealed.get(player)}
        if player == self.state.winner:
            view["die"] = self.state.die
        return view

    def legal(self, player: str | None = None) -> Legal:
        if player is not None and self.state.step == "bidding":
            return Legal(submits={"bid": self.BID})
        return super().legal(player)

    @property
    def finished(self) -> bool:
        return self.state.step == "over"

    def result(self) -> Result:
        return Result({p: int(p == self.state.winner) for p in self.players}, (self.state.winner or "",))


@dataclass
class Harness:
    """A simulated table hosting the auction, with a recording sink per audience."""

    state: Path
    seed: int | None = 1
    draws: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    heard: dict[str, list[Event]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        cfg = config.load([ROOT / "config" / "companion.yaml"], {"seed": self.seed} if self.seed is not None else None)
        self.voice = RecordingVoice()
        self.sim = Simulation(cfg, self.state, self.events.append, voice=self.voice, draws=self.draws,
                              games={"auction": Auction})
        for audience in (TABLE, seat_audience("red"), seat_audience("blue"), seat_audience("green")):
            self.sim.app.router.subscribe(self._recorder(audience), audience)

    def _recorder(self, audience: str) -> Any:
        def receive(message: Any) -> None:
            if isinstance(message, Event):
                self.heard.setdefault(audience, []).append(message)
        return receive

    def seat(self, *colours: str) -> None:
        self.sim.step("tap", "game/auction")
        for c in colours:
            self.sim.step("tap", f"player/{c}")
        self.sim.step("press", "next")

    def bid(self, player: str, value: Any) -> None:
        self.sim.step("submit", Submit(player, "bid", value))

    @property
    def engine(self) -> Auction:
        engine = self.sim.loop.table.engine
        assert isinstance(engine, Auction)
        return engine

    def close(self) -> None:
        self.sim.close()


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    h = Harness(tmp_path)
    yield h
    h.close()


def test_a_private_output_reaches_only_its_players_sink(harness: Harness) -> None:
    harness.seat("red", "blue", "green")
    harness.bid("red", 4)
    harness.bid("blue", 2)
    harness.bid("green", 3)
    tells = {aud: [e.fields for e in evs if e.name == "tell"] for aud, evs in harness.heard.items()}
    assert [t.get("data") for t in tells[seat_audience("red")]] == [{"bid": 4}, None]
    assert {t["to"] for t in tells[seat_audience("red")]} == {"red"}
    assert [t["key"] for t in tells[seat_audience("red")]] == ["auc.bid_taken", "auc.die"]  # red won: the die
    assert [t["data"] for t in tells[seat_audience("blue")]] == [{"bid": 2}]
    assert not tells.get(TABLE)  # never on the public side
    spoken = [line.key for line in harness.voice.lines]
    assert "auc.bid_taken" not in spoken and "auc.die" not in spoken and "auc.winner" in spoken
    # The public snapshot tells how many bids are in and who won, never a bid or the die.
    public = json.dumps(harness.sim.loop.read_side.public())
    assert '"bids_in": 3' in public and '"bid"' not in public and '"die"' not in public
    assert harness.sim.loop.read_side.private("red")["die"] == harness.engine.state.die
    assert "die" not in harness.sim.loop.read_side.private("blue")


def test_repeat_never_says_a_private_line_again(harness: Harness) -> None:
    harness.seat("red", "blue")
    harness.bid("red", 1)  # only a tell: nothing for the table to repeat from this input
    before = len(harness.voice.lines)
    harness.sim.step("press", "repeat")
    again = [line.key for line in harness.voice.lines[before:]]
    assert again == ["auc.bidding"] and "auc.bid_taken" not in again


def test_submits_are_public_only_as_a_fact_and_refusals_go_to_the_bidder(harness: Harness) -> None:
    harness.seat("red", "blue")
    harness.bid("red", 9)  # more than the field takes
    harness.bid("blue", 5)
    public = [e.fields for e in harness.heard[TABLE]]
    assert {"input": "submit", "player": "blue", "field": "bid"}.items() <= public[-1].items()
    assert not any("value" in e for e in public)  # what was submitted is never public
    assert not any(e["event"] == "rejected" for e in public)  # the refusal is red's alone
    (refused,) = [e.fields for e in harness.heard[seat_audience("red")] if e.name == "rejected"]
    assert refused["input"] == "submit" and "5" in refused["reason"]
    assert not any(str(9) in json.dumps(e) for e in public)
    assert harness.engine.sealed == {"blue": 5}


def test_a_player_may_change_a_submit_until_the_step_closes(harness: Harness) -> None:
    harness.seat("red", "blue")
    harness.bid("red", 1)
    harness.bid("red", 3)
    assert harness.engine.sealed == {"red": 3}
    harness.bid("blue", 0)
    harness.bid("red", 5)  # the bidding is closed now
    assert harness.engine.sealed == {"red": 3, "blue": 0}


def test_back_never_takes_a_sealed_submit_away(harness: Harness) -> None:
    harness.seat("red", "blue", "green")
    harness.sim.step("tap", "auc/mark")
    harness.bid("red", 2)
    harness.sim.step("tap", "auc/mark")
    harness.sim.step("press", "back")
    harness.sim.step("press", "back")
    assert harness.engine.state.marks == 0  # both table taps undone …
    assert harness.engine.sealed == {"red": 2}  # … the bid in between kept
    harness.sim.step("press", "back")
    last = [e for e in harness.events if e["event"] in ("accepted", "rejected")][-1]
    assert (last["event"], last["input"]) == ("rejected", "back")  # nothing left that back may take


def test_a_submit_is_journaled_and_replayed(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.seat("red", "blue", "green")
    h.bid("red", 2)
    h.bid("green", 5)
    journaled = [e.input for e in h.sim.app.journal.entries() if isinstance(e.input, Submit)]
    assert journaled == [Submit("red", "bid", 2), Submit("green", "bid", 5)]
    h.close()
    again = Harness(tmp_path)  # a power cut: the journal is all there is
    try:
        assert again.engine.sealed == {"red": 2, "green": 5}
        again.bid("blue", 1)
        assert again.engine.state.winner == "green"
    finally:
        again.close()


def test_a_secret_draw_is_journaled_before_anything_follows_from_it(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    order: list[str] = []
    h.sim.loop.observers.append(lambda stage, item, _: order.append(f"{stage}:{item.label}")
                                if isinstance(item, Drawn) else None)
    h.sim.app.router.subscribe(lambda m: order.append(f"say:{m.fields['key']}")
                               if isinstance(m, Event) and m.name == "say" else None)
    h.seat("red", "blue")
    h.bid("red", 1)
    h.bid("blue", 2)
    assert order[-4:] == ["input:draw/die", "journaled:draw/die", "say:auc.winner", "done:draw/die"]
    drawn = [e.input for e in h.sim.app.journal.entries() if isinstance(e.input, Drawn)]
    assert drawn == [Drawn("die", h.engine.state.die)]
    h.close()


def test_no_seed_is_stored_and_unseeded_draws_are_unpredictable(tmp_path: Path) -> None:
    dice = []
    for i in range(12):
        h = Harness(tmp_path / str(i), seed=None)
        h.seat("red", "blue")
        h.bid("red", 1)
        h.bid("blue", 2)
        dice.append(h.engine.state.die)
        assert h.sim.app.journal.meta("seed") is None  # nothing stored could give the next draw away
        h.close()
    assert len(set(dice)) > 1  # 12 dice all alike: 1 in 6**11 if they come from the system's source


def test_a_seed_makes_draws_reproducible_and_draws_fix_them(tmp_path: Path) -> None:
    def die(where: str, **kw: Any) -> int | None:
        h = Harness(tmp_path / where, **kw)
        h.seat("red", "blue")
        h.bid("red", 1)
        h.bid("blue", 2)
        try:
            return h.engine.state.die
        finally:
            h.close()

    assert die("a", seed=5) == die("b", seed=5)
    assert die("c", seed=5, draws={"die": 6}) == 6
    assert die("d", seed=5, draws={"die": 9}) is None  # not a die: refused, logged, never used


def test_a_resumed_table_asks_again_for_a_draw_the_cut_left_unmade(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.seat("red", "blue")
    h.bid("red", 1)
    # Cut the power after the last bid is journaled and before the draw is: drop the draw row.
    h.bid("blue", 2)
    h.sim.app.journal.db.execute("DELETE FROM inputs WHERE input LIKE '%\"draw\"%'")
    h.close()
    again = Harness(tmp_path)
    try:
        assert again.engine.state.step == "done" and again.engine.state.die is not None
        assert [e for e in again.sim.app.journal.entries() if isinstance(e.input, Drawn)]
    finally:
        again.close()


def test_a_renamed_player_keeps_their_history_and_tonights_totals(tmp_path: Path) -> None:
    """Seats are ids (player/red → red); a name from the config is only how they
    are shown, so renaming red to aki between games keeps red's evening."""
    overrides, steps, _ = load_script(example_script("seven-knights.yaml"))
    events: list[dict[str, Any]] = []
    for names in ({}, {"red": "aki"}):
        cfg = config.load([ROOT / "config" / "companion.yaml"], {**overrides, "players": {"names": names}})
        events.clear()
        sim = Simulation(cfg, tmp_path, events.append)
        for _, kind, value in steps:
            sim.step(kind, value)
        sim.close()
    journal = Journal(tmp_path / "journal.sqlite", readonly=True)
    first, second = (p["players"][0] for p in journal.plays())
    journal.close()
    assert (first["name"], second["name"]) == ("red", "aki")
    assert first["sourcePlayerId"] == second["sourcePlayerId"] == "red"
    (tonight,) = [e for e in events if e["event"] == "session_scores"]
    assert "red" not in tonight["totals"]
    assert tonight["totals"]["aki"] == first["score"] + second["score"] == 18
    out = io.StringIO()
    scores.run(argparse.Namespace(state=tmp_path, export=None, output=None, config=[]), out=out)
    assert "aki 18" in out.getvalue()


def test_pairing_takes_the_seats_card_as_proof_not_as_an_input(harness: Harness) -> None:
    """The card proves a pairing only when the table would refuse it: while
    the players are seated, red's first tap seats red and the
    phone keeps waiting; the second (red is seated already) is the proof."""
    from companion.core.messages import Command, PairRequest

    got: list[Any] = []
    harness.sim.app.router.subscribe(lambda m: got.append(m) if isinstance(m, Command) else None,
                                     seat_audience("red"))
    harness.sim.loop.submit(PairRequest("red", "n-1"))
    harness.sim.step("tap", "game/auction")
    harness.sim.step("tap", "player/red")  # the table takes it: red sits down
    assert harness.sim.loop.table.players == ["red"] and got == []
    inputs = harness.sim.app.journal.count_inputs()
    harness.sim.step("tap", "player/red")  # the table would refuse it: the proof; the fact alone is journaled
    from companion.core.events import Housekeeping

    assert [e.input for e in harness.sim.app.journal.entries()][inputs:] == [Housekeeping("paired", {"seat": "red"})]
    assert harness.sim.loop.table.players == ["red"]
    assert [(c.name, dict(c.args)) for c in got] == [("paired", {"seat": "red", "nonce": "n-1"})]
    assert [e["key"] for e in harness.events if e["event"] == "say"][-1] == "pairing.done"
    harness.sim.step("tap", "player/red")  # the next tap of the card is a tap again (refused: seated)
    assert [e["event"] for e in harness.events][-2:] == ["rejected", "say"]


def test_a_pairing_window_runs_out(harness: Harness) -> None:
    from companion.core.messages import PairRequest

    harness.sim.loop.submit(PairRequest("blue", "n-2"))
    harness.sim.step("tap", "game/auction")
    harness.sim.step("wait", 31)
    harness.sim.step("tap", "player/blue")
    assert harness.sim.loop.table.players == ["blue"]  # seated: the window had closed
