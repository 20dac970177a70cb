"""The page projection: the table as the pages see it — the public board,
and the page of each seat whose page is read — put into the read side.

A seat's page is its private view and the same as lines in the table's
language, with its forms' labels: rendering all of them after every input
cost most of an input's time at ten seats, whether or not a phone was there.
So only the seats the read side says are watched are rendered
(``ReadSide.watched``: the web server's paired seats; a plain read side, as
in a simulation, watches every seat; with the pages off, none), and each page is cached by the table's
``version``, which the loop moves with every accepted input: a page newly
watched is rendered once, a refresh with nothing new renders nothing.
Runs on the loop's thread only; it never calls the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from companion.core.messages import ReadSide
from companion.core.table import PAGES_OFF, Table
from companion.runtime.outputs import Narrate


class PageProjection:
    def __init__(self, table: Table, narrate: Narrate, read_side: ReadSide,
                 ask: Callable[[Callable[[], Any]], None] | None = None) -> None:
        """``ask``: runs a callable on the loop's thread (the inbox's ``put``):
        how a watcher arriving from the web's thread gets its page rendered."""
        self.table, self.narrate, self.read_side = table, narrate, read_side
        self.version = 0  # the table's: moved by every accepted input (``changed``)
        self._public: tuple[int, dict[str, Any]] | None = None
        self._pages: dict[str, tuple[int, dict[str, Any]]] = {}
        self.renders = 0  # seats' pages rendered so far (what the tests count)
        if ask is not None:
            read_side.wanted = lambda: ask(self.refresh)

    def changed(self) -> None:
        self.version += 1

    def refresh(self) -> bool:
        """Bring the read side up to the table's version; True if it changed.
        With the pages off (the daemon serves none) nothing can read it: nothing is rendered."""
        table, version = self.table, self.version
        if table.pages == PAGES_OFF:
            return False
        fresh = self._public is None or self._public[0] != version
        if fresh:
            # the game's board, labelled in the table's language like a seat's page
            board = [self.narrate(key, params, table.lang) for key, params in table.board()]
            self._public = (version, {**table.public_view(), "legal": legal_json(table.legal(None)),
                                      "board": [{"key": line.key, "text": line.text} for line in board]})
        watched = self.read_side.watched()
        seats = [s for s in table.state.seats if watched is None or s in watched]
        pages: dict[str, tuple[int, dict[str, Any]]] = {}
        for seat in seats:
            cached = self._pages.get(seat)
            if cached is None or cached[0] != version:
                cached = (version, self.render(seat))
                fresh = True
            pages[seat] = cached
        fresh = fresh or pages.keys() != self._pages.keys()
        self._pages = pages
        if fresh:
            assert self._public is not None
            self.read_side.update(self._public[1], {seat: page for seat, (_, page) in pages.items()})
        return fresh

    def render(self, seat: str) -> dict[str, Any]:
        """A seat's page: its private view, and the same as lines in the
        table's language (``page``), with its forms' labels (``text``)."""
        self.renders += 1
        table, lang = self.table, self.table.lang
        page = [self.narrate(key, params, lang) for key, params in table.page(seat)]
        legal = legal_json(table.legal(seat), lambda key: self.narrate(key, {}, lang).text)
        return {**table.private_view(seat), "legal": legal,
                "page": [{"key": line.key, "text": line.text} for line in page]}


def legal_json(legal: Any, label: Callable[[str], str] | None = None) -> dict[str, Any]:
    """``label``: a field's label key → its text, for a page."""
    return {"buttons": list(legal.buttons), "taps": list(legal.taps),
            "submits": {name: {"label": ask.label, "low": ask.low, "high": ask.high, "choices": list(ask.choices),
                               **({"text": label(ask.label)} if label else {})}
                        for name, ask in legal.submits.items()}}
