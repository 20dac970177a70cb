"""Demagogos' Trap, rule by rule (rules/demagogos-trap.md).

The engine is driven directly here, with the runtime's part played by a small
dealer: every ``Draw`` it asks for is answered from a table of fixed values, as
a script's ``draws:`` would.  Every expected number is worked out by hand from
the spec in the test's comment, never by asking the engine.
"""

from __future__ import annotations

from typing import Any

import pytest

from companion.core.engine import Setup
from companion.core.events import Draw, Drawn, Output, Press, Refusal, Report, Say, Submit, Tap, Tell
from companion.games.demagogos import Demagogos
from companion.games.demagogos import rules as R

COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black", "pink", "grey")


class Dealer:
    """The engine plus the runtime's draws: ``draws`` maps a draw's name to its value."""

    def __init__(self, n: int = 6, draws: dict[str, Any] | None = None) -> None:
        self.players = COLOURS[:n]
        self.e = Demagogos(Setup(self.players))
        self.draws = dict(draws or {})
        self.out: list[Output] = []
        self.asked: list[str] = []
        self._run(self.e.start())

    def _run(self, outs: list[Output]) -> list[Output]:
        self.out += outs
        done = list(outs)
        for o in outs:
            if isinstance(o, Draw):
                self.asked.append(o.name)
                done += self._run(self.e.handle(Drawn(o.name, self.draws[o.name])))
        return done

    def do(self, inp: Any) -> list[Output]:
        return self._run(self.e.handle(inp))

    def bid(self, **bids: int) -> None:
        for p, b in bids.items():
            self.do(Submit(p, "bid", b))

    def submit(self, player: str, fld: str, value: Any) -> list[Output]:
        return self.do(Submit(player, fld, value))

    def tap(self, box: int) -> list[Output]:
        return self.do(Tap(f"dt/box/{box}"))

    def next(self) -> list[Output]:
        return self.do(Press("next"))

    @property
    def st(self) -> Any:
        return self.e.state

    def says(self) -> list[str]:
        return [o.key for o in self.out if isinstance(o, Say)]

    def reports(self, event: str) -> list[dict[str, Any]]:
        return [dict(o.fields) for o in self.out if isinstance(o, Report) and o.event == event]

    def tells(self, to: str) -> list[Tell]:
        return [o for o in self.out if isinstance(o, Tell) and o.to == to]


# A 6-player round: red and green hold the roles (red the sage: die 2, green the
# demagogue: die 5); the explorers blue, yellow, purple, orange (4 → 7 boxes: 3
# treasures, 3 empty, 1 disaster).  The cave's keys are a permutation of 1…7:
# box b holds rank keys[b-1]: 1–3 treasure (1 and 2 told to the sage), 4 the
# disaster, 5–7 empty.  So: box 2 → 1 T(sage), box 4 → 2 T(sage), box 6 → 3 T,
# box 1 → 4 disaster, boxes 3, 5, 7 empty.
CAVE6 = [4, 1, 5, 2, 6, 3, 7]
DRAWS6 = {"r1:role:red": 2, "r1:role:green": 5, "r1:cave": CAVE6,
          "r1:bonus:2": 2, "r1:bonus:4": 3, "r1:bonus:6": 1}


def to_cave(d: Dealer, turn: dict[str, int] | None = None) -> None:
    d.bid(red=3, blue=1, green=4, yellow=0, purple=2, orange=0)
    d.bid(**(turn or {"blue": 1, "yellow": 3, "purple": 0, "orange": 2}))


# ------------------------------------------------------------- auctions
def test_role_auction_the_top_two_bidders_hold_roles_and_pay_their_own_bid() -> None:
    d = Dealer(6, DRAWS6)
    d.bid(red=3, blue=1, green=4, yellow=0, purple=2)
    assert d.st.step == "role_auction" and d.st.holders == []  # orange has not bid yet
    d.bid(orange=0)
    # top 2 of 6: green 4, red 3; each pays their own bid; the others keep 5
    assert d.st.holders == ["red", "green"]  # announced in seat order, not by bid
    assert d.st.gems == {"red": 2, "blue": 5, "green": 1, "yellow": 5, "purple": 5, "orange": 5}
    assert [t.params for t in d.tells("red") if t.key == "dt.paid"] == [{"paid": 3, "gems": 2}]


@pytest.mark.parametrize("n,holders", [(6, 2), (7, 2), (8, 3), (9, 3), (10, 3)])
def test_role_holders_are_two_for_6_7_players_three_for_8_to_10(n: int, holders: int) -> None:
    assert R.role_holder_count(n) == holders
    d = Dealer(n, {f"r1:role:{p}": 1 for p in COLOURS})
    d.bid(**{p: i % 5 for i, p in enumerate(d.players)})
    assert len(d.st.holders) == holders


