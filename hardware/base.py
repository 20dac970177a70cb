"""Interfaces between the hardware backends and the table loop.

A reader is a source like every other (``companion.core.messages.Inbox``):
started with the loop's inbox, it submits ``TagSeen`` (once per presence of
a tag) and ``ReaderStatus`` (when it comes or goes) from its own thread;
``submit`` is thread-safe (it puts on the loop's queue) and no game logic
runs on a reader thread.  Inside a reader, its ``Supervisor`` hands a
connection's events on through an ``Emit``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from companion.core.events import ReaderStatus, TagSeen
from companion.core.messages import Inbox

__all__ = ["Emit", "Inbox", "Reader", "ReaderEvent", "ReaderStatus", "TagSeen"]


ReaderEvent = TagSeen | ReaderStatus
Emit = Callable[[ReaderEvent], None]


class Reader(Protocol):
    def start(self, inbox: Inbox) -> None:
        """Begin reporting into ``inbox``; returns at once (work happens on a thread)."""

    def close(self) -> None:
        """Stop reporting, join the thread, let go of the device; idempotent."""
