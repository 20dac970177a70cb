"""Demagogos' Trap at the table: the shipped scripts against their hand-worked
results, secrecy through the real loop and router, and a power cut mid-round.

The secrecy test asks the strongest question: two games that differ only in
private facts (sealed bids, role dice that give the same role, the contents of
boxes never opened, a gift) must look *exactly* alike to the table — every
TABLE-audience event and every public snapshot — so nothing private can be
derived from anything public.  Games that differ in a role look alike until the
round's end announces the roles.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from companion.app.simulate import load_script
from companion.core.events import TABLE, Submit
from companion.core.messages import Event, seat_audience
from companion.games.demagogos import Demagogos
from conftest import Table as SimTable
from conftest import example_script, example_scripts

ROOT = Path(__file__).resolve().parents[4]
SCRIPTS = example_scripts("demagogos/*.yaml")
SIX = example_script("demagogos/6p.yaml")
SEATS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")
PRIVATE_KEYS = {"dt.bid.taken", "dt.paid", "dt.role.sage", "dt.role.demagogue", "dt.sage.boxes",
                "dt.demagogue.box", "dt.gift.sent", "dt.gift.received"}


class Table(SimTable):
    """The shared simulated table with a recorder on the public audience and each seat's."""

    def __init__(self, state: Path, draws: dict[str, Any], overrides: dict[str, Any] | None = None) -> None:
        self.public: list[dict[str, Any]] = []  # TABLE events, without their time
        self.seats: dict[str, list[dict[str, Any]]] = {}
        self.snapshots: list[str] = []
        super().__init__(state, draws=draws, **(overrides or {}))
        self.sim.app.router.subscribe(self._public, TABLE)
        for seat in SEATS:
            self.sim.app.router.subscribe(self._seat(seat), seat_audience(seat))

    def _public(self, message: Any) -> None:
        if isinstance(message, Event):
            self.public.append({k: v for k, v in message.fields.items() if k != "t"})

    def _seat(self, seat: str) -> Any:
        def receive(message: Any) -> None:
            if isinstance(message, Event):
                self.seats.setdefault(seat, []).append(dict(message.fields))
        return receive

    def step(self, kind: str, value: Any) -> None:
        self.sim.step(kind, value)
        self.snapshots.append(json.dumps(self.sim.loop.read_side.public(), sort_keys=True))

    @property
    def engine(self) -> Demagogos:
        engine = self.sim.loop.table.engine
        assert isinstance(engine, Demagogos)
        return engine


def script(path: Path) -> tuple[list[tuple[str, Any]], dict[str, Any], dict[str, Any]]:
    loaded = load_script(path)
    expect = yaml.safe_load(path.read_text())["expect"]
    return [(kind, value) for _, kind, value in loaded.steps], dict(loaded.draws), expect


def play(state: Path, steps: list[tuple[str, Any]], draws: dict[str, Any],
         overrides: dict[str, Any] | None = None) -> Table:
    table = Table(state, draws, overrides)
    for kind, value in steps:
        table.step(kind, value)
    return table


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_the_shipped_scripts_give_the_results_worked_out_by_hand(path: Path, tmp_path: Path) -> None:
    steps, draws, expect = script(path)
    table = play(tmp_path, steps, draws, load_script(path).overrides)
    table.close()
    evs = table.events
    assert not [e for e in evs if e["event"] == "error"]
    assert [e["points"] for e in evs if e["event"] == "round_scored"] == expect["points"]
    assert [[e["box"], e["content"], e["player"], e["gems"]] for e in evs if e["event"] == "dt_box"] == expect["boxes"]
    assert [[e["player"], e["place"]] for e in evs if e["event"] == "dt_exit"] == expect["exits"]
    over = [e for e in evs if e["event"] == "game_over"]
    if "winners" in expect:
        assert [(o["winners"], o["totals"]) for o in over] == [(expect["winners"], expect["totals"])]
    else:
        assert not over


def _replace(steps: list[tuple[str, Any]], old: Submit, new: Submit | None, nth: int = 0) -> list[tuple[str, Any]]:
    """The steps with the ``nth`` submit equal to ``old`` replaced (None: removed)."""
    out, seen = [], 0
    for kind, value in steps:
        if kind == "submit" and value == old:
            if seen == nth:
                seen += 1
                if new is not None:
                    out.append((kind, new))
                continue
            seen += 1
        out.append((kind, value))
    assert seen > nth, old
    return out