def test_role_auction_ties_for_the_last_place_go_to_fewer_vp_then_fewer_gems_then_the_start() -> None:
    d = Dealer(6, {f"r1:role:{p}": 1 for p in COLOURS})
    d.st.vp.update(blue=1, green=0)  # blue and green tie at 2 for the second place
    d.bid(red=3, blue=2, green=2, yellow=0, purple=0, orange=0)
    assert d.st.holders == ["red", "green"]  # fewer VP: green

    d = Dealer(6, {f"r1:role:{p}": 1 for p in COLOURS})
    d.st.gems.update(green=4)  # same VP; fewer gems: green
    d.bid(red=3, blue=2, green=2, yellow=0, purple=0, orange=0)
    assert d.st.holders == ["red", "green"]

    d = Dealer(6, {f"r1:role:{p}": 1 for p in COLOURS})
    d.bid(red=3, blue=2, green=2, yellow=0, purple=0, orange=0)  # all equal: nearer the start
    assert d.st.holders == ["red", "blue"]


def test_a_bid_above_ones_gems_or_negative_is_refused_and_changes_nothing() -> None:
    d = Dealer(6, DRAWS6)
    for bad in (6, -1, "3", 2.5, True):
        with pytest.raises(Refusal):
            d.submit("red", "bid", bad)
    assert d.e.sealed == {}
    d.submit("red", "bid", 0)  # a bid of 0 is allowed
    d.submit("red", "bid", 5)  # and may be changed until all are in
    assert d.e.sealed == {"role": {"red": 5}}


def test_role_die_1_to_3_makes_the_sage_4_to_6_the_demagogue_told_privately() -> None:
    for die, role in [(1, "sage"), (3, "sage"), (4, "demagogue"), (6, "demagogue")]:
        assert R.role_of_die(die) == role
    d = Dealer(6, {"r1:role:red": 3, "r1:role:green": 4})
    d.bid(red=3, blue=1, green=4, yellow=0, purple=2, orange=0)
    assert d.asked == ["r1:role:red", "r1:role:green"]
    assert [t.key for t in d.tells("red")][-1] == "dt.role.sage"
    assert [t.key for t in d.tells("green")][-1] == "dt.role.demagogue"
    assert d.e.private_view("red")["role"] == "sage" and "role" not in d.e.private_view("blue")
    assert "sage" not in str(d.e.public_view()) and "demagogue" not in str(d.e.public_view())


def test_turn_auction_every_explorer_pays_and_the_order_is_by_bid_ties_by_the_vp_rule() -> None:
    d = Dealer(6, DRAWS6)
    d.bid(red=3, blue=1, green=4, yellow=0, purple=2, orange=0)
    with pytest.raises(Refusal) as holder:
        d.submit("red", "bid", 1)
    assert holder.value.key == "dt.refuse.holder_bid"
    d.st.vp.update(orange=1)  # blue and orange tie at 2: orange has more VP, so blue first
    d.bid(blue=2, yellow=3, purple=0, orange=2)
    assert d.st.explorers == ["yellow", "blue", "orange", "purple"]
    assert {p: d.st.gems[p] for p in d.st.explorers} == {"yellow": 2, "blue": 3, "orange": 3, "purple": 5}
    assert d.says()[-2:] == ["dt.cave.start", "dt.cave.turn"]


# ----------------------------------------------------------------- cave
def test_cave_contents_by_explorer_count_and_the_ruling_for_other_counts() -> None:
    assert [R.cave_contents(n) for n in (4, 5, 6, 7)] == [(3, 3, 1), (4, 3, 1), (4, 4, 1), (4, 5, 1)]
    # ruling (revised): treasure max(2, min(4, explorers - 1)), 1 disaster, the rest of
    # explorers + 3 empty: 2 explorers, 5 boxes: 2 / 2 / 1; 3: 6 boxes, 2 / 3 / 1; 8: 11 boxes, 4 / 6 / 1
    assert [R.cave_contents(n) for n in (2, 3, 8)] == [(2, 2, 1), (2, 3, 1), (4, 6, 1)]


def test_the_caves_shuffle_keys_give_the_contents_and_the_sages_two_treasures() -> None:
    contents, sage = R.layout(CAVE6, 3, 3)
    assert contents == ["disaster", "treasure", "empty", "treasure", "empty", "treasure", "empty"]
    assert sage == [2, 4]


def test_the_sage_and_the_demagogue_are_told_their_boxes_privately() -> None:
    d = Dealer(6, DRAWS6)
    to_cave(d)
    assert d.asked[-1] == "r1:cave"
    assert d.tells("red")[-1].data == {"treasures": [2, 4]}
    assert d.tells("green")[-1].data == {"disaster": 1}
    assert d.e.private_view("red")["told"] == {"treasures": [2, 4]}
    assert "told" not in d.e.private_view("blue")


def test_a_treasure_gives_3_gems_plus_the_bonus_and_the_finder_may_go_on_or_pass() -> None:
    d = Dealer(6, DRAWS6)
    to_cave(d)  # order: yellow 3, orange 2, blue 1, purple 0
    assert d.st.explorers == ["yellow", "orange", "blue", "purple"]
    gems = d.st.gems["yellow"]  # 5 - 3 = 2
    d.tap(2)  # treasure, bonus 2 → 3 + 2 = 5
    assert d.reports("dt_box")[-1] == {"box": 2, "content": "treasure", "player": "yellow", "gems": 5}
    assert d.st.gems["yellow"] == gems + 5 == 7
    assert d.st.finder == "yellow"
    d.next()  # passes
    assert d.e.public_view()["turn"] == "orange"


