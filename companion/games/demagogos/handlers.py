"""Demagogos' Trap: what the auctions and the trade do with what they take —
sealed and open bids, gifts, exchanges, a player's exit.  The step table
(engine.py) says which handler takes what, and where it leads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from companion.core.engine import Ask, Goto
from companion.core.events import (
    Output,
    Refusal,
    Report,
    Say,
    Submit,
    Tap,
    Tell,
)
from companion.games.demagogos import rules as R
from companion.games.demagogos.state import GAME, DemagogosBase, DtState


class DemagogosHandlers(DemagogosBase):
    """The auctions' and the trade's handlers and guards."""

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

    def _scored(self) -> list[Output]:
        st = self.state
        points = {p: st.vp[p] - st.vp_start[p] for p in self.players}
        st.scored.append({"round": st.round, "points": points, "totals": dict(st.vp)})
        return [Report("round_scored", {"game": GAME, **st.scored[-1]}),
                Say("dt.round.scored", {"round": st.round, "scores": dict(st.vp)})]


def _box(inp: Tap) -> int:
    """The number of a ``dt/box/<b>`` tap."""
    return int(inp.identity.rsplit("/", 1)[1])
