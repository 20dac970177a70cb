"""The read side that says when it changed (no web framework imported here:
the wiring makes one before it knows whether the pages will run)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from companion.core.messages import ReadSide


class WatchedReadSide(ReadSide):
    """The loop's read side, telling listeners (the web) each time the loop
    replaced it, so a page hears of a change at once rather than by polling.
    A listener runs on the loop's thread: it must only hand over, never wait."""

    def __init__(self) -> None:
        super().__init__()
        self.listeners: list[Callable[[], None]] = []
        self.watching = lambda: ()  # no seat's page is rendered until the web server watches it

    def update(self, public: dict[str, Any], private: Mapping[str, dict[str, Any]]) -> None:
        super().update(public, private)
        for listener in list(self.listeners):
            listener()