def test_empty_passes_the_turn_and_turns_wrap_around_after_the_last_explorer() -> None:
    d = Dealer(6, DRAWS6)
    to_cave(d)
    d.tap(3)  # yellow: empty
    assert d.reports("dt_box")[-1] == {"box": 3, "content": "empty", "player": "yellow", "gems": 0}
    d.tap(5)  # orange: empty
    d.tap(7)  # blue: empty
    d.tap(6)  # purple: treasure (bonus 1 → 4), passes
    d.next()
    assert d.e.public_view()["turn"] == "yellow"  # back to the first


def test_the_last_treasure_doubles_its_bonus_and_ends_the_exploration() -> None:
    d = Dealer(6, DRAWS6)
    to_cave(d)
    d.tap(2)  # yellow: 3 + 2 = 5, goes on
    d.tap(6)  # yellow: 3 + 1 = 4, goes on
    d.tap(4)  # yellow: the last treasure, bonus 3 doubled: 3 + 6 = 9
    assert [b["gems"] for b in d.reports("dt_box")] == [5, 4, 9]
    assert "dt.box.gems_last" in d.says() and "dt.cave.all_found" in d.says()
    assert d.st.step == "trade"
    # yellow: 5 - 3 (turn bid) + 5 + 4 + 9 + 2 (stipend) = 22
    assert d.st.gems["yellow"] == 22


def test_the_disaster_halves_the_openers_vp_voids_their_treasure_and_ends_the_exploration() -> None:
    d = Dealer(6, DRAWS6)
    d.st.vp.update(yellow=1)
    d.st.vp_start.update(yellow=1)
    to_cave(d)
    d.tap(2)  # yellow: treasure, 5 gems
    d.tap(1)  # yellow: the disaster
    assert d.reports("dt_box")[-1] == {"box": 1, "content": "disaster", "player": "yellow", "gems": 0, "voided": 5}
    assert d.st.vp["yellow"] == 0  # floor(1 / 2)
    # yellow: 5 - 3 (turn bid) + 5 - 5 (void) + 2 (stipend) = 4
    assert d.st.gems["yellow"] == 4
    assert d.st.step == "trade"


def test_a_box_opened_again_out_of_range_or_out_of_turn_is_refused() -> None:
    d = Dealer(6, DRAWS6)
    with pytest.raises(Refusal) as early:
        d.tap(1)  # the role auction: no box may be opened
    assert early.value.key == "dt.refuse.box_not_now"
    to_cave(d)
    with pytest.raises(Refusal) as out_of_range:
        d.tap(8)  # 7 boxes this round
    assert out_of_range.value.key == "dt.refuse.box_range"
    d.tap(3)
    with pytest.raises(Refusal) as again:
        d.tap(3)
    assert again.value.key == "dt.refuse.box_opened"
    with pytest.raises(Refusal) as must_open:
        d.next()  # orange has not opened a box
    assert must_open.value.key == "dt.refuse.open_first"


def test_back_takes_a_pass_back_but_never_an_opened_box() -> None:
    d = Dealer(6, DRAWS6)
    to_cave(d)
    d.tap(2)
    d.next()
    d.do(Press("back"))
    assert d.st.finder == "yellow"
    with pytest.raises(Refusal):
        d.do(Press("back"))  # the treasure is out in the open


# -------------------------------------------------------- role results
def test_the_sage_wins_1_vp_when_both_told_treasures_are_opened() -> None:
    d = Dealer(6, DRAWS6)
    to_cave(d)
    d.tap(2)
    d.tap(4)  # both of the sage's (red) treasures; then the disaster
    d.tap(1)
    assert d.st.vp["red"] == 1
    assert {"player": "red", "role": "sage", "outcome": "won", "vp": 1} in d.st.results


def test_the_sage_wins_nothing_when_a_told_treasure_stays_closed() -> None:
    d = Dealer(6, DRAWS6)
    to_cave(d)
    d.tap(2)
    d.tap(6)  # a treasure the sage was not told
    d.tap(1)  # the disaster: box 4 stays closed
    assert d.st.vp["red"] == 0 and "dt.result.sage.lost" in d.says()


def test_the_demagogue_wins_1_vp_when_an_explorer_opens_the_disaster() -> None:
    d = Dealer(6, DRAWS6)
    to_cave(d)
    d.tap(1)
    assert d.st.vp["green"] == 1 and "dt.result.demagogue.won" in d.says()