def _changes(snapshots: list[str]) -> list[str]:
    return [s for i, s in enumerate(snapshots) if i == 0 or s != snapshots[i - 1]]


def test_games_differing_only_in_private_facts_look_exactly_alike_to_the_table(tmp_path: Path) -> None:
    steps, draws, _ = script(SIX)
    other = copy.deepcopy(steps)
    other = _replace(other, Submit("blue", "bid", 0), Submit("blue", "bid", 1))  # a losing role bid
    other = _replace(other, Submit("purple", "bid", 6), Submit("purple", "bid", 9))  # a refused bid
    i = other.index(("submit", Submit("red", "vp_bid", 2)))
    other.insert(i - 1, ("submit", Submit("blue", "gift", {"to": "green", "gems": 1})))  # a gift, round 3
    other_draws = {**draws,
                   "r1:role:red": 2, "r1:role:green": 4,  # other dice, the same roles
                   "r1:cave": [1, 2, 3, 5, 4, 6, 7],  # the disaster in box 5 instead of 4: never opened
                   "r3:role:orange": 3}
    a = play(tmp_path / "a", steps, draws)
    b = play(tmp_path / "b", other, other_draws)
    a.close()
    b.close()
    assert [e["key"] for e in b.seats["green"] if e["event"] == "tell"].count("dt.gift.received") == 1  # it differed
    assert a.public == b.public
    # b has one step more (the gift); the public snapshot it leaves is the one before it
    assert _changes(a.snapshots) == _changes(b.snapshots)
    assert [e for e in a.seats["blue"] if e["event"] == "tell"] != [e for e in b.seats["blue"] if e["event"] == "tell"]
    assert any(e["event"] == "accepted" and e["field"] == "gift" for e in b.seats["blue"])  # the giver's own
    for ev in a.public:
        assert ev["event"] != "tell" and "value" not in ev and "data" not in ev, ev
        assert ev.get("key") not in PRIVATE_KEYS, ev
        assert not (ev["event"] == "accepted" and ev.get("field") in ("gift", "exchange")), ev


def test_a_role_stays_secret_until_the_round_end_announces_it(tmp_path: Path) -> None:
    steps, draws, _ = script(SIX)
    swapped = {**draws, "r1:role:red": 6, "r1:role:green": 1}  # red the demagogue, green the sage
    a = play(tmp_path / "a", steps[:40], draws)
    b = play(tmp_path / "b", steps[:40], swapped)
    a.close()
    b.close()

    def before_round_end(public: list[dict[str, Any]]) -> list[dict[str, Any]]:
        keys = [e.get("key") for e in public]
        return public[:keys.index("dt.round_end.start")]

    assert before_round_end(a.public) == before_round_end(b.public)
    assert a.public != b.public  # and then the roles are said

    def ended(snapshot: str) -> bool:  # the public page's board names the roles
        return any(line["key"].startswith("dt.board.result.") for line in json.loads(snapshot)["board"])

    end = next(i for i, s in enumerate(a.snapshots) if ended(s))
    assert a.snapshots[:end] == b.snapshots[:end]  # the page, its board included, alike till then
    assert a.snapshots[end] != b.snapshots[end]
    told = [e["data"] for e in a.seats["red"] if e["event"] == "tell" and e.get("data", {}).get("role")]
    assert told == [{"role": "sage"}]


def test_a_power_cut_mid_round_resumes_with_the_same_bids_boxes_and_pages(tmp_path: Path) -> None:
    steps, draws, _ = script(SIX)
    cut = next(i for i, (k, v) in enumerate(steps) if k == "tap" and v == "dt/box/2")  # mid-cave, round 1
    whole = play(tmp_path / "whole", steps[:cut + 1], draws)
    half = play(tmp_path / "cut", steps[:cut - 3], draws)  # cut inside the turn auction
    half.close()
    again = Table(tmp_path / "cut", draws)
    assert again.engine.sealed == {"turn": {"blue": 0, "yellow": 2}}  # the bids in survive the cut
    for kind, value in steps[cut - 3:cut + 1]:
        again.step(kind, value)
    try:
        assert again.engine.state == whole.engine.state
        for seat in SEATS[:6]:
            assert again.sim.loop.read_side.private(seat) == whole.sim.loop.read_side.private(seat)
        assert again.sim.loop.read_side.public() == whole.sim.loop.read_side.public()
    finally:
        again.close()
        whole.close()


