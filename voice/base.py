"""The interface every voice backend implements.

The table loop hands a backend fully rendered ``Line``s; it never waits for
speech to finish (a backend queues and plays on its own worker).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Line:
    key: str  # stable id, e.g. "onw.seer.wake"
    text: str  # what a person reads
    lang: str  # "en" | "ja"
    reading: str  # what a TTS engine should read (kana-only for Japanese)
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_fixed(self) -> bool:
        """A line with no parameters is the same every time: cacheable as is."""
        return not self.params


class Voice(Protocol):
    def speak(self, line: Line) -> None:
        """Queue a line; returns at once."""

    def ambience(self, sound: str, on: bool) -> None:
        """Start or stop a looping background sound (the night's tapping)."""

    def close(self) -> None:
        """Finish or drop what is queued and release the device; idempotent."""


class RecordingVoice:
    """Keeps what it was asked to say; for tests and the event log."""

    def __init__(self) -> None:
        self.lines: list[Line] = []
        self.ambience_log: list[tuple[str, bool]] = []

    def speak(self, line: Line) -> None:
        self.lines.append(line)

    def ambience(self, sound: str, on: bool) -> None:
        self.ambience_log.append((sound, on))

    def close(self) -> None:
        pass