def test_the_disaster_falls_on_the_demagogue_when_every_treasure_is_found() -> None:
    d = Dealer(6, DRAWS6)
    d.st.vp.update(green=2)
    d.st.vp_start.update(green=2)
    to_cave(d)  # green (demagogue) paid 4: 1 gem left
    d.tap(2)
    d.tap(4)
    d.tap(6)  # every treasure, no disaster
    # VP from the round's start halved: floor(2 / 2) = 1; gems floor(1 / 2) = 0, then + 2
    assert d.st.vp["green"] == 1 and d.st.gems["green"] == 2
    assert {"player": "green", "role": "demagogue", "outcome": "hit", "vp": 1} in d.st.results
    assert d.st.vp["red"] == 1  # the sage's two were found too


def test_every_active_player_receives_2_gems_at_the_round_end() -> None:
    d = Dealer(6, DRAWS6)
    to_cave(d)
    before = dict(d.st.gems)
    d.tap(3)
    d.tap(1)  # orange: the disaster, nothing to void
    assert {p: d.st.gems[p] - before[p] for p in d.players} == {p: 2 for p in d.players}


# ------------------------------------------------------- gifts, exchange
def _to_trade(d: Dealer) -> None:
    to_cave(d)
    d.tap(1)  # yellow opens the disaster at once


def test_a_gift_moves_gems_between_two_players_and_tells_only_them() -> None:
    d = Dealer(6, DRAWS6)
    _to_trade(d)
    # blue: 5 - 1 + 2 = 6; purple: 5 - 0 + 2 = 7
    d.submit("blue", "gift", {"to": "purple", "gems": 4})
    assert (d.st.gems["blue"], d.st.gems["purple"]) == (2, 11)
    assert d.tells("blue")[-1].key == "dt.gift.sent" and d.tells("purple")[-1].key == "dt.gift.received"
    assert d.e.public_label(Submit("blue", "gift", {})) == ""  # not even the fact is public
    for bad in ({"to": "purple", "gems": 3}, {"to": "blue", "gems": 1}, {"to": "nobody", "gems": 1},
                {"to": "purple", "gems": 0}, 3):
        with pytest.raises(Refusal):
            d.submit("blue", "gift", bad)
    assert d.st.gems["blue"] == 2


def test_an_exchange_takes_10_gems_for_1_vp_and_is_refused_without_10() -> None:
    d = Dealer(6, DRAWS6)
    _to_trade(d)
    with pytest.raises(Refusal) as short:
        d.submit("blue", "exchange", 1)  # 6 gems
    assert short.value.key == "dt.refuse.exchange_short"
    d.st.gems["blue"] = 23
    d.submit("blue", "exchange", 2)
    assert (d.st.gems["blue"], d.st.vp["blue"]) == (3, 2)
    assert "dt.exchange.done" in d.says()  # the VP is public


# ------------------------------------------------------------ VP auction
def test_the_vp_auction_is_open_and_ascending_the_highest_bid_wins_and_pays() -> None:
    d = Dealer(6, DRAWS6)
    _to_trade(d)
    d.next()
    d.submit("blue", "vp_bid", 2)
    assert d.e.public_view()["vp_auction"] == {"bids": {"blue": 2}, "leader": "blue", "top": 2}
    with pytest.raises(Refusal):
        d.submit("purple", "vp_bid", 1)  # below the top bid
    d.submit("purple", "vp_bid", 4)
    assert d.says()[-1] == "dt.vp_auction.bid"
    d.next()
    # purple: 7 - 4 = 3 gems, 1 VP
    assert (d.st.gems["purple"], d.st.vp["purple"]) == (3, 1)
    assert d.reports("round_scored")[-1]["points"]["purple"] == 1
    assert d.st.step == "role_auction" and d.st.round == 2


def test_vp_auction_equal_bids_go_to_fewer_vp_then_fewer_gems() -> None:
    d = Dealer(6, DRAWS6)
    _to_trade(d)  # green (demagogue) has 1 VP now
    d.next()
    # green: 5 - 4 + 2 = 3 gems, 1 VP; blue: 6 gems, 0 VP
    d.submit("green", "vp_bid", 3)
    d.submit("blue", "vp_bid", 3)  # equal: fewer VP → blue
    assert d.e.public_view()["vp_auction"]["leader"] == "blue"
    d.submit("purple", "vp_bid", 3)  # equal, equal VP (0): fewer gems → blue (6) over purple (7)
    assert d.e.public_view()["vp_auction"]["leader"] == "blue"
    d.next()
    assert d.st.vp["blue"] == 1 and d.st.gems["blue"] == 3


def test_no_bid_leaves_the_vp_unsold() -> None:
    d = Dealer(6, DRAWS6)
    _to_trade(d)
    d.next()
    d.next()
    assert "dt.vp_auction.unsold" in d.says() and sum(d.st.vp.values()) == 1  # green's only