def test_a_draw_the_cut_left_unmade_is_asked_again_on_resume(tmp_path: Path) -> None:
    steps, draws, _ = script(SIX)
    last_bid = steps.index(("tap", "dt/box/1")) - 1  # the turn auction's last bid: the cave's draw follows
    table = play(tmp_path, steps[:last_bid + 1], draws)
    table.sim.app.journal.db.execute("DELETE FROM inputs WHERE input LIKE '%\"r1:cave\"%'")
    table.close()
    again = Table(tmp_path, draws)
    try:
        assert again.engine.state.step == "cave"
        assert again.engine.state.contents[:4] == ["treasure", "treasure", "treasure", "disaster"]
    finally:
        again.close()


def test_back_right_after_the_start_returns_to_seating_and_never_after_a_bid(tmp_path: Path) -> None:
    steps, draws, _ = script(SIX)
    table = play(tmp_path, steps[:8], draws)  # the game card, six players, next
    try:
        table.step("press", "back")
        assert table.sim.loop.table.engine is None and [e["event"] for e in table.public][-2] == "game_unstarted"
        table.step("press", "next")
        table.step("submit", Submit("red", "bid", 2))
        table.step("press", "back")  # a sealed bid is the player's: back cannot take it, nor leave the game
        assert table.engine.sealed == {"role": {"red": 2}}
        assert table.public[-2]["event"] == "rejected"
    finally:
        table.close()


BOARD_KEYS = {"dt.board.vp", "dt.board.exited", "dt.board.holders", "dt.board.explorers", "dt.board.order",
              "dt.board.bids_in", "dt.board.boxes", "dt.board.vp_auction.none", "dt.board.vp_auction.leads",
              "dt.board.vp_auction.bid", *(f"dt.board.box.{c}" for c in ("treasure", "empty", "disaster", "voided")),
              *(f"dt.board.result.{r}" for r in ("sage.won", "sage.lost", "demagogue.won", "demagogue.hit"))}
