"""While a game plays: every input goes to its engine after the checks every
game shares; back before its first input unstarts it; its end makes the
play's record, the standings and the result view."""

from __future__ import annotations

from companion.core.engine import Engine
from companion.core.events import (
    Input,
    Output,
    Press,
    Refusal,
    Report,
    Say,
    Submit,
    Tap,
)
from companion.core.steps import Goto
from companion.core.table.result import result_view
from companion.core.table.seating import TableSeating
from companion.core.table.state import (
    GATHERING,
    IDLE,
    FinishedPlay,
)


class TablePlay(TableSeating):
    """While a game plays."""

    # playing: everything goes to the engine, after the checks every game shares
    def _to_engine(self, inp: Input) -> list[Output] | Goto:
        engine = self.engine
        if engine is None:
            if isinstance(inp, Submit):
                raise Refusal("refuse.no_game", "no game is being played", player=inp.player)
            raise Refusal("refuse.not_now", f"{inp.label} is not expected now")
        if isinstance(inp, Submit):
            if (name := self._engine_name(inp.player)) is None:
                raise Refusal("refuse.not_seated", f"{inp.player} is not playing this game")
            inp = Submit(name, inp.field, inp.value)
        if isinstance(inp, Tap):
            kind = inp.identity.split("/", 1)[0]
            if kind == "player":
                seat, player = inp.identity.split("/", 1)[1], self.player_name(inp.identity)
                if self.seats_named(player) not in ([], [seat]):  # the engine would take it for another seat
                    raise Refusal("refuse.not_now", f"two seats answer to {player}: give each a name of its own")
                inp = Tap(f"player/{player}")
            elif kind == "rules":
                raise Refusal("refuse.rules_in_game", "rule cards go before the game starts")
            elif not inp.identity.startswith(engine.tag_prefixes):
                owner = next((g for g, c in self.games.items() if inp.identity.startswith(c.tag_prefixes)), None)
                raise Refusal("refuse.other_game", f"{inp.identity} belongs to another game",
                              tile=inp.identity, game=f"game/{owner}" if owner else "")
        if isinstance(inp, Press) and inp.button == "back" and self._unstarts():
            return self._unstart()
        outputs = engine.handle(inp)
        if engine.finished:
            return Goto(IDLE, outputs + self._finish(engine, outputs))
        return outputs

    def _unstarts(self) -> bool:
        """Would ``back`` leave the game for the seating (it has taken no input yet)?"""
        engine = self.engine
        return engine is not None and engine.at_start and not engine.eyes_closed and bool(self._undo)

    def _unstart(self, _: Input | None = None) -> list[Output]:
        """``back`` before the game has taken any input: the table returns to
        where it was before ``next`` (e.g. a player had not tapped yet)."""
        game = self.state.game
        lang, paired, called = self.state.lang, self.state.paired, self.state.called  # not part of the start
        self.state, self.engine = self._undo.pop(), None
        self.state.lang, self.state.paired, self.state.called = lang, paired, called
        self._undo.clear()
        out: list[Output] = [Report("game_unstarted", {"game": game})]
        if self.state.phase == GATHERING:
            return [*out, Say("table.unstarted", {"game": f"game/{game}", "players": self.players})]
        return [*out, Say("table.again")]

    def _finish(self, engine: Engine, said: list[Output]) -> list[Output]:
        st = self.state
        result = engine.result()
        game = st.game or ""
        names = self.players
        shown = {name: st.record_names.get(seat, name) for seat, name in zip(st.seats, names, strict=True)}
        self.finished = FinishedPlay(game, tuple(st.rules), tuple(names), tuple(st.seats), dict(result.totals),
                                     tuple(result.winners), dict(result.roles), dict(result.teams),
                                     dict(result.places), {n: s for n, s in shown.items() if s != n})
        st.result = result_view(game, engine, self.finished, said)
        standing = st.standings.setdefault(game, {})
        for seat, name in zip(st.seats, names, strict=True):
            standing[seat] = standing.get(seat, 0) + result.totals.get(name, 0)
            if seat not in st.standing_order:
                st.standing_order.append(seat)
        tonight = self.tonight()[game]
        self._to_idle()
        # said: the evening's totals (every game tonight), as the pages' "Tonight" shows them
        return [Report("session_scores", {"game": game, "totals": tonight}),  # the contract's name for it
                Say("table.standings", {"scores": self.evening_ranking()}), Say("table.again")]

    def _to_idle(self) -> None:
        st = self.state
        self.engine = None
        self._undo.clear()  # the start of the game is out of reach
        st.game, st.rules, st.seats, st.cards = None, [], [], []  # the driver moves the phase (``Goto(IDLE)``)
        st.record_names = {}
        st.apply_pending()
