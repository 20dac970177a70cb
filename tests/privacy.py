"""The private facts of a table in play, for the privacy walks that check a
public channel holds none of them (the pages: test_web_privacy.py; the
broker: test_mqtt_link.py).

A public answer is read as what it is, never as text spelled one way: a JSON
body (or an SSE stream's ``data:`` lines) is parsed and every key of every
mapping in it is compared, with its value, to each seat's private page; the
server's compact JSON (``"gems":3``) and a re-dumped one (``"gems": 3``) are
the same answer.  A body that is no JSON (the HTML, the scripts, the QR code)
is searched for either spelling."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from companion.core.events import TABLE
from companion.core.messages import Event

# What a private page holds that is public where the public side puts it
# (rules, *who may know what*), though a seat's page may say the same
# ``key: value``: everything under these keys of a public answer …
PUBLIC_UNDER = (
    "results",  # a Demagogos round's results: each role holder's role, outcome and VP, revealed
    "result",   # a finished game's result: what its end reveals (the Girl's card, the roles, the gems bonus said)
)
# … and an opened box (Demagogos, ``public_view()["opened"]`` and its ``dt_box``
# event): its finder and the gems found in it are everyone's ("gems": 0 there is no purse).
OPENED_BOX = frozenset({"box", "content", "player"})
# No fact: ``night``, by night every page, public and private, says the same
# (DESIGN.md, *Web*); ``legal``, the page's forms, the same for every seat in a
# step; ``vp``, Demagogos' VP, on the public board beside the page's own
# (``public_view()["vp"]``); ``page``, checked line by line, as text (below).
NOT_FACTS = ("legal", "night", "vp", "page")


def _pair(key: str, value: Any) -> str:
    """One spelling of ``key: value``, whatever spacing or key order the JSON had."""
    return json.dumps([key, value], ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class Secrets:
    """What no public message may hold, gathered as the table plays
    (``gather`` after each step: a seat's page is gone once the game ends):
    the text of every private line told (a ``tell``), each seat's private
    page value by value (``key: value``), and the page's lines as it shows
    them."""

    def __init__(self) -> None:
        self.texts: set[str] = set()
        self.pairs: dict[str, tuple[str, Any]] = {}

    def gather(self, loop: Any, heard: Iterable[Event]) -> None:
        self.texts.update(str(e.fields["text"]) for e in heard
                          if e.audience != TABLE and e.fields.get("event") == "tell")
        for seat in loop.table.state.seats:
            page = loop.pages.render(seat)  # every seat's, as it would be rendered: the read side holds the watched
            self.texts.update(str(line["text"]) for line in page.get("page", []))
            for key, value in page.items():
                if key not in NOT_FACTS and value not in (None, {}, []):  # an empty value tells nothing
                    self.pairs[_pair(key, value)] = (key, value)

    def leaks(self, body: Any) -> list[str]:
        """The private facts ``body`` holds: a response's text (JSON, an SSE
        stream, a page with JSON data blocks in it) or a JSON value already parsed."""
        if isinstance(body, str):
            values, rest = _json_in(body)
            text = body
        else:
            values, rest, text = [body], "", json.dumps(body, ensure_ascii=False)
        found = [t for t in self.texts if t and t in text]
        found += [_pair(k, v) for value in values for k, v in _entries(value) if _pair(k, v) in self.pairs]
        found += [spelt for k, v in self.pairs.values() for spelt in _spellings(k, v) if spelt in rest]
        return sorted(set(found))


DATA_BLOCK = re.compile(r'<script type="application/json"[^>]*>(.*?)</script>', re.DOTALL)


def _json_in(body: str) -> tuple[list[Any], str]:
    """The JSON a response holds (its body, each ``data:`` of an SSE stream, a
    page's data blocks), and what is left of it that is no JSON."""
    try:
        return [json.loads(body)], ""
    except ValueError:
        pass
    data = [line[5:].strip() for line in body.splitlines() if line.startswith("data:")]
    try:
        if data:
            return [json.loads(d) for d in data], ""
    except ValueError:
        pass
    values = []
    for block in DATA_BLOCK.findall(body):
        try:
            values.append(json.loads(block))
        except ValueError:
            continue
        body = body.replace(block, "")
    return values, body


def _spellings(key: str, value: Any) -> list[str]:
    """``"key": value`` as JSON text may spell it: compact or spaced, escaped or not."""
    return [json.dumps({key: value}, ensure_ascii=a, separators=s)[1:-1]
            for a in (True, False) for s in ((",", ":"), (", ", ": "))]


def _entries(node: Any) -> Iterator[tuple[str, Any]]:
    """Every key and its value in every mapping of a JSON value, but an opened
    box's and those under a public key (``PUBLIC_UNDER``)."""
    if isinstance(node, Mapping):
        if not OPENED_BOX <= node.keys():
            yield from node.items()
        for k, v in node.items():
            if k not in PUBLIC_UNDER:
                yield from _entries(v)
    elif isinstance(node, list):
        for v in node:
            yield from _entries(v)
