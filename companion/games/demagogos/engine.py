"""Demagogos' Trap (デマゴーゴスの罠): the companion as the dealer.

Steps of a round, and what each takes (everything else is refused and changes nothing):

    role_auction  every active player submits ``bid`` (0 … their gems; again to change
                  it) → the role holders are announced, each pays their own bid
    rolling       the draws ``r<n>:role:<player>`` (1–6, one per holder) → each holder
                  is told their role (1–3 sage, 4–6 demagogue)
    turn_auction  every explorer submits ``bid`` → all pay; the order is announced
    cave_draw     the draw ``r<n>:cave`` (K shuffle keys, see ``rules.layout``: the
                  first sage's pair too) and ``r<n>:sage:<player>`` for each further
                  sage (T keys, one per treasure box: their own pair, ``rules.sage_pair``)
                  → the sages and the demagogue are told their boxes
    cave          the explorer whose turn it is taps ``dt/box/<b>`` (b ≤ K); after a
                  treasure, another box goes on and ``next`` passes
    bonus         the draw ``r<n>:bonus:<b>`` (1–3) for the treasure just opened
    trade         role results, +2 gems; ``exchange`` (n VP for 10·n gems) submits;
                  ``next`` → the VP auction
    vp_auction    ``vp_bid`` submits (open: at least the top bid, and 1 gem); ``next``
                  closes it (no bid: unsold) → ``round_scored`` and the next round
    over          nothing (``game_over`` once floor(players / 2) have exited)

In every step but ``over``, ``gift`` ({to: <name>, gems: n}) — never the gems bid
in the auction open now (the kind ``gift``, from ``kind_of``).

Secrecy (rules, *Who may know what*): gems, sealed bids, roles before the
round's end, the sage's and demagogue's boxes, gifts go out only as ``Tell``
and ``private_view``; the sealed bids live in ``self.sealed`` while their
auction is open, and in the state (never shown) after.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from companion.core.engine import Ask, Engine, Goto, Outcome, Result, Setup, Step, Take
from companion.core.events import (
    Draw,
    Drawn,
    Input,
    Output,
    Press,
    Refusal,
    Report,
    Say,
    Submit,
    Tap,
    Tell,
)
from companion.games.demagogos import rules as R
from companion.games.demagogos import views
from companion.games.demagogos.rules import DISASTER, EMPTY, SAGE, TREASURE
from companion.games.demagogos.show import SHOWS

GAME = "demagogos"
SEALED = ("role", "turn")  # the sealed ``bid`` auctions (the others' bids are open: ``vp``)
TRADE_FIELDS = ("gift", "exchange")  # submits whose very fact is private (public_label)


@dataclass
class DtState:
    step: str = "role_auction"
    round: int = 1
    gems: dict[str, int] = field(default_factory=dict)
    vp: dict[str, int] = field(default_factory=dict)
    vp_start: dict[str, int] = field(default_factory=dict)  # VP when the round began
    exited: list[str] = field(default_factory=list)  # winners, in place order
    holders: list[str] = field(default_factory=list)  # this round's role holders, seat order
    dice: dict[str, int] = field(default_factory=dict)  # holder → die (secret until the round's end)
    explorers: list[str] = field(default_factory=list)  # in turn order, once the turn auction closed
    turn: int = 0  # index into explorers: whose turn it is
    boxes: int = 0  # K: boxes dt/box/1 … K in play this round
    contents: list[str] = field(default_factory=list)  # by box, once drawn (secret until opened)
    sage_boxes: dict[str, list[int]] = field(default_factory=dict)  # sage → the 2 treasure boxes they were told
    sage_keys: dict[str, list[int]] = field(default_factory=dict)  # a further sage's own draw, until told
    opened: list[dict[str, Any]] = field(default_factory=list)  # {box, content, player, gems[, voided]}, in order
    found: dict[str, int] = field(default_factory=dict)  # treasure gems taken this round (void on disaster)
    pending: int | None = None  # the treasure box waiting for its bonus draw
    finder: str | None = None  # found a treasure: may open another box or pass
    disaster_by: str | None = None
    results: list[dict[str, Any]] = field(default_factory=list)  # the round's role results, once public
    bids: dict[str, dict[str, int]] = field(default_factory=dict)  # this round's closed sealed bids (secret)
    gifts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # per player: their own gifts
    vp_sale: dict[str, Any] | None = None  # the VP auction's outcome this round, once closed
    vp_gems: dict[str, int] = field(default_factory=dict)  # gems as the VP auction opened: its tie rule
    scored: list[dict[str, Any]] = field(default_factory=list)  # {round, points, totals} per round ended (public)


@dataclass(frozen=True)
class Round(Step):
    """A step of a round, with what this game's steps are besides: the
    auction open in it (``role``, ``turn``: sealed; ``vp``: open; its bids in
    ``sealed`` under that name), the secret draws it waits for (asked again
    on resume), the treasure a disaster may still void (the cave is open),
    and what the public view shows of it."""

    auction: str | None = None
    draws: Callable[[Any], list[Draw]] | None = None
    exploring: bool = False
    view: Callable[[Any], dict[str, Any]] | None = None


class Demagogos(Engine):
    needs_pages: ClassVar[bool] = True  # sealed bids and private roles: every player needs their page
    ordered_winners: ClassVar[bool] = True  # the winners in the order they left: their places
    outcomes: ClassVar[tuple[Outcome, ...]] = (Outcome("game_over"),)  # no sides: the places are its verdict
    game: ClassVar[str] = GAME
    tag_prefixes: ClassVar[tuple[str, ...]] = ("dt/",)
    components: ClassVar[tuple[str, ...]] = tuple(f"dt/box/{b}" for b in range(1, R.BOXES + 1))
    shows: ClassVar[Mapping[str, Callable[[Mapping[str, Any]], str]]] = SHOWS
    min_players: ClassVar[int] = 6
    max_players: ClassVar[int] = 10
    state: DtState

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        st = self.state = DtState()
        st.gems = {p: R.START_GEMS for p in self.players}
        st.vp = {p: 0 for p in self.players}
        st.vp_start = dict(st.vp)
        st.gifts = {p: [] for p in self.players}
        self._given: tuple[str, str, int] = ("", "", 0)  # the last gift made: for ``handle``

    # ------------------------------------------------------------ queries
    @property
    def active(self) -> list[str]:
        """The players still in the game, seat order."""
        return [p for p in self.players if p not in self.state.exited]

    @property
    def needed(self) -> int:
        return R.winners_needed(len(self.players))

    def _role(self, player: str) -> str | None:
        die = self.state.dice.get(player)
        return R.role_of_die(die) if die is not None else None

    def _current(self) -> str:
        st = self.state
        return st.finder or st.explorers[st.turn]

    def _sages(self) -> list[str]:
        """This round's sages, seat order: the first is told the cave's own pair."""
        return [p for p in self.state.holders if self._role(p) == SAGE]

    def _treasures_left(self) -> int:
        opened = {o["box"] for o in self.state.opened}
        return sum(1 for b, c in enumerate(self.state.contents, 1) if c == TREASURE and b not in opened)

    @property
    def _here(self) -> Round:
        """The current step's entry."""
        return self.STEPS[self.state.step]

    def _draws(self) -> list[Draw]:
        """The secret draws the current step waits for (asked again on resume)."""
        return self._here.draws(self) if self._here.draws is not None else []

    def _role_draws(self) -> list[Draw]:
        st = self.state
        return [Draw(f"r{st.round}:role:{p}", *R.DIE) for p in st.holders if p not in st.dice]

    def _cave_draws(self) -> list[Draw]:
        st = self.state
        treasure, _, _ = R.cave_contents(len(st.explorers))
        cave = [] if st.contents else [Draw(f"r{st.round}:cave", 1, R.KEY_HIGH, count=st.boxes)]
        # [ruling] each further sage draws their own pair: one key per treasure box, in box order
        return cave + [Draw(f"r{st.round}:sage:{p}", 1, R.KEY_HIGH, count=treasure)
                       for p in self._sages()[1:] if p not in st.sage_keys]

    def _bonus_draws(self) -> list[Draw]:
        st = self.state
        return [Draw(f"r{st.round}:bonus:{st.pending}", *R.BONUS)] if st.pending is not None else []

    def _sealed(self) -> str | None:
        """The sealed auction open now (``role``, ``turn``), or None."""
        return self._here.auction if self._here.auction in SEALED else None

    def _bidders(self) -> list[str]:
        """Who bids in the sealed auction open now: everyone still in for the
        roles, the explorers for the turn order."""
        return self.active if self._here.auction == "role" else self.state.explorers

    @property
    def _over(self) -> bool:
        """Have enough players exited to end the game?"""
        return len(self.state.exited) >= self.needed

    def result(self) -> Result:
        exited = tuple(self.state.exited)
        return Result(dict(self.state.vp), exited, places={p: n for n, p in enumerate(exited, 1)})

    def undo_scope(self, state: Any) -> Any:
        """A box opened in front of the table is final; passing after a treasure
        (``next``) may be taken back until the next box is tapped."""
        return (state.step, state.round, len(state.opened))

    # ---------------------------------------------------------- lifecycle
    @classmethod
    def pairing_lines(cls, players: Sequence[str], rules: Sequence[str],
                      options: Mapping[str, Any]) -> list[Output]:
        """[ruling] the boxes to lay out, said with the pairing prompt: the table
        lays them out while the phones pair."""
        return [Say("dt.pairing.boxes", {"boxes": R.boxes(len(players))})]

    def start(self) -> list[Output]:
        # the role auction's bids go to self.sealed as they come: an untouched game may be left
        return [Say("dt.start", {"count": len(self.players), "boxes": R.boxes(len(self.players)),
                                 "gems": R.START_GEMS}),
                Say("dt.role_auction.start", {"round": self.state.round}), *self.prompt()]

    def kind_of(self, inp: Input) -> tuple[str, Any]:
        """As the base has it; a player who has exited submits nothing."""
        if isinstance(inp, Submit) and inp.player in self.state.exited:
            raise Refusal("dt.refuse.exited", f"{inp.player} has won and takes no further part", player=inp.player)
        if isinstance(inp, Submit) and inp.field == "gift":
            return "gift", inp
        return super().kind_of(inp)

    def handle(self, inp: Input) -> list[Output]:
        """As the base's, but a gift is the players' business, as a sealed bid
        is: the table's ``back`` never takes it away, and the gift does not end
        what ``back`` may still take back (a pass) — a ``back`` gone from the
        public page would tell the table a gift was made.  So the gift goes
        into the undo snapshots too; and it leaves ``back`` at the very start
        as it was (leaving the game), for the same reason."""
        if not (isinstance(inp, Submit) and inp.field == "gift"):
            return super().handle(inp)
        undo, final = self._undo, self._final
        self._undo = []
        try:
            out = super().handle(inp)
        finally:
            self._undo, self._final = undo, final
        for snapshot in undo:
            self._give(snapshot, *self._given)
        return out

    def _not_taken(self, kind: str, inp: Any) -> Refusal:
        """Refused by what it is: a submit, a draw, a box, a player card, ``next``."""
        if isinstance(inp, Submit):
            return Refusal("dt.refuse.submit_not_now", f"{inp.field} is not taken now", field=inp.field)
        if isinstance(inp, Drawn):
            return Refusal("refuse.bad_draw", f"the draw {inp.name} is not expected now")
        if isinstance(inp, Tap) and inp.identity.startswith("dt/box/"):
            return Refusal("dt.refuse.box_not_now", "no box may be opened now", box=_box(inp))
        if isinstance(inp, Tap) and inp.identity.startswith("player/"):
            return Refusal("dt.refuse.player_card", "player cards are not needed now: use your page",
                           player=inp.identity.removeprefix("player/"))
        if isinstance(inp, Tap):
            return Refusal("dt.refuse.not_now", f"{inp.identity} is not expected now")
        if kind == "next" and (auction := self._sealed()) is not None:
            waiting = [p for p in self._bidders() if p not in self.sealed.get(auction, {})]
            return Refusal("dt.refuse.bids_missing", "every bid must be in first", players=waiting)
        if kind == "next":
            return Refusal("dt.refuse.not_now", "next does nothing now")
        return Refusal("dt.refuse.not_now", f"{inp.label} is not expected now")

    # ------------------------------------------------------------ submits
    @staticmethod
    def _outside(value: Any, low: int, high: int, key: str, what: str) -> Refusal | None:
        """Why ``value`` is no whole number from ``low`` to ``high`` (refusal ``key``), or None."""
        if problem := Ask(key, low, high).check(value):
            return Refusal(key, f"{what} {problem}", low=low, high=high)
        return None

    def _bid_asks(self, player: str) -> dict[str, Ask]:
        if player in self._bidders():  # the explorers are all still in
            return {"bid": Ask("dt.field.bid", 0, self.state.gems[player])}
        return {}

    def _bid_refusal(self, inp: Submit) -> Refusal | None:
        if inp.field != "bid":
            return self._not_taken("submit", inp)
        st, p = self.state, inp.player
        if p not in self._bidders():  # an exited player was refused already: a role holder's turn bid
            return Refusal("dt.refuse.holder_bid", "role holders do not bid in the turn auction", player=p)
        return self._outside(inp.value, 0, st.gems[p], "dt.refuse.bid", "a bid")

    def _sealed_bid(self, inp: Submit) -> list[Output] | Goto:
        p, bid, kind = inp.player, int(inp.value), self._sealed()
        assert kind is not None  # a sealed auction's step takes the bids
        bids = self.sealed.setdefault(kind, {})
        bids[p] = bid
        out: list[Output] = [Tell(p, "dt.bid.taken", {"bid": bid}, {"auction": kind, "bid": bid})]
        if len(bids) < len(self._bidders()):
            return out
        return (self._close_role_auction() if kind == "role" else self._close_turn_auction()).after(*out)

    def _close_role_auction(self) -> Goto:
        st = self.state
        bids = st.bids["role"] = self.sealed.pop("role")
        order = R.ranked(self.active, bids, st.vp, st.gems)
        count = R.role_holder_count(len(self.active))
        st.holders = [p for p in self.active if p in order[:count]]  # seat order: the ranking stays secret
        out: list[Output] = [Say("dt.role_auction.holders", {"players": list(st.holders)})]
        for p in st.holders:
            st.gems[p] -= bids[p]
            out.append(Tell(p, "dt.paid", {"paid": bids[p], "gems": st.gems[p]}, {"gems": st.gems[p]}))
        return Goto("rolling", [*out, *self._role_draws()])

    def _close_turn_auction(self) -> Goto:
        st = self.state
        bids = st.bids["turn"] = self.sealed.pop("turn")
        out: list[Output] = []
        for p in st.explorers:
            st.gems[p] -= bids[p]
            out.append(Tell(p, "dt.paid", {"paid": bids[p], "gems": st.gems[p]}, {"gems": st.gems[p]}))
        st.explorers = R.ranked(st.explorers, bids, st.vp, st.gems)
        treasure, empty, _ = R.cave_contents(len(st.explorers))
        st.boxes = len(st.explorers) + 3
        # the contents, and each further sage's own pair, are drawn now
        return Goto("cave_draw", [*out, Say("dt.turn_auction.order", {"players": list(st.explorers)}),
                                  Say("dt.cave.start", {"boxes": st.boxes, "treasure": treasure, "empty": empty}),
                                  *self._cave_draws()])

    def _bid_now(self, player: str) -> int:
        """The gems ``player`` has bid in the auction open now (0 if none): they
        are spoken for, so cannot be given away — the sealed bid's gems, as the
        ruling says, and a standing VP bid's, which must stay payable."""
        kind = self._here.auction
        return int(self.sealed.get(kind, {}).get(player, 0)) if kind else 0

    def _at_stake(self, player: str) -> int:
        """The treasure gems ``player`` found this round while the cave is open:
        a disaster they open would void them, so they cannot be given away
        until the exploration ends (else the void would leave them below 0)."""
        return self.state.found.get(player, 0) if self._here.exploring else 0

    def _gift_asks(self, player: str) -> dict[str, Ask]:
        """[ruling] a gift at any moment, but not gems bid now (nor the treasure
        a disaster may still void), to another player still in."""
        if player not in self.active:
            return {}
        free = self.state.gems[player] - self._bid_now(player) - self._at_stake(player)
        others = tuple(p for p in self.active if p != player)
        return {"gift": Ask("dt.field.gift", 1, free, others)} if free >= 1 and others else {}

    def _gift_refusal(self, inp: Submit) -> Refusal | None:
        st, p, value = self.state, inp.player, inp.value
        if not isinstance(value, Mapping) or set(value) != {"to", "gems"}:
            return Refusal("dt.refuse.gift_form", "a gift is {to: <player>, gems: <n>}")
        to = value["to"]
        if to == p or to not in self.active:
            return Refusal("dt.refuse.gift_to", f"{to} cannot receive a gift", player=str(to))
        asked = value["gems"] if isinstance(value["gems"], int) else 0
        if (bid := self._bid_now(p)) and asked > st.gems[p] - bid:
            return Refusal("dt.refuse.gift_bid", f"{bid} of {p}'s gems are bid in the open auction",
                           bid=bid, high=st.gems[p] - bid)
        if (found := self._at_stake(p)) and asked > st.gems[p] - found:
            return Refusal("dt.refuse.gift_found", f"{found} of {p}'s gems are this round's treasure",
                           found=found, high=st.gems[p] - found)
        return self._outside(value["gems"], 1, st.gems[p], "dt.refuse.gift_gems", "a gift")

    def _gift(self, inp: Submit) -> list[Output]:
        """[ruling] at any moment of a round: gems, never VP, to another player
        still in; not the gems bid in the auction open now (``_gift_refusal``)."""
        st, p, to, gems = self.state, inp.player, str(inp.value["to"]), int(inp.value["gems"])
        self._given = (p, to, gems)
        self._give(st, *self._given)
        return [Tell(p, "dt.gift.sent", {"player": to, "gems": gems, "left": st.gems[p]}, {"gems": st.gems[p]}),
                Tell(to, "dt.gift.received", {"player": p, "gems": gems, "left": st.gems[to]},
                     {"gems": st.gems[to]})]

    @staticmethod
    def _give(st: DtState, giver: str, to: str, gems: int) -> None:
        st.gems[giver] -= gems
        st.gems[to] += gems
        st.gifts[giver].append({"round": st.round, "to": to, "gems": gems})
        st.gifts[to].append({"round": st.round, "from": giver, "gems": gems})

    def _exchange_asks(self, player: str) -> dict[str, Ask]:
        gems = self.state.gems.get(player, 0)
        if player in self.active and gems >= R.EXCHANGE_GEMS:
            return {"exchange": Ask("dt.field.exchange", 1, gems // R.EXCHANGE_GEMS)}
        return {}

    def _exchange_refusal(self, inp: Submit) -> Refusal | None:
        """10 gems for 1 VP, at the round's end only (as the seed places it)."""
        if inp.field != "exchange":
            return self._not_taken("submit", inp)
        gems = self.state.gems[inp.player]
        if gems < R.EXCHANGE_GEMS:
            return Refusal("dt.refuse.exchange_short", f"an exchange takes {R.EXCHANGE_GEMS} gems a VP", gems=gems)
        return self._outside(inp.value, 1, gems // R.EXCHANGE_GEMS, "dt.refuse.exchange", "an exchange")

    def _exchange(self, inp: Submit) -> list[Output] | Goto:
        st, p, n = self.state, inp.player, int(inp.value)
        st.gems[p] -= n * R.EXCHANGE_GEMS
        st.vp[p] += n
        out = [Tell(p, "dt.paid", {"paid": n * R.EXCHANGE_GEMS, "gems": st.gems[p]}, {"gems": st.gems[p]}),
               Say("dt.exchange.done", {"player": p, "n": n, "vp": st.vp[p]}), *self._exits([p])]
        return Goto("over", out) if self._over else out

    def _vp_top(self) -> tuple[str | None, int]:
        """The leader and the top bid.  Equal bids go by fewer VP, then fewer
        gems as the auction opened: a gift during the auction cannot turn the
        lead, which the table would see."""
        bids = self.sealed.get("vp", {})
        order = R.ranked(self.active, bids, self.state.vp, self.state.vp_gems or self.state.gems)
        return (order[0], bids[order[0]]) if order else (None, 0)

    def _vp_low(self) -> int:
        """The lowest VP bid taken now: the top bid, and never below 1 gem."""
        return max(R.VP_MIN_BID, self._vp_top()[1])

    def _vp_bid_asks(self, player: str) -> dict[str, Ask]:
        gems = self.state.gems.get(player, 0)
        if player in self.active and gems >= self._vp_low():
            return {"vp_bid": Ask("dt.field.vp_bid", self._vp_low(), gems)}
        return {}

    def _vp_bid_refusal(self, inp: Submit) -> Refusal | None:
        if inp.field != "vp_bid":
            return self._not_taken("submit", inp)
        _, top = self._vp_top()
        return self._outside(inp.value, self._vp_low(), self.state.gems[inp.player],
                             "dt.refuse.vp_bid" if top else "dt.refuse.vp_bid_first", "a VP bid")

    def _vp_bid(self, inp: Submit) -> list[Output]:
        p, bid = inp.player, int(inp.value)
        self.sealed.setdefault("vp", {})[p] = bid
        leader, _ = self._vp_top()
        if self._vp_tied():  # [ruling] a tie broken by VP or gems: only its winner is said
            return [Say("dt.vp_auction.bid_tie", {"player": p, "bid": bid, "leader": leader})]
        return [Say("dt.vp_auction.bid", {"player": p, "bid": bid, "leader": leader})]

    def _vp_tied(self) -> bool:
        """Do several bidders share the top bid (the tie rule picks the leader)?"""
        bids = self.sealed.get("vp", {})
        return bool(bids) and list(bids.values()).count(max(bids.values())) > 1

    # -------------------------------------------------------------- draws
    def _draw_refusal(self, inp: Drawn) -> Refusal | None:
        request = next((d for d in self._draws() if d.name == inp.name), None)
        if request is None:
            return Refusal("refuse.bad_draw", f"the draw {inp.name} is not expected now")
        if not request.accepts(inp.value):
            return Refusal("refuse.bad_draw", f"{inp.value!r} cannot be the draw {inp.name}")
        return None

    def _die_drawn(self, inp: Drawn) -> list[Output] | Goto:
        """A role holder's die: their role, told to them; once all are in, the turn auction."""
        st = self.state
        holder = inp.name.rsplit(":", 1)[1]
        st.dice[holder] = int(inp.value)
        role = R.role_of_die(st.dice[holder])
        out: list[Output] = [Tell(holder, f"dt.role.{role}", {}, {"role": role})]
        if len(st.dice) < len(st.holders):
            return out
        st.explorers = [p for p in self.active if p not in st.holders]
        return Goto("turn_auction", [*out, Say("dt.turn_auction.start", {"players": list(st.explorers)})],
                    prompt=True)

    def _cave_drawn(self, inp: Drawn) -> list[Output] | Goto:
        """The cave's contents (the first sage's pair with them), or a further
        sage's own draw; once all are in, each role holder is told their boxes."""
        st = self.state
        if inp.name == f"r{st.round}:cave":
            treasure, empty, _ = R.cave_contents(len(st.explorers))
            st.contents, pair = R.layout(list(inp.value), treasure, empty)
            if sages := self._sages():
                st.sage_boxes[sages[0]] = pair
        else:
            st.sage_keys[inp.name.rsplit(":", 1)[1]] = list(inp.value)
        if self._cave_draws():
            return []
        treasures = [b for b, c in enumerate(st.contents, 1) if c == TREASURE]
        st.sage_boxes.update({p: R.sage_pair(treasures, keys) for p, keys in st.sage_keys.items()})
        disaster = st.contents.index(DISASTER) + 1
        out: list[Output] = []
        for p in st.holders:
            if self._role(p) == SAGE:
                out.append(Tell(p, "dt.sage.boxes", {"boxes": list(st.sage_boxes[p])},
                                {"treasures": list(st.sage_boxes[p])}))
            else:
                out.append(Tell(p, "dt.demagogue.box", {"box": disaster}, {"disaster": disaster}))
        st.turn = 0
        return Goto("cave", out, prompt=True)

    # --------------------------------------------------------------- cave
    def _box_refusal(self, inp: Tap) -> Refusal | None:
        st = self.state
        if not inp.identity.startswith("dt/box/"):
            return self._not_taken("tap", inp)
        box = _box(inp)
        if box > st.boxes:
            return Refusal("dt.refuse.box_range", f"this round uses boxes 1 to {st.boxes}", box=box, boxes=st.boxes)
        if any(o["box"] == box for o in st.opened):
            return Refusal("dt.refuse.box_opened", f"box {box} is already open", box=box)
        return None

    def _open_box(self, inp: Tap) -> list[Output] | Goto:
        st, box = self.state, _box(inp)
        player, content = self._current(), st.contents[box - 1]
        if content == TREASURE:
            st.pending = box
            return Goto("bonus", [Say("dt.box.treasure", {"box": box, "player": player}), *self._bonus_draws()])
        record = {"box": box, "content": content, "player": player, "gems": 0}
        st.opened.append(record)
        if content == EMPTY:
            st.finder = None
            st.turn = (st.explorers.index(player) + 1) % len(st.explorers)
            return [Report("dt_box", record), Say("dt.box.empty", {"box": box, "player": player}),
                    *self.prompt()]
        voided = st.found.get(player, 0)
        st.gems[player] -= voided
        # the board shows the treasures the disaster took back as void (the table heard it)
        st.opened = [{**o, "voided": True} if o["player"] == player and o["content"] == TREASURE else o
                     for o in st.opened]
        st.found[player] = 0
        st.vp[player] = R.halved(st.vp[player])
        st.disaster_by = player
        said: list[Output] = [Report("dt_box", {**record, "voided": voided}),
                              Say("dt.box.disaster", {"box": box, "player": player, "vp": st.vp[player]}),
                              *([Say("dt.box.voided", {"player": player, "gems": voided})] if voided else [])]
        return self._round_end().after(*said)  # said as it stood before the round's end

    def _treasure(self, inp: Drawn) -> Goto:
        """The bonus of the treasure just opened: its gems; the finder may go on."""
        st, bonus = self.state, int(inp.value)
        box, player = st.pending, self._current()
        assert box is not None
        last = self._treasures_left() == 1
        gems = R.treasure_gems(bonus, last)
        st.gems[player] += gems
        st.found[player] = st.found.get(player, 0) + gems
        record = {"box": box, "content": TREASURE, "player": player, "gems": gems}
        st.opened.append(record)
        st.pending = None
        out: list[Output] = [Report("dt_box", record),
                             Say("dt.box.gems_last" if last else "dt.box.gems",
                                 {"player": player, "gems": gems, "bonus": bonus})]
        if last:
            return self._round_end().after(*out, Say("dt.cave.all_found"))
        st.finder = player
        return Goto("cave", out, prompt=True)

    def _open_first(self, _: Press) -> Refusal | None:
        if self.state.finder is None:
            return Refusal("dt.refuse.open_first", f"{self._current()} opens a box first", player=self._current())
        return None

    def _pass(self, _: Press) -> list[Output]:
        """After a treasure, the finder may pass instead of opening another box."""
        st = self.state
        assert st.finder is not None
        st.turn = (st.explorers.index(st.finder) + 1) % len(st.explorers)
        st.finder = None
        return [Say("dt.cave.passed"), *self.prompt()]

    def _vp_auction(self, _: Press) -> Goto:
        self.state.vp_gems = dict(self.state.gems)
        return Goto("vp_auction", [Say("dt.vp_auction.start")], prompt=True)

    # ---------------------------------------------------------- round end
    def _round_end(self) -> Goto:
        """The cave is over: role results (and so the roles), the exits they
        make, the stipend, then gifts and exchanges."""
        st = self.state
        opened = [o["box"] for o in st.opened]
        out: list[Output] = [Say("dt.round_end.start")]
        for p in st.holders:
            role = self._role(p)
            if role == SAGE:
                won = R.sage_wins(st.sage_boxes[p], opened)  # [ruling] each on their own pair
                st.vp[p] += int(won)
                outcome = "won" if won else "lost"
            elif st.disaster_by is not None:
                st.vp[p] += 1
                outcome = "won"
            else:  # every treasure found, the disaster never opened: it falls on the demagogue
                st.vp[p] = R.halved(st.vp_start[p])
                st.gems[p] = R.halved(st.gems[p])
                outcome = "hit"
            st.results.append({"player": p, "role": role, "outcome": outcome, "vp": st.vp[p]})
            out.append(Say(f"dt.result.{role}.{outcome}", {"player": p, "vp": st.vp[p]}))
        out += self._exits(list(st.holders))
        if self._over:
            return Goto("over", out)
        for p in self.active:
            st.gems[p] += R.STIPEND
        return Goto("trade", [*out, Say("dt.stipend", {"gems": R.STIPEND})], prompt=True)

    def _exits(self, candidates: Sequence[str]) -> list[Output]:
        """Those of ``candidates`` who now have 3 VP exit as winners (at the same
        moment: more gems first); the game ends at floor(players / 2) exits
        (``_over``: the caller leads to ``over``)."""
        st = self.state
        reached = [p for p in candidates if p not in st.exited and st.vp[p] >= R.WIN_VP]
        order = R.exit_order(reached, self.players, st.gems)
        # [ruling] at the same moment: only who goes first is said, never the gems that decided it
        out: list[Output] = ([Say("dt.exit.together", {"players": list(reached), "player": order[0]})]
                             if len(order) > 1 else [])
        for p in order:
            if len(st.exited) == self.needed:
                out.append(Say("dt.exit.too_late", {"player": p}))
                continue
            st.exited.append(p)
            out += [Report("dt_exit", {"player": p, "vp": st.vp[p], "place": len(st.exited)}),
                    Say("dt.exit", {"player": p, "place": len(st.exited)})]
        if self._over:
            out += self._scored()
            out += [Report("game_over", {"game": GAME, "totals": dict(st.vp), "winners": list(st.exited)}),
                    Say("dt.game_over", {"players": list(st.exited)})]
        return out

    def _close_vp_auction(self, _: Press) -> Goto:
        st = self.state
        winner, bid = self._vp_top()
        tied = self._vp_tied()
        self.sealed.pop("vp", None)
        out: list[Output] = []
        if winner is None:
            st.vp_sale = {"player": None, "bid": 0}
            out.append(Say("dt.vp_auction.unsold"))
        else:
            st.gems[winner] -= bid
            st.vp[winner] += 1
            st.vp_sale = {"player": winner, "bid": bid}
            won = (Say("dt.vp_auction.won_tie", {"player": winner, "bid": bid}) if tied
                   else Say("dt.vp_auction.won", {"player": winner, "bid": bid, "vp": st.vp[winner]}))
            out += [won, *self._exits([winner])]
        if self._over:
            return Goto("over", out)
        out += self._scored()
        self._next_round()
        return Goto("role_auction", [*out, Say("dt.role_auction.start", {"round": self.state.round})], prompt=True)

    def _scored(self) -> list[Output]:
        st = self.state
        points = {p: st.vp[p] - st.vp_start[p] for p in self.players}
        st.scored.append({"round": st.round, "points": points, "totals": dict(st.vp)})
        return [Report("round_scored", {"game": GAME, **st.scored[-1]}),
                Say("dt.round.scored", {"round": st.round, "scores": dict(st.vp)})]

    def _next_round(self) -> None:
        st = self.state
        keep = {k: copy.deepcopy(getattr(st, k)) for k in ("gems", "vp", "exited", "gifts", "scored")}
        # the step stays until the table moves it (the new round's role auction)
        self.state = DtState(step=st.step, round=st.round + 1, vp_start=dict(st.vp), **keep)

    # ------------------------------------------------------------ prompts
    def resume(self) -> list[Output]:
        return [Say("dt.resume", {"round": self.state.round}), *self.prompt(), *self._draws()]

    # ---------------------------------------------------------- read side
    def public_label(self, inp: Input) -> str:
        """A gift or an exchange is the giver's and receiver's business: its
        acceptance is not public (an exchange's VP is announced)."""
        if isinstance(inp, Submit) and inp.field in TRADE_FIELDS:
            return ""
        return inp.label

    # the views are views.py's
    def public_view(self) -> dict[str, Any]:
        return views.public_view(self)

    def private_view(self, player: str) -> dict[str, Any]:
        return views.private_view(self, player)

    def page(self, player: str) -> list[tuple[str, dict[str, Any]]]:
        return views.page(self, player)

    def board(self) -> list[tuple[str, dict[str, Any]]]:
        return views.board(self)

    # ------------------------------------------------------------ the steps
    # step -> {input kind -> Take(handler, where it leads, its guard, a
    # player's fields)}, and what the step is besides (``Round``): its prompt,
    # whom it waits for, its headline, its auction, draws and view.  What is
    # not taken is refused by what it is (``_not_taken``), the same in every
    # step.  [ruling] a gift (kind ``gift``, see ``kind_of``) is taken at any
    # moment of a round.  Trading and the open VP auction are anyone's to close:
    # everyone still in may act (who can afford what is private); nobody is
    # waited for while the dealer draws.
    _GIFT = Take(_gift, (), _gift_refusal, asks=_gift_asks)
    STEPS: ClassVar[dict[str, Round]] = {
        "role_auction": Round({"submit": Take(_sealed_bid, ("role_auction", "rolling"), _bid_refusal, asks=_bid_asks),
                               "gift": _GIFT},
                              prompt=views.sealed_prompt, waits=views.sealed_waits, headline=views.sealed_headline,
                              auction="role", view=views.sealed_view),
        "rolling": Round({"draw": Take(_die_drawn, ("rolling", "turn_auction"), _draw_refusal), "gift": _GIFT},
                         draws=_role_draws),
        "turn_auction": Round({"submit": Take(_sealed_bid, ("turn_auction", "cave_draw"), _bid_refusal,
                                              asks=_bid_asks), "gift": _GIFT},
                              prompt=views.sealed_prompt, waits=views.sealed_waits, headline=views.sealed_headline,
                              auction="turn", view=views.sealed_view),
        "cave_draw": Round({"draw": Take(_cave_drawn, ("cave_draw", "cave"), _draw_refusal), "gift": _GIFT},
                           draws=_cave_draws),
        "cave": Round({"tap": Take(_open_box, ("cave", "bonus", "trade", "over"), _box_refusal),
                       "next": Take(_pass, (), _open_first), "gift": _GIFT},
                      prompt=views.cave_prompt, waits=lambda g: [g._current()], exploring=True,
                      view=lambda g: {"turn": g._current()}),
        "bonus": Round({"draw": Take(_treasure, ("cave", "trade", "over"), _draw_refusal), "gift": _GIFT},
                       draws=_bonus_draws, exploring=True),
        "trade": Round({"submit": Take(_exchange, ("trade", "over"), _exchange_refusal, asks=_exchange_asks),
                        "next": Take(_vp_auction, ("vp_auction",)), "gift": _GIFT},
                       prompt=lambda g: [Say("dt.trade.prompt")], waits=lambda g: g.active,
                       headline=views.anyone),
        "vp_auction": Round({"submit": Take(_vp_bid, (), _vp_bid_refusal, asks=_vp_bid_asks),
                             "next": Take(_close_vp_auction, ("over", "role_auction")), "gift": _GIFT},
                            prompt=views.vp_prompt, waits=lambda g: g.active, headline=views.anyone,
                            auction="vp", view=views.vp_view),
        "over": Round({}, prompt=lambda g: [Say("dt.game_over", {"players": list(g.state.exited)})], final=True),
    }


def _box(inp: Tap) -> int:
    """The number of a ``dt/box/<b>`` tap."""
    return int(inp.identity.rsplit("/", 1)[1])
