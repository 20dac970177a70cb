"""Demagogos' Trap: what the table and each player see — the read side.

``view``, what the table or a seat may see (the engine's one read function:
the table's facts and the board made from them alone, a player's facts and
their page), and what each step is to the table (its prompt, whom it waits
for, its headline, its part of the table's view), which the step table in
``engine`` declares beside what each step takes.  Pure reads of the state
(``state.Game``): nothing here changes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.core.contract import View
from companion.core.events import Output, Say
from companion.games.demagogos.rules import DISASTER, SAGE
from companion.games.demagogos.state import (
    Game,
    active,
    bidding,
    cave_draws,
    explorer,
    here,
    role_of,
    sealed_auction,
)
from companion.games.demagogos.steps import vp_top


# ------------------------------------------------------------ the steps
def sealed_prompt(g: Game) -> list[Output]:
    kind, bidders = sealed_auction(g), bidding(g)
    assert kind is not None
    waiting = [p for p in bidders if p not in g.sealed.get(kind, {})]
    return [Say(f"dt.{kind}_auction.waiting", {"players": waiting, "n": len(bidders) - len(waiting),
                                                "count": len(bidders)})]


def sealed_waits(g: Game) -> list[str]:
    """Everyone who may bid and has not (who has bid is public, never what)."""
    kind = sealed_auction(g)
    assert kind is not None
    return [p for p in bidding(g) if p not in g.sealed.get(kind, {})]


def sealed_headline(g: Game) -> dict[str, Any]:
    """A sealed auction counts the bids in: everyone's bid, not anyone's."""
    waiting, bidders = sealed_waits(g), bidding(g)
    return {"waiting_for": waiting, "anyone": False,
            "count": {"done": len(bidders) - len(waiting), "of": len(bidders), "what": "bids"}}


def sealed_view(g: Game) -> dict[str, Any]:
    kind = sealed_auction(g)
    assert kind is not None
    return {"bids_in": [p for p in g.players if p in g.sealed.get(kind, {})]}


def cave_prompt(g: Game) -> list[Output]:
    st = g.state
    if st.finder is not None:
        return [Say("dt.cave.more", {"player": st.finder})]
    return [Say("dt.cave.turn", {"player": explorer(g), "boxes": st.boxes})]


def vp_prompt(g: Game) -> list[Output]:
    leader, bid = vp_top(g)
    if leader is None:
        return [Say("dt.vp_auction.open")]
    return [Say("dt.vp_auction.leads", {"player": leader, "bid": bid})]


def vp_view(g: Game) -> dict[str, Any]:
    leader, bid = vp_top(g)
    return {"vp_auction": {"bids": dict(g.sealed.get("vp", {})), "leader": leader, "top": bid}}


# ------------------------------------------------------------ the views
def view(g: Game, seat: str | None = None) -> View:
    """What the table (``None``) or ``seat`` may see now: the facts, and the
    board or the page made from them."""
    if seat is None:
        facts = table_facts(g)
        return View(facts, board(facts))
    mine = seat_facts(g, seat)
    return View(mine, page(g, seat, mine))


def table_facts(g: Game) -> dict[str, Any]:
    st = g.state
    view: dict[str, Any] = {
        "step": st.step, "round": st.round, "vp": dict(st.vp), "exited": list(st.exited),
        "active": active(g), "holders": list(st.holders), "explorers": list(st.explorers),
        "boxes": st.boxes, "opened": [dict(o) for o in st.opened], "results": [dict(r) for r in st.results],
    }
    if (step := here(g)).view is not None:  # who has bid in a sealed auction, whose turn in the cave, the open bids
        view.update(step.view(g))
    view["whose_turn"] = g.waiting()
    view["rounds"] = [dict(r) for r in st.scored]
    view["totals"] = dict(st.vp)  # the VP now: a round's VP (the sage's, an exchange) moves before it is scored
    return view


def seat_facts(g: Game, player: str) -> dict[str, Any]:
    st = g.state
    if player not in st.gems:
        return {}
    view: dict[str, Any] = {"gems": st.gems[player], "vp": st.vp[player], "exited": player in st.exited,
                            "gifts": [dict(gift) for gift in st.gifts[player]]}
    bids = {k: b[player] for k, b in st.bids.items() if player in b}
    for kind in ("role", "turn"):
        if player in g.sealed.get(kind, {}):
            bids[kind] = g.sealed[kind][player]
    view["bids"] = bids
    role = role_of(g, player)
    if role is not None:
        view["role"] = role
        if st.contents and not cave_draws(g):  # told once every draw of the cave is in
            view["told"] = ({"treasures": list(st.sage_boxes[player])} if role == SAGE
                            else {"disaster": st.contents.index(DISASTER) + 1})
    return view


def page(g: Game, player: str, view: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A player's facts (``seat_facts``) as the page's lines (``dt.page.*``): gems, VP, the
    role and what it was told, the player's own sealed bids and gifts, and
    what they may send now (the forms follow, from ``legal``)."""
    st = g.state
    if not view:
        return []
    rows: list[tuple[str, dict[str, Any]]] = [("dt.page.gems", {"gems": view["gems"]}),
                                              ("dt.page.vp", {"vp": view["vp"]})]
    if view["exited"]:
        return [*rows, ("dt.page.exited", {})]
    if "role" in view:
        rows.append((f"dt.page.role.{view['role']}", {}))
    elif player in st.explorers:  # public: everyone not a role holder explores
        rows.append(("dt.page.role.explorer", {}))
    told = view.get("told", {})
    if "treasures" in told:
        rows.append(("dt.page.told.treasures", {"boxes": told["treasures"]}))
    if "disaster" in told:
        rows.append(("dt.page.told.disaster", {"box": told["disaster"]}))
    rows += [(f"dt.page.bid.{kind}", {"bid": bid}) for kind, bid in view["bids"].items()]
    rows += [(("dt.page.gift.to" if "to" in gift else "dt.page.gift.from") + (".one" if gift["gems"] == 1 else ""),
              {"round": gift["round"], "player": gift.get("to", gift.get("from")), "gems": gift["gems"]})  # "1 gem"
             for gift in view["gifts"]]
    submits = g.legal(player).submits
    # a gift alone: its form says it — but while trading the page says so (step: it names the line)
    if set(submits) - {"gift"} or (submits and st.step == "trade"):
        rows.append((f"dt.page.now.{st.step}", {}))
    return rows


