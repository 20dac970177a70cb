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

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from companion.core.engine import Outcome, Take
from companion.core.events import (
    Drawn,
    Input,
    Output,
    Refusal,
    Say,
    Submit,
    Tap,
)
from companion.games.demagogos import rules as R
from companion.games.demagogos import views
from companion.games.demagogos.cave import DemagogosCave
from companion.games.demagogos.handlers import _box
from companion.games.demagogos.show import SHOWS
from companion.games.demagogos.state import GAME, TRADE_FIELDS, Round

_h = DemagogosCave  # the handlers of the step table, as the modules below define them


class Demagogos(DemagogosCave):
    needs_pages: ClassVar[bool] = True  # sealed bids and private roles: every player needs their page
    ordered_winners: ClassVar[bool] = True  # the winners in the order they left: their places
    outcomes: ClassVar[tuple[Outcome, ...]] = (Outcome("game_over"),)  # no sides: the places are its verdict
    game: ClassVar[str] = GAME
    tag_prefixes: ClassVar[tuple[str, ...]] = ("dt/",)
    components: ClassVar[tuple[str, ...]] = tuple(f"dt/box/{b}" for b in range(1, R.BOXES + 1))
    shows: ClassVar[Mapping[str, Callable[[Mapping[str, Any]], str]]] = SHOWS
    min_players: ClassVar[int] = 6
    max_players: ClassVar[int] = 10

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
    _GIFT = Take(_h._gift, (), _h._gift_refusal, asks=_h._gift_asks)

    STEPS: ClassVar[dict[str, Round]] = {
        "role_auction": Round({"submit": Take(_h._sealed_bid, ("role_auction", "rolling"), _h._bid_refusal, asks=_h._bid_asks),
                               "gift": _GIFT},
                              prompt=views.sealed_prompt, waits=views.sealed_waits, headline=views.sealed_headline,
                              auction="role", view=views.sealed_view),
        "rolling": Round({"draw": Take(_h._die_drawn, ("rolling", "turn_auction"), _h._draw_refusal), "gift": _GIFT},
                         draws=_h._role_draws),
        "turn_auction": Round({"submit": Take(_h._sealed_bid, ("turn_auction", "cave_draw"), _h._bid_refusal,
                                              asks=_h._bid_asks), "gift": _GIFT},
                              prompt=views.sealed_prompt, waits=views.sealed_waits, headline=views.sealed_headline,
                              auction="turn", view=views.sealed_view),
        "cave_draw": Round({"draw": Take(_h._cave_drawn, ("cave_draw", "cave"), _h._draw_refusal), "gift": _GIFT},
                           draws=_h._cave_draws),
        "cave": Round({"tap": Take(_h._open_box, ("cave", "bonus", "trade", "over"), _h._box_refusal),
                       "next": Take(_h._pass, (), _h._open_first), "gift": _GIFT},
                      prompt=views.cave_prompt, waits=lambda g: [g._current()], exploring=True,
                      view=lambda g: {"turn": g._current()}),
        "bonus": Round({"draw": Take(_h._treasure, ("cave", "trade", "over"), _h._draw_refusal), "gift": _GIFT},
                       draws=_h._bonus_draws, exploring=True),
        "trade": Round({"submit": Take(_h._exchange, ("trade", "over"), _h._exchange_refusal, asks=_h._exchange_asks),
                        "next": Take(_h._vp_auction, ("vp_auction",)), "gift": _GIFT},
                       prompt=lambda g: [Say("dt.trade.prompt")], waits=lambda g: g.active,
                       headline=views.anyone),
        "vp_auction": Round({"submit": Take(_h._vp_bid, (), _h._vp_bid_refusal, asks=_h._vp_bid_asks),
                             "next": Take(_h._close_vp_auction, ("over", "role_auction")), "gift": _GIFT},
                            prompt=views.vp_prompt, waits=lambda g: g.active, headline=views.anyone,
                            auction="vp", view=views.vp_view),
        "over": Round({}, prompt=lambda g: [Say("dt.game_over", {"players": list(g.state.exited)})], final=True),
    }