PUBLIC_PLAY = {"step", "round", "vp", "exited", "active", "holders", "explorers", "boxes", "opened", "results",
               "bids_in", "turn", "vp_auction", "whose_turn", "rounds",
               "totals"}  # the VP now (the scoreboard's Total): the same public numbers as "vp"


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_whole_seeded_games_never_show_a_private_fact_in_public(tmp_path: Path, seed: int) -> None:
    """Random play from the pages' own legal forms, the draws from the seed; after
    every step the new TABLE events and the public snapshot hold nothing private:
    no tell, no sealed value, no gem count, no role before the round's end, no box
    content before the box is opened."""
    import random

    rng = random.Random(seed)
    players = list(SEATS[:6 + seed % 3])
    table = Table(tmp_path, {}, {"seed": seed})
    table.step("tap", "game/demagogos")
    for p in players:
        table.step("tap", f"player/{p}")
    table.step("press", "next")
    announced: set[int] = set()
    try:
        for _ in range(2000):
            engine = table.sim.loop.table.engine
            if engine is None:
                break
            st = engine.state
            step, seen = st.step, len(table.public)
            private = {p: table.sim.loop.read_side.private(p) for p in players}
            forms = {p: v["legal"]["submits"] for p, v in private.items() if v.get("legal", {}).get("submits")}
            givers = sorted(p for p in forms if "gift" in forms[p])
            if givers and st.step != "trade" and rng.random() < 0.1:  # a gift at any moment of the round
                p = rng.choice(givers)
                ask = forms[p]["gift"]
                table.step("submit", Submit(p, "gift", {"to": rng.choice(ask["choices"]),
                                                        "gems": rng.randint(1, ask["high"])}))
                assert table.public[seen:] == [] and table.snapshots[-1] == table.snapshots[-2]
                continue
            if st.step in ("role_auction", "turn_auction"):
                p = rng.choice(sorted(q for q in forms if "bid" in forms[q]))
                ask = forms[p]["bid"]
                table.step("submit", Submit(p, "bid", rng.randint(ask["low"], ask["high"])))
                if engine.state.step == step:  # not closed: only the fact of the bid is public
                    assert [set(e) for e in table.public[seen:]] == [{"event", "input", "player", "field"}]
            elif st.step == "cave":
                taps = table.sim.loop.read_side.public()["legal"]["taps"]
                if st.finder is not None and rng.random() < 0.4:
                    table.step("press", "next")
                else:
                    table.step("tap", rng.choice(taps))
            elif st.step == "trade":
                p = rng.choice(sorted(forms)) if forms else None
                if p and "exchange" in forms[p] and rng.random() < 0.5:
                    table.step("submit", Submit(p, "exchange", 1))
                elif p and "gift" in forms[p] and rng.random() < 0.5:
                    ask = forms[p]["gift"]
                    table.step("submit", Submit(p, "gift", {"to": rng.choice(ask["choices"]),
                                                            "gems": rng.randint(1, ask["high"])}))
                    assert table.public[seen:] == []  # a gift leaves no public trace at all
                else:
                    table.step("press", "next")
            else:  # the VP auction
                bidders = [p for p in forms if "vp_bid" in forms[p]]
                if bidders and rng.random() < 0.6:
                    p = rng.choice(sorted(bidders))
                    ask = forms[p]["vp_bid"]
                    table.step("submit", Submit(p, "vp_bid", rng.randint(ask["low"], ask["high"])))
                else:
                    table.step("press", "next")
            for ev in table.public[seen:]:
                assert ev["event"] != "tell" and "value" not in ev and "data" not in ev, ev
                assert ev.get("key") not in PRIVATE_KEYS, ev
                if ev["event"] == "dt_box":
                    announced.add(ev["box"])
            engine = table.sim.loop.table.engine
            if engine is None:
                break
            play = table.sim.loop.read_side.public()["play"]
            assert set(play) <= PUBLIC_PLAY, play
            assert play.get("totals", play["vp"]) == play["vp"]  # no number beyond the public VP
            assert all(set(o) <= {"box", "content", "player", "gems", "voided"} for o in play["opened"])
            assert {o["box"] for o in play["opened"]} <= announced
            board = table.sim.loop.read_side.public()["board"]
            keys = [line["key"] for line in board]
            # the board: an opened box's line for each opened box only; a role only in the results;
            # of a sealed auction, only who has bid (dt.board.bids_in names players, no value)
            assert [k for k in keys if k.startswith("dt.board.box.")] == [
                "dt.board.box.voided" if o.get("voided") else f"dt.board.box.{o['content']}" for o in play["opened"]]
            assert set(keys) <= BOARD_KEYS, keys
            if not play["results"]:
                assert not any("sage" in line["text"] or "demagogue" in line["text"] for line in board), board
            rest = {k: v for k, v in play.items() if k != "results"}
            assert "sage" not in json.dumps(rest) and "demagogue" not in json.dumps(rest)
            if engine.state.step not in ("trade", "vp_auction"):
                assert play["results"] == []  # the roles are public only from the round's end
            if engine.state.step == "role_auction":
                announced.clear()
        assert [e for e in table.events if e["event"] == "game_over"], "the game did not end"
    finally:
        table.close()


def test_ruling_the_box_count_is_said_with_the_pairing_prompt_and_again_when_the_cave_opens(tmp_path: Path) -> None:
    """[ruling] six players: 2 role holders, 4 explorers, 4 + 3 = 7 boxes — said when
    the game card's `next` asks for the phones (so the table lays them out while
    they pair), on a restart while still pairing, and again when the cave opens."""
    from test_pairing_gate import SIX, Gate

    gate = Gate(tmp_path)
    try:
        gate.seat_down()
        mark = len(gate.events)
        gate.sim.step("press", "next")
        assert [(s["key"], s["text"]) for s in gate.says(mark)][0] == (
            "dt.pairing.boxes", "Demagogos' Trap: lay out 7 boxes, numbered 1 to 7, while the phones pair.")
        gate.pair("red")
    finally:
        gate.close()
    gate = Gate(tmp_path)  # a restart while the phones pair
    try:
        assert [s["key"] for s in gate.says()][-2:] == ["dt.pairing.boxes", "pairing.needed"]
        for seat in SIX[1:]:
            gate.pair(seat)
        for seat in SIX:
            gate.sim.step("submit", Submit(seat, "bid", 0))
        engine = gate.sim.loop.table.engine
        assert isinstance(engine, Demagogos)
        for seat in list(engine.state.explorers):
            gate.sim.step("submit", Submit(seat, "bid", 0))
        (cave,) = [s for s in gate.says() if s["key"] == "dt.cave.start"]
        assert cave["text"] == "The cave: boxes 1 to 7 hold 3 treasures, 3 empty boxes and 1 disaster."
    finally:
        gate.close()


