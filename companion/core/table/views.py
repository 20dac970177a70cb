"""The table's read side: everything anyone may see now (the public view and
its headline, by night the night screen), a seated player's own page, and
what is legal, derived from the phase table as the games' from theirs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from companion.core.engine import Legal, Take
from companion.core.events import (
    Input,
    Press,
    Refusal,
    Tap,
)
from companion.core.table.seats import TableSeats
from companion.core.table.state import (
    CONFIRM,
    GATHERING,
    IDLE,
    NIGHT_HEADLINE,
    PAIRING,
)


class TableViews(TableSeats):
    """The read side: the public view, the headline, a seat's page, what is legal."""

    def public_view(self, due: Mapping[str, float] | None = None) -> dict[str, Any]:
        """Everything anyone may see now, JSON-ready (the public page).
        ``due``: the wall-clock time each armed timer fires (the runtime's; the
        table keeps no clock), for the headline's deadline."""
        st = self.state
        if self.eyes_closed:
            return self._night_view()
        view: dict[str, Any] = {
            "phase": st.phase, "lang": st.lang, "game": st.game, "rules": list(st.rules),
            "seats": self._seats_view(),
            "evening": st.evening,
            "tonight": self.tonight(),
            "confirm": st.confirm,
        }
        if self.engine is not None:
            view["play"] = self.engine.public_view()
        if self.result is not None and st.phase == IDLE:  # between games: not beside the next one's gathering
            view["result"] = self.result
        view["headline"] = self.headline(due)
        return view

    def _order(self) -> list[str]:
        """Tonight's seats (ids) in the order they first finished a game: the same before
        and after a restart (a checkpoint older than the order: its ids sorted, after)."""
        known = self.state.standing_order
        rest = sorted({i for totals in self.state.standings.values() for i in totals} - set(known))
        return [*known, *rest]

    def tonight(self) -> dict[str, dict[str, int]]:
        """Each game's totals tonight (name → total), game by game as first played, the seats in ``_order``."""
        order = self._order()
        return {game: {self.name_of(i): totals[i] for i in order if i in totals}
                for game, totals in self.state.standings.items()}

    def evening_ranking(self) -> list[tuple[str, int]]:
        """The evening's totals (every game's summed), highest first; a tie in ``_order``."""
        summed = {i: sum(t.get(i, 0) for t in self.state.standings.values()) for i in self._order()}
        return sorted(((self.name_of(i), n) for i, n in summed.items()), key=lambda kv: -kv[1])

    def _seats_view(self) -> list[dict[str, Any]]:
        """The seats as every page shows them: id, engine name, whether paired,
        and ``called``, the display name its player chose (public: chosen to be shown)."""
        st = self.state
        return [{"id": i, "name": self.name_of(i), "paired": i in st.paired,
                 **({"called": st.called[i]} if i in st.called else {})} for i in st.seats]

    def _night_view(self) -> dict[str, Any]:
        """By night (One Night's, eyes closed) the same for any deal and any
        tap: the seats, the language, the evening's totals before the night,
        and the night's headline — the step's name and nothing else."""
        st = self.state
        step = self.engine.state.step if self.engine is not None else None
        return {"phase": st.phase, "lang": st.lang, "game": st.game, "rules": list(st.rules),
                "seats": self._seats_view(),
                "evening": st.evening,
                "tonight": self.tonight(),
                "confirm": None, "play": {"step": step, "whose_turn": []}, "headline": {**NIGHT_HEADLINE, "step": step}}

    def headline(self, due: Mapping[str, float] | None = None) -> dict[str, Any]:
        """What the table waits for now (the pages' headline, docs/reference/pages.md): the
        step, whom (seat ids) or anyone, a count, the countdown's wall-clock
        deadline; by night the night screen's, the same for any deal."""
        st, engine = self.state, self.engine
        if self.eyes_closed:
            return {**NIGHT_HEADLINE, "step": engine.state.step if engine is not None else None}
        head: dict[str, Any] = {"step": st.phase, "waiting_for": [], "anyone": True, "count": None,
                                "deadline": None, "night": False}
        if st.confirm is not None:  # a long press of back waits for next or back: anyone's (the view's ``confirm``)
            return {**head, "step": engine.state.step if engine is not None else st.phase}
        if st.phase == PAIRING:
            unpaired = [i for i in st.seats if i not in st.paired]
            return {**head, "waiting_for": unpaired,
                    "count": {"done": len(st.seats) - len(unpaired), "of": len(st.seats), "what": "paired"}}
        if engine is None:
            return head
        game = engine.headline()
        deadline = None
        if game.get("timer") is not None and due is not None:
            name, left = game["timer"]
            if name in due:
                deadline = float(due[name]) + float(left)
        seats = [i for name in game.get("waiting_for", []) if (i := self.id_of(name)) is not None]
        return {**head, "step": engine.state.step, "waiting_for": seats, "anyone": bool(game.get("anyone")),
                "count": game.get("count"), "deadline": deadline}

    def may_press(self, player_id: str) -> bool:
        """May a seat's page press next or back now?  Where the table waits for
        that seat or for anyone; never by night (the panel's buttons are the table's)."""
        head = self.headline()
        return not head["night"] and (head["anyone"] or player_id in head["waiting_for"])

    def public_label(self, inp: Input) -> str:
        """How an accepted ``inp`` is named in public (the engine may hide a secret)."""
        return self.engine.public_label(inp) if self.engine is not None else inp.label

    def private_view(self, player_id: str) -> dict[str, Any]:
        """What the player seated as ``player_id`` alone may see now."""
        name = self._engine_name(player_id)
        if self.engine is None or name is None:
            return {}
        return self.engine.private_view(name)

    def page(self, player_id: str) -> list[tuple[str, dict[str, Any]]]:
        """The player's page as lines (keys and params), ``private_view`` labelled."""
        name = self._engine_name(player_id)
        if self.engine is None or name is None:
            return []
        return self.engine.page(name)

    def board(self) -> list[tuple[str, dict[str, Any]]]:
        """The game's public lines (keys and params), ``public_view`` labelled;
        before the start, the cards tapped so far (a deck being built)."""
        if self.engine is not None:
            return self.engine.board()
        st, game = self.state, self.state.game or ""
        if st.phase == GATHERING and st.cards and game in self.games:
            options = dict(self.settings["options"]).get(game, {})
            return self.games[game].setup_board(st.rules, options, st.cards)
        return []

    def legal(self, player_id: str | None = None) -> Legal:
        """What the table (``None``) or one seated player may do now: the
        game's ``legal`` while it plays, else derived from ``PHASES`` — the
        buttons the phase takes whose guard lets them pass (``repeat``, the
        loop's, always), and the tap families it takes (``player/*``: the
        table's cards are open families, a config may add players)."""
        engine = self.engine
        if engine is not None and self.state.confirm is None:
            if player_id is None:  # the game's, and what the table takes around it
                legal = engine.legal(None)
                back = ("back",) if "back" not in legal.buttons and self._unstarts() else ()
                lang = () if self.eyes_closed else ("lang/*",)
                return replace(legal, buttons=legal.buttons + back, taps=legal.taps + lang)
            name = self._engine_name(player_id)
            return engine.legal(name) if name is not None else Legal()
        if player_id is not None:
            return Legal()
        phase = self._phase
        takes = self.PHASES[phase].takes
        buttons = tuple(b for b in ("next", "back") if b in takes and self._passes(takes[b], Press(b)))
        buttons += ("repeat",) if phase != CONFIRM else ()
        families = {"player": ("player/*",), "rules": ("rules/*",), "game": tuple(f"game/{g}" for g in self.games),
                    "lang": ("lang/*",)}
        if phase == GATHERING and self.games[self.state.game or ""].setup_cards:  # a deck's cards
            cls = self.games[self.state.game or ""]
            families["tap"] = tuple(c for c in cls.components if self._passes(takes["tap"], Tap(c)))
        return Legal(buttons=buttons, taps=tuple(t for kind, ids in families.items() if kind in takes for t in ids))

    def _passes(self, take: Take, value: Any) -> bool:
        try:
            return take.guard is None or take.guard(self, value) is None
        except Refusal:
            return False
