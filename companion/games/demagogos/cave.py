"""Demagogos' Trap: the draws, the cave (boxes opened, treasures and their
bonus, the disaster), and the end of a round (the VP auction closed, the
round scored, the next begun)."""

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
from companion.games.demagogos.handlers import DemagogosHandlers, _box
from companion.games.demagogos.rules import DISASTER, EMPTY, SAGE, TREASURE
from companion.games.demagogos.state import DtState


class DemagogosCave(DemagogosHandlers):
    """The cave's and the round end's handlers and guards."""

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

    def _next_round(self) -> None:
        st = self.state
        keep = {k: copy.deepcopy(getattr(st, k)) for k in ("gems", "vp", "exited", "gifts", "scored")}
        # the step stays until the table moves it (the new round's role auction)
        self.state = DtState(step=st.step, round=st.round + 1, vp_start=dict(st.vp), **keep)
