"""The game log the pages show (like Board Game Arena's): the lines the table
said aloud to everyone during the game being played, newest first.

Only the table's public ``say`` events are ever added (``WebServer._dispatch``
hands over nothing else): a line told to one seat stays on that seat's page.
A new game starts an empty log but for its own first lines: those said since
the table took the input that began it (its ``accepted`` comes before its
lines, and its snapshot after them); earlier games live in the history.  A line is kept with its key and parameters, so a table that changes
language mid-game shows the whole log in its language now."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

KEEP = 200  # lines kept: a long game's whole log; a page scrolls it


@dataclass(frozen=True)
class Logged:
    key: str | None
    text: str
    lang: str | None
    params: Mapping[str, Any]
    read: dict[str, str] = field(default_factory=dict)  # its text in another language, once rendered


class GameLog:
    def __init__(self) -> None:
        self._lines: deque[Logged] = deque(maxlen=KEEP)
        self._since_input = 0  # lines added since the table last took an input

    def add(self, key: str | None, text: str, lang: str | None = None, params: Mapping[str, Any] | None = None) -> None:
        self._lines.append(Logged(key, text, lang, dict(params or {})))
        self._since_input += 1

    def taken(self) -> None:
        """The table took an input: the lines that follow are its."""
        self._since_input = 0

    def new_game(self) -> None:
        """A snapshot shows another game than the last one did: only the lines of
        the input that began it stay (a tap's "you chose…", not the idle table's "Ready")."""
        kept = list(self._lines)[len(self._lines) - self._since_input:] if self._since_input else []
        self._lines = deque(kept, maxlen=KEEP)

    def lines(self, lang: str, render: Callable[[str, Mapping[str, Any], str], str] | None = None) -> list[dict[str, Any]]:
        """Newest first, each in ``lang`` (rendered again where it was said in another)."""
        out = []
        for line in reversed(self._lines):
            text = line.text
            if line.lang not in (None, lang) and line.key and render is not None:
                if lang not in line.read:
                    line.read[lang] = render(line.key, line.params, lang)
                text = line.read[lang]
            out.append({"key": line.key, "text": text})
        return out

    def __len__(self) -> int:
        return len(self._lines)
