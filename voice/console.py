"""Voice backends that print instead of speaking (simulation) or do nothing."""

from __future__ import annotations

import sys
from typing import TextIO

from voice.base import Line


class ConsoleVoice:
    def __init__(self, out: TextIO = sys.stderr) -> None:
        self.out = out

    def speak(self, line: Line) -> None:
        print(f"  🔊 {line.text}", file=self.out, flush=True)

    def ambience(self, sound: str, on: bool) -> None:
        print(f"  ♪ {sound} {'starts' if on else 'stops'}", file=self.out, flush=True)

    def close(self) -> None:
        pass


class SilentVoice:
    def speak(self, line: Line) -> None:
        pass

    def ambience(self, sound: str, on: bool) -> None:
        pass

    def close(self) -> None:
        pass
