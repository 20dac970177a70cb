"""The pairing gate: a game that needs every player's page waits, seated and
counted, until the last phone is paired; then the game begins (``_begin``)."""

from __future__ import annotations

from companion.core import display_names
from companion.core.engine import Setup
from companion.core.events import (
    Output,
    Refusal,
    Report,
    Say,
)
from companion.core.steps import Goto
from companion.core.table.state import (
    PAGES_OFF,
    PAIRING,
    PLAYING,
    TableState,
)
from companion.core.table.views import TableViews


class TablePairing(TableViews):
    """The pairing gate and the start of a game."""

    def _pairing_prompt(self) -> list[Output]:
        """Who still has to pair, and what the game has the table set out meanwhile."""
        game = self.state.game or ""
        cls = self.games[game]
        opts = dict(self.settings["options"]).get(game, {})
        return [*cls.pairing_lines(self.players, self.state.rules, opts),
                Say("pairing.needed", {"game": f"game/{game}", "players": self.unpaired()})]

    def _begin(self, back_to: TableState) -> Goto:
        """The game begins: it plays once the driver has moved the phase."""
        st = self.state
        game = st.game or ""
        cls = self.games[game]
        opts = dict(self.settings["options"]).get(game, {})
        players = self.players
        st.games_started += 1
        self.engine = cls(Setup(tuple(players), tuple(st.rules), opts, tuple(st.cards)))
        st.last = {"game": game, "rules": list(st.rules), "seats": list(st.seats), "cards": list(st.cards)}
        self._undo = [back_to]
        st.result = None  # the next game has started: the last one's result is in the history
        st.record_names = display_names.record_names(st.seats, {i: self.name_of(i) for i in st.seats}, st.called)
        started = Report("game_started", {"game": game, "rules": list(st.rules), "players": players})
        return Goto(PLAYING, [started, *self.engine.start()])

    def _check_pages(self, game: str) -> None:
        if self.games[game].needs_pages and self.pages == PAGES_OFF:
            raise self._no_pages(game)

    @staticmethod
    def _no_pages(game: str) -> Refusal:
        return Refusal("pairing.refuse.no_pages", f"{game} needs the players' phones: turn the web pages on",
                       game=f"game/{game}")

    def _paired(self, seat: str) -> list[Output] | Goto:
        st = self.state
        if not seat:
            raise Refusal("refuse.not_now", "a pairing names its seat")
        if seat not in st.paired:
            st.paired.append(seat)
        out: list[Output] = [Say("pairing.done", {"player": self.name_of(seat)})]
        if st.phase != PAIRING:
            return out
        if missing := self.unpaired():
            return [*out, Say("pairing.missing", {"players": missing})]
        back_to = self._undo.pop()
        return self._begin(back_to).after(*out, Say("pairing.all_in"))