# ----------------------------------------------------------------- exits
def test_a_player_reaching_3_vp_exits_at_once_and_takes_no_further_part() -> None:
    d = Dealer(6, DRAWS6)
    _to_trade(d)
    d.st.gems["blue"] = 30
    d.submit("blue", "exchange", 3)
    assert d.reports("dt_exit") == [{"player": "blue", "vp": 3, "place": 1}]
    assert d.st.exited == ["blue"]
    with pytest.raises(Refusal) as gone:
        d.submit("blue", "gift", {"to": "red", "gems": 1})
    assert gone.value.key == "dt.refuse.exited"
    with pytest.raises(Refusal):
        d.submit("red", "gift", {"to": "blue", "gems": 1})  # nor receives
    d.next()
    d.next()
    assert "blue" not in d.e.public_view()["active"]
    with pytest.raises(Refusal):
        d.submit("blue", "bid", 0)


def test_players_reaching_3_vp_at_the_same_moment_exit_more_gems_first() -> None:
    # 8 players: three role holders; red and green both sages, both reach 3 VP
    draws = {"r1:role:red": 1, "r1:role:green": 2, "r1:role:blue": 6,
             "r1:cave": [1, 2, 6, 7, 8, 3, 4, 5], "r1:sage:green": [1, 2, 3, 4], "r1:bonus:1": 1, "r1:bonus:2": 1,
             "r1:bonus:6": 1, "r1:bonus:7": 1}
    d = Dealer(8, draws)
    d.st.vp.update(red=2, green=2)
    d.bid(red=1, blue=2, green=1, yellow=0, purple=0, orange=0, white=0, black=0)
    # holders: blue 2, then red and green at 1 (equal VP, gems: 5 each → red nearer the start … both in)
    assert d.st.holders == ["red", "blue", "green"]
    d.st.gems.update(green=9)  # green now holds more gems than red (4)
    d.bid(yellow=0, purple=0, orange=0, white=0, black=0)
    # 5 explorers → 8 boxes: 4 treasures (boxes 1, 2, 6, 7; the sage's: 1 and 2), disaster box 8
    d.tap(1)
    d.tap(2)
    d.tap(6)
    d.tap(7)  # every treasure: both sages won, blue (demagogue) is hit
    assert [e["player"] for e in d.reports("dt_exit")] == ["green", "red"]  # 9 gems before 4
    assert [e["place"] for e in d.reports("dt_exit")] == [1, 2]