def test_ruling_a_gift_mid_cave_and_its_refusal_reach_the_giver_s_page_only(tmp_path: Path) -> None:
    """Round 1 of the 6-player script, after yellow's first treasure (box 1: 3 + 3 = 6;
    yellow 5 − 2 + 6 = 9, of which 6 at stake): a gift of 4 is refused — on yellow's
    page alone — and one of 3 to purple is taken; the table sees neither (no event, the
    same public snapshot), purple's page is told of the gift."""
    steps, draws, _ = script(SIX)
    first_box = steps.index(("tap", "dt/box/1"))
    table = play(tmp_path, steps[:first_box + 1], draws)
    try:
        public, snapshot = len(table.public), table.snapshots[-1]
        mine = len(table.seats["yellow"])
        table.step("submit", Submit("yellow", "gift", {"to": "purple", "gems": 4}))
        refused = [e for e in table.seats["yellow"][mine:] if e["event"] == "rejected"]
        assert len(refused) == 1 and "at most 3" in json.dumps(table.seats["yellow"][mine:])
        table.step("submit", Submit("yellow", "gift", {"to": "purple", "gems": 3}))
        assert table.public[public:] == [] and table.snapshots[-1] == snapshot
        assert [e["key"] for e in table.seats["purple"] if e["event"] == "tell"][-1] == "dt.gift.received"
        assert table.engine.state.gems["yellow"] == 6
    finally:
        table.close()


class HandBuilt(Table):
    """The recorded table on settings the config loader never saw (``names`` forced)."""

    def __init__(self, state: Path, draws: dict[str, Any], names: dict[str, str]) -> None:
        from companion.app import config
        from companion.app.simulate import Simulation

        self.public, self.seats, self.snapshots, self.state, self.events = [], {}, [], state, []
        cfg = config.load([ROOT / "config" / "companion.yaml"])
        cfg["players"] = {**cfg["players"], "names": names}  # past the config's check that no two seats share a name
        self.sim = Simulation(cfg, state, self.events.append, draws=draws)
        self.sim.app.router.subscribe(self._public, TABLE)
        for seat in SEATS:
            self.sim.app.router.subscribe(self._seat(seat), seat_audience(seat))


def _misaddressed(table: Table) -> list[tuple[str, dict[str, Any]]]:
    """Every private line (an engine's, addressed by name) on a seat's page that is not
    the one and only seated player answering to that name."""
    t = table.sim.loop.table
    return [(seat, e) for seat, events in table.seats.items() for e in events
            if e["event"] == "tell" and [s for s in t.state.seats if t.name_of(s) == e["to"]] != [seat]]


def test_two_seats_forced_to_one_name_are_never_both_seated(tmp_path: Path) -> None:
    steps, draws, _ = script(SIX)
    table = HandBuilt(tmp_path, draws, {"red": "blue"})  # red answers to "blue", and so does blue
    try:
        for kind, value in steps:
            table.step(kind, value)
        assert {"event": "rejected", "input": "player/blue", "reason": "blue is already seated"} in table.public
        t = table.sim.loop.table
        assert len({t.name_of(s) for s in t.state.seats}) == len(t.state.seats)
        assert not _misaddressed(table)
    finally:
        table.close()


def test_a_private_message_for_a_name_two_seats_share_reaches_neither(tmp_path: Path) -> None:
    """A table whose names were forced equal mid-game (as no config allows): the loop
    addresses by seat and refuses to guess, so each private line reaches its seat or none."""
    steps, draws, _ = script(SIX)
    table = play(tmp_path, steps[:19], draws)  # the next bid closes an auction: everyone pays, privately
    try:
        t = table.sim.loop.table
        assert t.state.phase == "playing" and {"red", "blue"} <= set(t.state.seats)
        t.settings["names"] = {**t.settings["names"], "red": "blue"}  # in force, past every check
        before = {seat: len(evs) for seat, evs in table.seats.items()}
        for kind, value in steps[19:]:
            table.step(kind, value)
        after = {seat: evs[before.get(seat, 0):] for seat, evs in table.seats.items()}
        assert not [e for seat in ("red", "blue") for e in after.get(seat, []) if e["event"] == "tell"]
        assert not [(s, e) for s, e in _misaddressed(table) if e in after.get(s, [])]
        assert any(e["event"] == "error" and "two seats" in e["message"] for e in table.events)
        assert any(e["event"] == "tell" for s in SEATS[2:6] for e in after.get(s, []))  # the others still told
    finally:
        table.close()
