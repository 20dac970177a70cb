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

from collections.abc import Callable, Mapping
from typing import Any

from companion.core.engine import Legal
from companion.core.messages import ReadSide
from companion.core.table import GATHERING, IDLE, PAGES_OFF, Table
from companion.runtime.outputs import Narrate


class PageProjection:
    def __init__(self, table: Table, narrate: Narrate, read_side: ReadSide,
                 ask: Callable[[Callable[[], Any]], None] | None = None,
                 due: Callable[[], Mapping[str, float]] | None = None) -> None:
        """``ask``: runs a callable on the loop's thread (the inbox's ``put``):
        how a watcher arriving from the web's thread gets its page rendered.
        ``due``: each armed timer's wall-clock time (the loop's), for the
        headline's deadline: a phone counts down to it with its own clock."""
        self.table, self.narrate, self.read_side = table, narrate, read_side
        self.due = due
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
            board = [] if table.eyes_closed else [self.narrate(key, params, table.lang) for key, params in table.board()]
            view = table.public_view(self.due() if self.due is not None else None)
            self._public = (version, {**view, "headline_text": self.headline_text(view["headline"], view["confirm"]),
                                      "legal": legal_json(Legal() if table.eyes_closed else table.legal(None)),
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
        if table.eyes_closed:  # the night screen: every seat's page the same, whatever the deal
            return {"night": True, "legal": legal_json(Legal(), lambda key: key), "page": []}
        page = [self.narrate(key, params, lang) for key, params in table.page(seat)]
        legal = legal_json(table.legal(seat), lambda key: self.narrate(key, {}, lang).text)
        return {**table.private_view(seat), "legal": legal,
                "page": [{"key": line.key, "text": line.text} for line in page]}


    def headline_text(self, head: Mapping[str, Any], confirm: str | None = None) -> str:
        """The headline as the page says it, in the table's language: whom the
        table waits for (or the night, or anyone) and the count.  Table lines
        (``headline.*``): the step's own name is the game's (``/api/games``)."""
        table, lang = self.table, self.table.lang
        if head["night"]:
            keys: list[tuple[str, dict[str, Any]]] = [("headline.night", {})]
        elif confirm is not None:  # a long press of back waits for its answer
            keys = [(f"headline.confirm_{confirm}", {})]
        elif head["step"] in (IDLE, GATHERING):
            keys = [(f"headline.{head['step']}", {})]
        elif head["waiting_for"]:
            keys = [("headline.waiting", {"players": [table.name_of(i) for i in head["waiting_for"]]})]
        else:  # anyone's: what to do now, short (``now.<game>.<step>``: one line of the TV's headline)
            keys = [(self.now_key(head["step"]) or "headline.anyone", {})]
        if head["count"]:
            count = head["count"]
            keys.append((f"headline.count.{count['what']}", {"done": count["done"], "of": count["of"]}))
        return self.narrate("fmt.sentence_sep", {}, lang).text.join(self.narrate(key, params, lang).text
                                                                    for key, params in keys)


    def now_key(self, step: str) -> str | None:
        """The game's line for what to do now at ``step`` where anyone may act, if it has one
        (a narrator's lines; a bare narrate function has none to look in)."""
        lines, engine = getattr(self.narrate, "lines", None), self.table.engine
        key = f"now.{engine.game}.{step}" if engine is not None else ""
        return key if lines is not None and key in lines(self.table.lang) else None


def legal_json(legal: Any, label: Callable[[str], str] | None = None) -> dict[str, Any]:
    """``label``: a field's label key → its text, for a page."""
    return {"buttons": list(legal.buttons), "taps": list(legal.taps),
            "submits": {name: {"label": ask.label, "low": ask.low, "high": ask.high, "choices": list(ask.choices),
                               **({"kind": ask.kind} if ask.kind else {}),
                               **({"text": label(ask.label)} if label else {})}
                        for name, ask in legal.submits.items()}}