@pytest.mark.parametrize("n", [6, 7, 8, 9, 10])
def test_the_game_ends_when_floor_half_the_players_have_exited(n: int) -> None:
    boxes = {6: 7, 7: 8, 8: 8, 9: 9, 10: 10}[n]  # explorers (n - 2, or n - 3 from 8) + 3
    treasures = {6: 3, 7: 4, 8: 4, 9: 4, 10: 4}[n]  # 4 explorers: 3; 5–7: 4
    d = Dealer(n, {f"r1:role:{p}": 1 for p in COLOURS} | {"r1:cave": list(range(1, boxes + 1))}
               | {f"r1:sage:{p}": list(range(1, treasures + 1)) for p in COLOURS})  # every holder a sage
    d.bid(**{p: 0 for p in d.players})
    d.bid(**{p: 0 for p in d.st.explorers})
    d.tap(d.st.contents.index("disaster") + 1)
    winners = d.st.explorers[1:] + d.st.holders  # anyone but the one whose VP was halved
    for p in winners[:n // 2]:
        assert not d.e.finished
        d.st.gems[p] = 30
        d.submit(p, "exchange", 3)
    # floor(n / 2) exits: 3, 3, 4, 4, 5
    assert d.e.finished and len(d.st.exited) == n // 2
    (over,) = d.reports("game_over")
    assert over["winners"] == winners[:n // 2]
    assert d.e.result().winners == tuple(winners[:n // 2])
    with pytest.raises(Refusal):
        d.next()


def test_a_refused_submit_changes_nothing() -> None:
    d = Dealer(6, DRAWS6)
    d.submit("red", "bid", 2)
    before = (repr(d.st), repr(d.e.sealed))
    # red has 5 gems and has bid 2: a gift of 4 would give away bid gems (3 are free)
    for fld, value in [("bid", 9), ("vp_bid", 1), ("gift", {"to": "blue", "gems": 4}), ("exchange", 1),
                       ("colour", "red")]:
        with pytest.raises(Refusal):
            d.submit("red", fld, value)
    assert (repr(d.st), repr(d.e.sealed)) == before


# ------------------------------------------------------- the public board
def test_the_public_board_shows_vp_holders_order_opened_boxes_and_the_open_auction_never_a_secret() -> None:
    """Rules, *Who may know what*: VP, the role holders, the explorers' order,
    opened boxes and the VP auction are public; gems, sealed bids, a role
    before the round's end and an unopened box's content are not."""
    d = Dealer(6, DRAWS6)
    zero = {p: 0 for p in d.players}
    assert d.e.board() == [("dt.board.vp", {"scores": zero}), ("dt.board.bids_in", {"players": []})]
    d.bid(red=3)
    assert d.e.board()[-1] == ("dt.board.bids_in", {"players": ["red"]})  # who has bid, never what
    d.bid(blue=1, green=4, yellow=0, purple=2, orange=0)
    # red and green hold the roles (seat order); the explorers bid for the order, in seat order
    assert d.e.board() == [("dt.board.vp", {"scores": zero}), ("dt.board.holders", {"players": ["red", "green"]}),
                           ("dt.board.explorers", {"players": ["blue", "yellow", "purple", "orange"]}),
                           ("dt.board.bids_in", {"players": []})]
    d.bid(blue=1, yellow=3, purple=0, orange=2)
    d.tap(3)  # yellow: empty
    d.tap(2)  # orange: treasure, 3 + bonus 2 = 5
    assert d.e.board() == [("dt.board.vp", {"scores": zero}), ("dt.board.holders", {"players": ["red", "green"]}),
                           ("dt.board.order", {"players": ["yellow", "orange", "blue", "purple"]}),
                           ("dt.board.boxes", {"boxes": 7}),
                           ("dt.board.box.empty", {"box": 3, "player": "yellow", "gems": 0}),
                           ("dt.board.box.treasure", {"box": 2, "player": "orange", "gems": 5})]
    d.tap(1)  # orange goes on: the disaster; round end: the sage (told 2 and 4) lost, the demagogue won
    board = d.e.board()
    assert board[:3] == [("dt.board.vp", {"scores": {**zero, "green": 1}}),
                         ("dt.board.result.sage.lost", {"player": "red"}),
                         ("dt.board.result.demagogue.won", {"player": "green"})]
    assert board[-2:] == [("dt.board.box.voided", {"box": 2, "player": "orange", "gems": 5}),  # the disaster took it
                          ("dt.board.box.disaster", {"box": 1, "player": "orange", "gems": 0})]
    assert ("dt.board.box.empty", {"box": 3, "player": "yellow", "gems": 0}) in board  # another's box stays
    assert all(key != "dt.board.holders" for key, _ in board)  # the results name the holders now
    d.next()
    assert d.e.board()[-1] == ("dt.board.vp_auction.none", {})
    d.submit("blue", "vp_bid", 2)
    d.submit("purple", "vp_bid", 4)
    assert d.e.board()[-3:] == [("dt.board.vp_auction.leads", {"player": "purple", "bid": 4}),
                                ("dt.board.vp_auction.bid", {"player": "blue", "bid": 2}),
                                ("dt.board.vp_auction.bid", {"player": "purple", "bid": 4})]
    d.next()  # purple buys the VP for 4: round 2's role auction, its first board
    assert d.e.board() == [("dt.board.vp", {"scores": {**zero, "green": 1, "purple": 1}}),
                           ("dt.board.bids_in", {"players": []})]


# ------------------------------------------- the rulings (rules/demagogos-trap.md, [ruling]s)
def unchanged(d: Dealer) -> tuple[str, str]:
    return repr(d.st), repr(d.e.sealed)


def test_vp_auction_lowest_bid_is_1_gem_and_no_bid_leaves_the_vp_unsold() -> None:
    """A 0-gem VP bid is refused (on the bidder's page: a refusal of a submit),
    changing nothing; the form starts at 1; nobody bids → "not sold", nobody
    gains a VP: the VP stays at green's 1 (the demagogue's)."""
    d = Dealer(6, DRAWS6)
    _to_trade(d)
    d.next()
    assert d.e.legal("blue").submits["vp_bid"].low == 1
    before = unchanged(d)
    with pytest.raises(Refusal) as zero:
        d.submit("blue", "vp_bid", 0)
    assert zero.value.key == "dt.refuse.vp_bid_first" and zero.value.params["low"] == 1
    assert unchanged(d) == before
    d.next()
    assert "dt.vp_auction.unsold" in d.says() and d.st.vp == {**{p: 0 for p in d.players}, "green": 1}
    assert d.st.step == "role_auction" and d.st.round == 2


def test_every_cave_has_at_least_two_treasures() -> None:
    """Four players still in (red and yellow have won): 2 role holders, 2 explorers,
    5 boxes: 2 treasures, 2 empty, 1 disaster (3 explorers: 2 / 3 / 1). Holders:
    orange (bid 2) and, among the 0s (equal VP and gems), blue nearer the start;
    blue the demagogue (5), orange the sage (2). Keys [2, 1, 3, 4, 5]: box 2 then
    box 1 the treasures (told to the sage), box 3 the disaster. Green opens 2
    (3 + 2 = 5), then 1, the last (3 + 1 × 2 = 5): both of the sage's found."""
    assert (R.cave_contents(2), R.cave_contents(3)) == ((2, 2, 1), (2, 3, 1))
    d = Dealer(6, {"r1:role:blue": 5, "r1:role:orange": 2, "r1:cave": [2, 1, 3, 4, 5],
                   "r1:bonus:2": 2, "r1:bonus:1": 1})
    d.st.exited = ["red", "yellow"]
    d.bid(blue=0, green=0, purple=0, orange=2)
    d.bid(green=1, purple=0)
    assert Say("dt.cave.start", {"boxes": 5, "treasure": 2, "empty": 2}) in d.out
    assert d.tells("orange")[-1].data == {"treasures": [1, 2]} and d.tells("blue")[-1].data == {"disaster": 3}
    d.tap(2)
    d.tap(1)
    assert [b["gems"] for b in d.reports("dt_box")] == [5, 5]
    assert {"player": "orange", "role": "sage", "outcome": "won", "vp": 1} in d.st.results


def test_ruling_two_sages_each_get_their_own_pair_and_are_judged_on_it() -> None:
    """red and green both sages (dice 2, 3). CAVE6: treasures 2, 4, 6, disaster 1.
    red, the first sage in seat order, is told the cave's own pair: 2 and 4.
    green's own draw r1:sage:green has a key per treasure box (2, 4, 6): [5, 9, 1]
    → the two lowest, boxes 6 and 2. Yellow opens 2, 6, then the disaster (1):
    red's 4 stayed closed → lost; green's 2 and 6 were opened → +1 VP."""
    d = Dealer(6, {**DRAWS6, "r1:role:green": 3, "r1:sage:green": [5, 9, 1]})
    to_cave(d)
    assert d.asked[-2:] == ["r1:cave", "r1:sage:green"]
    assert d.tells("red")[-1].data == {"treasures": [2, 4]} and d.tells("green")[-1].data == {"treasures": [2, 6]}
    assert d.e.private_view("green")["told"] == {"treasures": [2, 6]}
    assert d.e.private_view("red")["told"] == {"treasures": [2, 4]}
    d.tap(2)
    d.tap(6)
    d.tap(1)
    assert {"player": "red", "role": "sage", "outcome": "lost", "vp": 0} in d.st.results
    assert {"player": "green", "role": "sage", "outcome": "won", "vp": 1} in d.st.results
    # a single sage draws nothing more: the cave's pair is theirs (the scripts stay as they were)
    d = Dealer(6, DRAWS6)
    to_cave(d)
    assert d.asked == ["r1:role:red", "r1:role:green", "r1:cave"]


def test_ruling_gifts_at_any_moment_of_a_round_but_never_gems_bid_in_the_open_auction() -> None:
    """By hand, 6 players, DRAWS6: red bids 3 of 5 (2 free): a gift of 3 is refused,
    of 2 accepted (red 3, blue 7). The role auction closes: red (3) and green (4,
    of 5) hold the roles; red pays 3 → 0, green → 1. In the turn auction yellow
    bids 3 of 5: may give 2, not 3; green, a holder, gives red 1. In the cave
    yellow finds box 2 (3 + 2: yellow 2 + 5 = 7) and passes: those 5 are at stake
    (a disaster would void them), so a gift of 7 is refused, of 2 taken (yellow 5,
    purple 5 + 2 = 7); back still takes the pass back and keeps the gift. Yellow
    then opens the disaster: the 5 void, yellow 0. Stipend: purple 9. In the VP
    auction purple bids 5: a gift of 5 is refused (4 free), of 4 taken; purple
    pays 5 → 0 gems, 1 VP. An exchange outside the round's end is refused.
    Every refusal changes nothing."""
    d = Dealer(6, DRAWS6)
    d.submit("red", "bid", 3)
    before = unchanged(d)
    with pytest.raises(Refusal) as bid_gems:
        d.submit("red", "gift", {"to": "blue", "gems": 3})
    assert bid_gems.value.key == "dt.refuse.gift_bid" and bid_gems.value.params == {"bid": 3, "high": 2}
    assert unchanged(d) == before
    d.submit("red", "gift", {"to": "blue", "gems": 2})
    assert (d.st.gems["red"], d.st.gems["blue"]) == (3, 7)
    assert "gift" not in d.e.legal("red").submits  # 3 gems, all bid
    d.bid(blue=1, green=4, yellow=0, purple=2, orange=0)
    assert d.st.holders == ["red", "green"] and (d.st.gems["red"], d.st.gems["green"]) == (0, 1)
    d.submit("yellow", "bid", 3)
    before = unchanged(d)
    with pytest.raises(Refusal):
        d.submit("yellow", "gift", {"to": "red", "gems": 3})
    assert unchanged(d) == before
    d.submit("green", "gift", {"to": "red", "gems": 1})  # a role holder bids nothing now
    assert (d.st.gems["green"], d.st.gems["red"]) == (0, 1)
    d.bid(blue=1, purple=0, orange=2)  # yellow 3, orange 2, blue 1, purple 0
    d.tap(2)
    d.next()  # yellow passes
    assert d.st.gems["yellow"] == 7
    before = unchanged(d)
    with pytest.raises(Refusal) as at_stake:
        d.submit("yellow", "gift", {"to": "purple", "gems": 7})
    assert at_stake.value.key == "dt.refuse.gift_found" and at_stake.value.params == {"found": 5, "high": 2}
    assert unchanged(d) == before
    d.submit("yellow", "gift", {"to": "purple", "gems": 2})
    assert "back" in d.e.legal().buttons  # the table cannot tell a gift was made
    d.do(Press("back"))  # the pass is taken back, the gift is not
    assert d.st.finder == "yellow" and (d.st.gems["yellow"], d.st.gems["purple"]) == (5, 7)
    before = unchanged(d)
    with pytest.raises(Refusal) as no_exchange:
        d.submit("purple", "exchange", 1)  # exchanges are for the round's end
    assert no_exchange.value.key == "dt.refuse.submit_not_now" and unchanged(d) == before
    d.tap(1)  # yellow goes on: the disaster
    assert (d.st.gems["yellow"], d.st.gems["purple"]) == (2, 9)  # after the stipend
    d.next()  # the VP auction
    d.submit("purple", "vp_bid", 5)
    before = unchanged(d)
    with pytest.raises(Refusal):
        d.submit("purple", "gift", {"to": "blue", "gems": 5})
    assert unchanged(d) == before
    d.submit("purple", "gift", {"to": "blue", "gems": 4})
    d.next()
    assert (d.st.gems["purple"], d.st.vp["purple"]) == (0, 1)
    d = Dealer(6, DRAWS6)  # a gift before any bid: back still leaves the game, as without it
    d.submit("red", "gift", {"to": "blue", "gems": 1})
    assert d.e.at_start and (d.st.gems["red"], d.st.gems["blue"]) == (4, 6)


def test_ruling_a_gift_to_or_from_a_player_who_has_exited_is_refused_at_any_moment() -> None:
    d = Dealer(6, DRAWS6)
    _to_trade(d)
    d.st.gems["blue"] = 30
    d.submit("blue", "exchange", 3)  # blue exits
    d.next()  # the VP auction
    before = unchanged(d)
    for giver, to in (("red", "blue"), ("blue", "red")):
        with pytest.raises(Refusal) as no:
            d.submit(giver, "gift", {"to": to, "gems": 1})
        assert no.value.key == ("dt.refuse.gift_to" if giver == "red" else "dt.refuse.exited")
    assert unchanged(d) == before


def test_ruling_a_tie_broken_by_vp_or_gems_names_only_the_winner_never_a_count() -> None:
    """VP auction: green (1 VP, 3 gems) bids 3, blue (0 VP, 6 gems) bids 3: equal,
    fewer VP → blue; purple (0 VP, 7 gems) bids 3: equal VP, fewer gems → still
    blue. Each tie is said with its winner only; blue wins the tie at 3. Exits at
    the same moment: green (9 gems) before red (4) — only who goes first is said."""
    d = Dealer(6, DRAWS6)
    _to_trade(d)
    d.next()
    d.submit("green", "vp_bid", 3)
    assert d.out[-1] == Say("dt.vp_auction.bid", {"player": "green", "bid": 3, "leader": "green"})
    d.submit("blue", "vp_bid", 3)
    assert d.out[-1] == Say("dt.vp_auction.bid_tie", {"player": "blue", "bid": 3, "leader": "blue"})
    d.submit("purple", "vp_bid", 3)
    assert d.out[-1] == Say("dt.vp_auction.bid_tie", {"player": "purple", "bid": 3, "leader": "blue"})
    d.next()
    assert Say("dt.vp_auction.won_tie", {"player": "blue", "bid": 3}) in d.out
    # simultaneous exits (as in the 8-player test above)
    draws = {"r1:role:red": 1, "r1:role:green": 2, "r1:role:blue": 6, "r1:cave": [1, 2, 6, 7, 8, 3, 4, 5],
             "r1:sage:green": [1, 2, 3, 4], "r1:bonus:1": 1, "r1:bonus:2": 1, "r1:bonus:6": 1, "r1:bonus:7": 1}
    d = Dealer(8, draws)
    d.st.vp.update(red=2, green=2)
    d.bid(red=1, blue=2, green=1, yellow=0, purple=0, orange=0, white=0, black=0)
    d.st.gems.update(green=9)
    d.bid(yellow=0, purple=0, orange=0, white=0, black=0)
    for b in (1, 2, 6, 7):
        d.tap(b)
    assert Say("dt.exit.together", {"players": ["red", "green"], "player": "green"}) in d.out
    # the sealed auctions' announcements name players only, never a bid, VP or gems
    for say in (o for o in d.out if isinstance(o, Say) and o.key in ("dt.role_auction.holders",
                                                                      "dt.turn_auction.order")):
        assert set(say.params) == {"players"}
    # and no line that announces a tie-break can speak a count of gems or VP, in either language
    import re
    from pathlib import Path

    import yaml
    lines = Path(R.__file__).parent / "lines"
    for lang in ("en", "ja"):
        table = yaml.safe_load((lines / f"{lang}.yaml").read_text())
        for key in ("dt.role_auction.holders", "dt.turn_auction.order", "dt.vp_auction.bid_tie",
                    "dt.vp_auction.won_tie", "dt.exit.together", "dt.exit"):
            text = table[key] if lang == "en" else table[key]["text"] + table[key]["kana"]
            assert set(re.findall(r"{(\w+)}", text)) <= {"player", "players", "leader", "bid", "place"}, key
