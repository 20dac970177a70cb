"""Demagogos' Trap: what the auctions and the trade do with what they take —
sealed and open bids, gifts, exchanges, a player's exit: the handlers and
guards, each a function of the game (``state.Game``) and the input.  The
step table (``engine``) says which handler takes what, and where it leads;
only these functions and ``cave``'s change the state."""

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
from companion.games.demagogos.state import (
    GAME,
    DtState,
    Game,
    active,
    bidding,
    cave_draws,
    here,
    needed,
    over,
    role_draws,
    sealed_auction,
)


# ------------------------------------------------------------ submits
def outside(value: Any, low: int, high: int, key: str, what: str) -> Refusal | None:
    """Why ``value`` is no whole number from ``low`` to ``high`` (refusal ``key``), or None."""
    if problem := Ask(key, low, high).check(value):
        return Refusal(key, f"{what} {problem}", low=low, high=high)
    return None


def bid_asks(g: Game, player: str) -> dict[str, Ask]:
    if player in bidding(g):  # the explorers are all still in
        return {"bid": Ask("dt.field.bid", 0, g.state.gems[player])}
    return {}


def bid_refusal(g: Game, inp: Submit) -> Refusal | None:
    if inp.field != "bid":
        return g._not_taken("submit", inp)
    st, p = g.state, inp.player
    if p not in bidding(g):  # an exited player was refused already: a role holder's turn bid
        return Refusal("dt.refuse.holder_bid", "role holders do not bid in the turn auction", player=p)
    return outside(inp.value, 0, st.gems[p], "dt.refuse.bid", "a bid")


def sealed_bid(g: Game, inp: Submit) -> list[Output] | Goto:
    p, bid, kind = inp.player, int(inp.value), sealed_auction(g)
    assert kind is not None  # a sealed auction's step takes the bids
    bids = g.sealed.setdefault(kind, {})
    bids[p] = bid
    out: list[Output] = [Tell(p, "dt.bid.taken", {"bid": bid}, {"auction": kind, "bid": bid})]
    if len(bids) < len(bidding(g)):
        return out
    return (close_role_auction(g) if kind == "role" else close_turn_auction(g)).after(*out)


def close_role_auction(g: Game) -> Goto:
    st = g.state
    bids = st.bids["role"] = g.sealed.pop("role")
    order = R.ranked(active(g), bids, st.vp, st.gems)
    count = R.role_holder_count(len(active(g)))
    st.holders = [p for p in active(g) if p in order[:count]]  # seat order: the ranking stays secret
    out: list[Output] = [Say("dt.role_auction.holders", {"players": list(st.holders)})]
    for p in st.holders:
        st.gems[p] -= bids[p]
        out.append(Tell(p, "dt.paid", {"paid": bids[p], "gems": st.gems[p]}, {"gems": st.gems[p]}))
    return Goto("rolling", [*out, *role_draws(g)])


def close_turn_auction(g: Game) -> Goto:
    st = g.state
    bids = st.bids["turn"] = g.sealed.pop("turn")
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
                              *cave_draws(g)])


def bid_now(g: Game, player: str) -> int:
    """The gems ``player`` has bid in the auction open now (0 if none): they
    are spoken for, so cannot be given away — the sealed bid's gems, as the
    ruling says, and a standing VP bid's, which must stay payable."""
    kind = here(g).auction
    return int(g.sealed.get(kind, {}).get(player, 0)) if kind else 0


def at_stake(g: Game, player: str) -> int:
    """The treasure gems ``player`` found this round while the cave is open:
    a disaster they open would void them, so they cannot be given away
    until the exploration ends (else the void would leave them below 0)."""
    return g.state.found.get(player, 0) if here(g).exploring else 0


def gift_asks(g: Game, player: str) -> dict[str, Ask]:
    """[ruling] a gift at any moment, but not gems bid now (nor the treasure
    a disaster may still void), to another player still in."""
    if player not in active(g):
        return {}
    free = g.state.gems[player] - bid_now(g, player) - at_stake(g, player)
    others = tuple(p for p in active(g) if p != player)
    return {"gift": Ask("dt.field.gift", 1, free, others)} if free >= 1 and others else {}


def gift_refusal(g: Game, inp: Submit) -> Refusal | None:
    st, p, value = g.state, inp.player, inp.value
    if not isinstance(value, Mapping) or set(value) != {"to", "gems"}:
        return Refusal("dt.refuse.gift_form", "a gift is {to: <player>, gems: <n>}")
    to = value["to"]
    if to == p or to not in active(g):
        return Refusal("dt.refuse.gift_to", f"{to} cannot receive a gift", player=str(to))
    asked = value["gems"] if isinstance(value["gems"], int) else 0
    if (bid := bid_now(g, p)) and asked > st.gems[p] - bid:
        return Refusal("dt.refuse.gift_bid", f"{bid} of {p}'s gems are bid in the open auction",
                       bid=bid, high=st.gems[p] - bid)
    if (found := at_stake(g, p)) and asked > st.gems[p] - found:
        return Refusal("dt.refuse.gift_found", f"{found} of {p}'s gems are this round's treasure",
                       found=found, high=st.gems[p] - found)
    return outside(value["gems"], 1, st.gems[p], "dt.refuse.gift_gems", "a gift")


def gift(g: Game, inp: Submit) -> list[Output]:
    """[ruling] at any moment of a round: gems, never VP, to another player
    still in; not the gems bid in the auction open now (``_gift_refusal``)."""
    st, p, to, gems = g.state, inp.player, str(inp.value["to"]), int(inp.value["gems"])
    give(st, p, to, gems)
    return [Tell(p, "dt.gift.sent", {"player": to, "gems": gems, "left": st.gems[p]}, {"gems": st.gems[p]}),
            Tell(to, "dt.gift.received", {"player": p, "gems": gems, "left": st.gems[to]},
                 {"gems": st.gems[to]})]