def board(view: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The table's facts (``table_facts``) as the public page's lines (``dt.board.*``), read from
    it alone so nothing private can slip in: VP, who has won and left, who
    holds a role (which one only in the round's results), the explorers
    and their order, the boxes opened, and the auction — who has bid in a
    sealed one, every bid in the open one."""
    rows: list[tuple[str, dict[str, Any]]] = [("dt.board.vp", {"scores": view["vp"]})]
    if view["exited"]:
        rows.append(("dt.board.exited", {"players": view["exited"]}))
    if view["results"]:
        rows += [(f"dt.board.result.{r['role']}.{r['outcome']}", {"player": r["player"]})
                 for r in view["results"]]
    elif view["holders"]:
        rows.append(("dt.board.holders", {"players": view["holders"]}))
    if view["explorers"]:
        # bidding for the order they are in seat order; once it closed, in turn order
        rows.append(("dt.board.explorers" if view["step"] == "turn_auction" else "dt.board.order",
                     {"players": view["explorers"]}))
    if "bids_in" in view:
        rows.append(("dt.board.bids_in", {"players": view["bids_in"]}))
    if view["boxes"]:
        rows.append(("dt.board.boxes", {"boxes": view["boxes"]}))
    rows += [("dt.board.box.voided" if o.get("voided") else f"dt.board.box.{o['content']}",
              {"box": o["box"], "player": o["player"], "gems": o["gems"]}) for o in view["opened"]]
    if "vp_auction" in view:
        auction = view["vp_auction"]
        if auction["leader"] is None:
            rows.append(("dt.board.vp_auction.none", {}))
        else:
            rows.append(("dt.board.vp_auction.leads", {"player": auction["leader"], "bid": auction["top"]}))
            rows += [("dt.board.vp_auction.bid", {"player": p, "bid": b}) for p, b in auction["bids"].items()]
    return rows


def anyone(g: Game) -> dict[str, Any]:
    """The headline of a step anyone still in may close."""
    return {"waiting_for": [], "anyone": True}
