"""Confirmations: a long press of back restarts the step (or abandons the
game) once next confirms it; back cancels.  The confirm phase's handlers,
functions of the table (phases.py names them); the driver puts the question
as the phase moves into it (``question``) and drops it as it leaves."""

from __future__ import annotations

from companion.core.events import Input, Output, Press, Refusal, Report, Say
from companion.core.steps import Goto
from companion.core.table.play import playing_resume, to_idle
from companion.core.table.shape import TableShape
from companion.core.table.state import IDLE, PLAYING


def question(t: TableShape) -> str:
    """What a long press of back asks: to restart the step, if it has taken
    an input (that a restart would drop); else to abandon the game."""
    assert t.engine is not None
    return "step" if t.engine.can_undo else "game"


def ask(t: TableShape, _: Input) -> Goto:
    """Long-press back: the question is asked (the confirm phase's prompt)."""
    return Goto(prompt=True)


def prompt(t: TableShape) -> list[Output]:
    return [Say(f"table.confirm_{t.state.confirm}")]


def resume(t: TableShape) -> list[Output]:
    """The game, then the question that was waiting for its answer."""
    return [*playing_resume(t), *prompt(t)]


def refusal(t: TableShape, kind: str, _: Input) -> Refusal:
    return Refusal("refuse.confirm_pending", "press next to confirm or back to cancel")


def confirmed(t: TableShape, _: Press) -> Goto:
    assert t.engine is not None
    if t.state.confirm == "step":
        return Goto(PLAYING, [Say("table.step_restarted"), *t.engine.restart_step()])
    game = t.state.game
    to_idle(t)
    return Goto(IDLE, [Report("game_abandoned", {"game": game}), Say("table.abandoned")])


def cancelled(t: TableShape, _: Press) -> list[Output]:
    assert t.engine is not None
    return [Say("table.confirm_cancelled"), *t.engine.prompt()]
