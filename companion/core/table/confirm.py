"""Confirmations: a long press of back restarts the step (or abandons the
game) once next confirms it; back cancels."""

from __future__ import annotations

from companion.core.events import (
    Input,
    Output,
    Press,
    Refusal,
    Report,
    Say,
)
from companion.core.steps import Goto
from companion.core.table.housekeeping import TableHousekeeping
from companion.core.table.state import IDLE, PLAYING


class TableConfirm(TableHousekeeping):
    """A long press of back, and its answer."""

    # long-press back: restart the step (or abandon the game) after a confirmation
    def _ask_confirm(self, _: Input | None = None) -> list[Output]:
        if self.eyes_closed:
            raise Refusal("refuse.quiet", "not during the night")
        if self.state.phase != PLAYING:
            raise Refusal("refuse.nothing_to_abandon", "no game to abandon")
        assert self.engine is not None
        self.state.confirm = "step" if self.engine.can_undo else "game"
        return [Say(f"table.confirm_{self.state.confirm}")]

    def _confirmed(self, _: Press) -> list[Output] | Goto:
        what, self.state.confirm = self.state.confirm, None
        assert self.engine is not None
        if what == "step":
            return [Say("table.step_restarted"), *self.engine.restart_step()]
        game = self.state.game
        self._to_idle()
        return Goto(IDLE, [Report("game_abandoned", {"game": game}), Say("table.abandoned")])

    def _cancelled(self, _: Press) -> list[Output]:
        self.state.confirm = None
        assert self.engine is not None
        return [Say("table.confirm_cancelled"), *self.engine.prompt()]
