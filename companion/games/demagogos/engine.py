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
and a seat's own ``view``; the sealed bids live in ``self.sealed`` while
their auction is open, and in the state (never shown) after.

The game is composed of its state (``state``), its steps (the table below;
the handlers are the functions of ``steps`` — the auctions and the trade —
and ``cave`` — the draws, the boxes, the round's end) and one read function
(``views.view``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from companion.core.engine import Engine, Outcome, Result, Setup, Take
from companion.core.events import (
    Drawn,
    Input,
    Output,
    Refusal,
    Say,
    Submit,
    Tap,
)
from companion.games.demagogos import cave, steps, views
from companion.games.demagogos import rules as R
from companion.games.demagogos.show import SHOWS
from companion.games.demagogos.state import (
    GAME,
    TRADE_FIELDS,
    DtState,
    Round,
    active,
    bidding,
    bonus_draws,
    cave_draws,
    draws,
    explorer,
    role_draws,
    sealed_auction,
)


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

    # ---------------------------------------------------------- lifecycle
    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        st = self.state = DtState()
        st.gems = {p: R.START_GEMS for p in self.players}
        st.vp = {p: 0 for p in self.players}
        st.vp_start = dict(st.vp)
        st.gifts = {p: [] for p in self.players}

    def result(self) -> Result:
        exited = tuple(self.state.exited)
        return Result(dict(self.state.vp), exited, places={p: n for n, p in enumerate(exited, 1)})

    def undo_scope(self, state: Any) -> Any:
        """A box opened in front of the table is final; passing after a treasure
        (``next``) may be taken back until the next box is tapped."""
        return (state.step, state.round, len(state.opened))

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
            steps.give(snapshot, inp.player, str(inp.value["to"]), int(inp.value["gems"]))
        return out

    def _not_taken(self, kind: str, inp: Any) -> Refusal:
        """Refused by what it is: a submit, a draw, a box, a player card, ``next``."""
        if isinstance(inp, Submit):
            return Refusal("dt.refuse.submit_not_now", f"{inp.field} is not taken now", field=inp.field)
        if isinstance(inp, Drawn):
            return Refusal("refuse.bad_draw", f"the draw {inp.name} is not expected now")
        if isinstance(inp, Tap) and inp.identity.startswith("dt/box/"):
            return Refusal("dt.refuse.box_not_now", "no box may be opened now", box=steps.box_of(inp))
        if isinstance(inp, Tap) and inp.identity.startswith("player/"):
            return Refusal("dt.refuse.player_card", "player cards are not needed now: use your page",
                           player=inp.identity.removeprefix("player/"))
        if isinstance(inp, Tap):
            return Refusal("dt.refuse.not_now", f"{inp.identity} is not expected now")
        if kind == "next" and (auction := sealed_auction(self)) is not None:
            waiting = [p for p in bidding(self) if p not in self.sealed.get(auction, {})]
            return Refusal("dt.refuse.bids_missing", "every bid must be in first", players=waiting)
        if kind == "next":
            return Refusal("dt.refuse.not_now", "next does nothing now")
        return Refusal("dt.refuse.not_now", f"{inp.label} is not expected now")

    # ------------------------------------------------------------ prompts
    def resume(self) -> list[Output]:
        return [Say("dt.resume", {"round": self.state.round}), *self.prompt(), *draws(self)]

    # ---------------------------------------------------------- read side
    def public_label(self, inp: Input) -> str:
        """A gift or an exchange is the giver's and receiver's business: its
        acceptance is not public (an exchange's VP is announced)."""
        if isinstance(inp, Submit) and inp.field in TRADE_FIELDS:
            return ""
        return inp.label

    view = views.view  # the one read function: what the table or a seat may see

    # ------------------------------------------------------------ the steps
    # step -> {input kind -> Take(handler, where it leads, its guard, a
    # player's fields)}, and what the step is besides (``Round``): its prompt,
    # whom it waits for, its headline, its auction, draws and view.  What is
    # not taken is refused by what it is (``_not_taken``), the same in every
    # step.  [ruling] a gift (kind ``gift``, see ``kind_of``) is taken at any
    # moment of a round.  Trading and the open VP auction are anyone's to close:
    # everyone still in may act (who can afford what is private); nobody is
    # waited for while the dealer draws.
    _GIFT = Take(steps.gift, (), steps.gift_refusal, asks=steps.gift_asks)

    STEPS: ClassVar[Mapping[str, Round]] = {
        "role_auction": Round({"submit": Take(steps.sealed_bid, ("role_auction", "rolling"), steps.bid_refusal, asks=steps.bid_asks),
                               "gift": _GIFT},
                              prompt=views.sealed_prompt, waits=views.sealed_waits, headline=views.sealed_headline,
                              auction="role", view=views.sealed_view),
        "rolling": Round({"draw": Take(cave.die_drawn, ("rolling", "turn_auction"), cave.draw_refusal), "gift": _GIFT},
                         draws=role_draws),
        "turn_auction": Round({"submit": Take(steps.sealed_bid, ("turn_auction", "cave_draw"), steps.bid_refusal,
                                              asks=steps.bid_asks), "gift": _GIFT},
                              prompt=views.sealed_prompt, waits=views.sealed_waits, headline=views.sealed_headline,
                              auction="turn", view=views.sealed_view),
        "cave_draw": Round({"draw": Take(cave.cave_drawn, ("cave_draw", "cave"), cave.draw_refusal), "gift": _GIFT},
                           draws=cave_draws),
        "cave": Round({"tap": Take(cave.open_box, ("cave", "bonus", "trade", "over"), cave.box_refusal),
                       "next": Take(cave.pass_turn, (), cave.open_first), "gift": _GIFT},
                      prompt=views.cave_prompt, waits=lambda g: [explorer(g)], exploring=True,
                      view=lambda g: {"turn": explorer(g)}),
        "bonus": Round({"draw": Take(cave.treasure, ("cave", "trade", "over"), cave.draw_refusal), "gift": _GIFT},
                       draws=bonus_draws, exploring=True),
        "trade": Round({"submit": Take(steps.exchange, ("trade", "over"), steps.exchange_refusal, asks=steps.exchange_asks),
                        "next": Take(cave.vp_auction, ("vp_auction",)), "gift": _GIFT},
                       prompt=lambda g: [Say("dt.trade.prompt")], waits=active,
                       headline=views.anyone),
        "vp_auction": Round({"submit": Take(steps.vp_bid, (), steps.vp_bid_refusal, asks=steps.vp_bid_asks),
                             "next": Take(cave.close_vp_auction, ("over", "role_auction")), "gift": _GIFT},
                            prompt=views.vp_prompt, waits=active, headline=views.anyone,
                            auction="vp", view=views.vp_view),
        "over": Round({}, prompt=lambda g: [Say("dt.game_over", {"players": list(g.state.exited)})], final=True),
    }
