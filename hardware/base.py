"""Interfaces between the hardware backends and the table loop.

A reader runs on its own thread and calls ``emit`` with ``TagSeen`` (once per
presence of a tag) and ``ReaderStatus`` (when it comes or goes).  ``emit`` is
thread-safe (it puts on the loop's queue); no game logic runs on a reader
thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from companion.core.events import ReaderStatus, TagSeen

__all__ = ["Emit", "Reader", "ReaderEvent", "ReaderStatus", "TagSeen"]


ReaderEvent = TagSeen | ReaderStatus
Emit = Callable[[ReaderEvent], None]


class Reader(Protocol):
    def start(self, emit: Emit) -> None:
        """Begin reporting; returns at once (work happens on a thread)."""

    def close(self) -> None:
        """Stop reporting, join the thread, let go of the device; idempotent."""