def give(st: DtState, giver: str, to: str, gems: int) -> None:
    st.gems[giver] -= gems
    st.gems[to] += gems
    st.gifts[giver].append({"round": st.round, "to": to, "gems": gems})
    st.gifts[to].append({"round": st.round, "from": giver, "gems": gems})


def exchange_asks(g: Game, player: str) -> dict[str, Ask]:
    gems = g.state.gems.get(player, 0)
    if player in active(g) and gems >= R.EXCHANGE_GEMS:
        return {"exchange": Ask("dt.field.exchange", 1, gems // R.EXCHANGE_GEMS)}
    return {}


def exchange_refusal(g: Game, inp: Submit) -> Refusal | None:
    """10 gems for 1 VP, at the round's end only (as the seed places it)."""
    if inp.field != "exchange":
        return g._not_taken("submit", inp)
    gems = g.state.gems[inp.player]
    if gems < R.EXCHANGE_GEMS:
        return Refusal("dt.refuse.exchange_short", f"an exchange takes {R.EXCHANGE_GEMS} gems a VP", gems=gems)
    return outside(inp.value, 1, gems // R.EXCHANGE_GEMS, "dt.refuse.exchange", "an exchange")


def exchange(g: Game, inp: Submit) -> list[Output] | Goto:
    st, p, n = g.state, inp.player, int(inp.value)
    st.gems[p] -= n * R.EXCHANGE_GEMS
    st.vp[p] += n
    out = [Tell(p, "dt.paid", {"paid": n * R.EXCHANGE_GEMS, "gems": st.gems[p]}, {"gems": st.gems[p]}),
           Say("dt.exchange.done", {"player": p, "n": n, "vp": st.vp[p]}), *exits(g, [p])]
    return Goto("over", out) if over(g) else out


def vp_top(g: Game) -> tuple[str | None, int]:
    """The leader and the top bid.  Equal bids go by fewer VP, then fewer
    gems as the auction opened: a gift during the auction cannot turn the
    lead, which the table would see."""
    bids = g.sealed.get("vp", {})
    order = R.ranked(active(g), bids, g.state.vp, g.state.vp_gems or g.state.gems)
    return (order[0], bids[order[0]]) if order else (None, 0)


def vp_low(g: Game) -> int:
    """The lowest VP bid taken now: the top bid, and never below 1 gem."""
    return max(R.VP_MIN_BID, vp_top(g)[1])


def vp_bid_asks(g: Game, player: str) -> dict[str, Ask]:
    gems = g.state.gems.get(player, 0)
    if player in active(g) and gems >= vp_low(g):
        return {"vp_bid": Ask("dt.field.vp_bid", vp_low(g), gems)}
    return {}


def vp_bid_refusal(g: Game, inp: Submit) -> Refusal | None:
    if inp.field != "vp_bid":
        return g._not_taken("submit", inp)
    _, top = vp_top(g)
    return outside(inp.value, vp_low(g), g.state.gems[inp.player],
                         "dt.refuse.vp_bid" if top else "dt.refuse.vp_bid_first", "a VP bid")


def vp_bid(g: Game, inp: Submit) -> list[Output]:
    p, bid = inp.player, int(inp.value)
    g.sealed.setdefault("vp", {})[p] = bid
    leader, _ = vp_top(g)
    if vp_tied(g):  # [ruling] a tie broken by VP or gems: only its winner is said
        return [Say("dt.vp_auction.bid_tie", {"player": p, "bid": bid, "leader": leader})]
    return [Say("dt.vp_auction.bid", {"player": p, "bid": bid, "leader": leader})]


def vp_tied(g: Game) -> bool:
    """Do several bidders share the top bid (the tie rule picks the leader)?"""
    bids = g.sealed.get("vp", {})
    return bool(bids) and list(bids.values()).count(max(bids.values())) > 1


def exits(g: Game, candidates: Sequence[str]) -> list[Output]:
    """Those of ``candidates`` who now have 3 VP exit as winners (at the same
    moment: more gems first); the game ends at floor(players / 2) exits
    (``_over``: the caller leads to ``over``)."""
    st = g.state
    reached = [p for p in candidates if p not in st.exited and st.vp[p] >= R.WIN_VP]
    order = R.exit_order(reached, g.players, st.gems)
    # [ruling] at the same moment: only who goes first is said, never the gems that decided it
    out: list[Output] = ([Say("dt.exit.together", {"players": list(reached), "player": order[0]})]
                         if len(order) > 1 else [])
    for p in order:
        if len(st.exited) == needed(g):
            out.append(Say("dt.exit.too_late", {"player": p}))
            continue
        st.exited.append(p)
        out += [Report("dt_exit", {"player": p, "vp": st.vp[p], "place": len(st.exited)}),
                Say("dt.exit", {"player": p, "place": len(st.exited)})]
    if over(g):
        out += scored(g)
        out += [Report("game_over", {"game": GAME, "totals": dict(st.vp), "winners": list(st.exited)}),
                Say("dt.game_over", {"players": list(st.exited)})]
    return out


def scored(g: Game) -> list[Output]:
    st = g.state
    points = {p: st.vp[p] - st.vp_start[p] for p in g.players}
    st.scored.append({"round": st.round, "points": points, "totals": dict(st.vp)})
    return [Report("round_scored", {"game": GAME, **st.scored[-1]}),
            Say("dt.round.scored", {"round": st.round, "scores": dict(st.vp)})]


def box_of(inp: Tap) -> int:
    """The number of a ``dt/box/<b>`` tap."""
    return int(inp.identity.rsplit("/", 1)[1])
