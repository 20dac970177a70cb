"""What the table is told about itself rather than about the game: the
reader coming and going, a part's line held back by night (the journal's
mirror lost), and at start what the journal's checks found (a recovery).
Each returns ``Out`` values for ``Outputs.send``; none calls the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from companion.core.events import LOG, ReaderStatus, Say
from companion.core.messages import Command
from companion.runtime.outputs import Emit, Out


class ReaderNotices:
    """Each change of the reader's state is logged and lit once, and said when
    it differs from what the table last heard — but never while eyes are
    closed: the night must sound the same whatever happens; a change then is
    told when the night is over (``due``, after every input)."""

    def __init__(self) -> None:
        self.connected: bool | None = None
        self._announced: bool | None = None

    def status(self, status: ReaderStatus, quiet: bool) -> list[Out]:
        if status.connected == self.connected:
            return []  # report each change once
        if self.connected is None and status.connected:
            self._announced = True  # present from the start: nothing worth saying
        self.connected = status.connected
        return [Emit("reader", fields={"state": "connected" if status.connected else "disconnected",
                                       "detail": status.detail}),
                Command("led", {"led": "ready", "on": status.connected}), *self.due(quiet)]

    def due(self, quiet: bool) -> list[Out]:
        if self.connected is None or quiet or self.connected == self._announced:
            return []
        key = "reader.back" if self.connected else "reader.missing" if self._announced is None else "reader.lost"
        self._announced = self.connected
        return [Say(key)]


class HeldBack:
    """The lines the parts hold back while eyes are closed, each told once
    the night is over: ``due(quiet)`` after every input and at start.  A
    part adds its own ``due`` (the reader's notices are there from the
    start; the wiring adds the journal's mirror's)."""

    def __init__(self, *parts: Callable[[bool], Sequence[Out]]) -> None:
        self.parts = list(parts)

    def add(self, due: Callable[[bool], Sequence[Out]]) -> None:
        self.parts.append(due)

    def due(self, quiet: bool) -> list[Out]:
        return [out for due in self.parts for out in due(quiet)]


def journal_notices(notices: Iterable[tuple[Say | None, str]]) -> list[Out]:
    """What start() tells about the journal: each message in the log, then
    the lines for the table (a recovery is said, never only logged)."""
    notices = list(notices)
    return [*(Emit("error", LOG, {"message": message}) for _, message in notices),
            *(say for say, _ in notices if say is not None)]
