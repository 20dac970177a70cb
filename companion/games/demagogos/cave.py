"""Demagogos' Trap: the draws, the cave (boxes opened, treasures and their
bonus, the disaster), and the end of a round (the VP auction closed, the
round scored, the next begun): the handlers and guards the step table
(``engine``) names, each a function of the game (``state.Game``) and the
input."""

from __future__ import annotations

import copy

from companion.core.engine import Goto
from companion.core.events import (
    Drawn,
    Output,
    Press,
    Refusal,
    Report,
    Say,
    Tap,
    Tell,
)
from companion.games.demagogos import rules as R
from companion.games.demagogos.rules import DISASTER, EMPTY, SAGE, TREASURE
from companion.games.demagogos.state import (
    DtState,
    Game,
    active,
    bonus_draws,
    cave_draws,
    draws,
    explorer,
    over,
    role_of,
    sages,
    treasures_left,
)
from companion.games.demagogos.steps import box_of, exits, scored, vp_tied, vp_top


# -------------------------------------------------------------- draws
def draw_refusal(g: Game, inp: Drawn) -> Refusal | None:
    request = next((d for d in draws(g) if d.name == inp.name), None)
    if request is None:
        return Refusal("refuse.bad_draw", f"the draw {inp.name} is not expected now")
    if not request.accepts(inp.value):
        return Refusal("refuse.bad_draw", f"{inp.value!r} cannot be the draw {inp.name}")
    return None


def die_drawn(g: Game, inp: Drawn) -> list[Output] | Goto:
    """A role holder's die: their role, told to them; once all are in, the turn auction."""
    st = g.state
    holder = inp.name.rsplit(":", 1)[1]
    st.dice[holder] = int(inp.value)
    role = R.role_of_die(st.dice[holder])
    out: list[Output] = [Tell(holder, f"dt.role.{role}", {}, {"role": role})]
    if len(st.dice) < len(st.holders):
        return out
    st.explorers = [p for p in active(g) if p not in st.holders]
    return Goto("turn_auction", [*out, Say("dt.turn_auction.start", {"players": list(st.explorers)})],
                prompt=True)


def cave_drawn(g: Game, inp: Drawn) -> list[Output] | Goto:
    """The cave's contents (the first sage's pair with them), or a further
    sage's own draw; once all are in, each role holder is told their boxes."""
    st = g.state
    if inp.name == f"r{st.round}:cave":
        treasure, empty, _ = R.cave_contents(len(st.explorers))
        st.contents, pair = R.layout(list(inp.value), treasure, empty)
        if told := sages(g):
            st.sage_boxes[told[0]] = pair
    else:
        st.sage_keys[inp.name.rsplit(":", 1)[1]] = list(inp.value)
    if cave_draws(g):
        return []
    treasures = [b for b, c in enumerate(st.contents, 1) if c == TREASURE]
    st.sage_boxes.update({p: R.sage_pair(treasures, keys) for p, keys in st.sage_keys.items()})
    disaster = st.contents.index(DISASTER) + 1
    out: list[Output] = []
    for p in st.holders:
        if role_of(g, p) == SAGE:
            out.append(Tell(p, "dt.sage.boxes", {"boxes": list(st.sage_boxes[p])},
                            {"treasures": list(st.sage_boxes[p])}))
        else:
            out.append(Tell(p, "dt.demagogue.box", {"box": disaster}, {"disaster": disaster}))
    st.turn = 0
    return Goto("cave", out, prompt=True)


# --------------------------------------------------------------- cave
def box_refusal(g: Game, inp: Tap) -> Refusal | None:
    st = g.state
    if not inp.identity.startswith("dt/box/"):
        return g._not_taken("tap", inp)
    box = box_of(inp)
    if box > st.boxes:
        return Refusal("dt.refuse.box_range", f"this round uses boxes 1 to {st.boxes}", box=box, boxes=st.boxes)
    if any(o["box"] == box for o in st.opened):
        return Refusal("dt.refuse.box_opened", f"box {box} is already open", box=box)
    return None


def open_box(g: Game, inp: Tap) -> list[Output] | Goto:
    st, box = g.state, box_of(inp)
    player, content = explorer(g), st.contents[box - 1]
    if content == TREASURE:
        st.pending = box
        return Goto("bonus", [Say("dt.box.treasure", {"box": box, "player": player}), *bonus_draws(g)])
    record = {"box": box, "content": content, "player": player, "gems": 0}
    st.opened.append(record)
    if content == EMPTY:
        st.finder = None
        st.turn = (st.explorers.index(player) + 1) % len(st.explorers)
        return [Report("dt_box", record), Say("dt.box.empty", {"box": box, "player": player}),
                *g.prompt()]
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
    return round_end(g).after(*said)  # said as it stood before the round's end


def treasure(g: Game, inp: Drawn) -> Goto:
    """The bonus of the treasure just opened: its gems; the finder may go on."""
    st, bonus = g.state, int(inp.value)
    box, player = st.pending, explorer(g)
    assert box is not None
    last = treasures_left(g) == 1
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
        return round_end(g).after(*out, Say("dt.cave.all_found"))
    st.finder = player
    return Goto("cave", out, prompt=True)


def open_first(g: Game, _: Press) -> Refusal | None:
    if g.state.finder is None:
        return Refusal("dt.refuse.open_first", f"{explorer(g)} opens a box first", player=explorer(g))
    return None


def pass_turn(g: Game, _: Press) -> list[Output]:
    """After a treasure, the finder may pass instead of opening another box."""
    st = g.state
    assert st.finder is not None
    st.turn = (st.explorers.index(st.finder) + 1) % len(st.explorers)
    st.finder = None
    return [Say("dt.cave.passed"), *g.prompt()]


def vp_auction(g: Game, _: Press) -> Goto:
    g.state.vp_gems = dict(g.state.gems)
    return Goto("vp_auction", [Say("dt.vp_auction.start")], prompt=True)


# ---------------------------------------------------------- round end
def round_end(g: Game) -> Goto:
    """The cave is over: role results (and so the roles), the exits they
    make, the stipend, then gifts and exchanges."""
    st = g.state
    opened = [o["box"] for o in st.opened]
    out: list[Output] = [Say("dt.round_end.start")]
    for p in st.holders:
        role = role_of(g, p)
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
    out += exits(g, list(st.holders))
    if over(g):
        return Goto("over", out)
    for p in active(g):
        st.gems[p] += R.STIPEND
    return Goto("trade", [*out, Say("dt.stipend", {"gems": R.STIPEND})], prompt=True)


def close_vp_auction(g: Game, _: Press) -> Goto:
    st = g.state
    winner, bid = vp_top(g)
    tied = vp_tied(g)
    g.sealed.pop("vp", None)
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
        out += [won, *exits(g, [winner])]
    if over(g):
        return Goto("over", out)
    out += scored(g)
    next_round(g)
    return Goto("role_auction", [*out, Say("dt.role_auction.start", {"round": g.state.round})], prompt=True)


def next_round(g: Game) -> None:
    st = g.state
    keep = {k: copy.deepcopy(getattr(st, k)) for k in ("gems", "vp", "exited", "gifts", "scored")}
    # the step stays until the table moves it (the new round's role auction)
    g.state = DtState(step=st.step, round=st.round + 1, vp_start=dict(st.vp), **keep)
