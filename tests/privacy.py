"""The private facts of a table in play, for the privacy walks that check a
public channel holds none of them (the pages: test_web_privacy.py; the
broker: test_mqtt_link.py)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from companion.core.events import TABLE
from companion.core.messages import Event


def private_facts(loop: Any, heard: Iterable[Event]) -> list[str]:
    """What no public message may hold: the text of every private line told
    (a ``tell``), and each seat's private page, value by value, as the JSON
    fragment ``"key": value`` (every seat's page as it would be rendered: the
    read side holds only the watched ones')."""
    facts = [e.fields["text"] for e in heard if e.audience != TABLE and e.fields["event"] == "tell"]
    for seat in loop.table.state.seats:
        page = loop.pages.render(seat)
        facts += [json.dumps({k: v})[1:-1] for k, v in page.items() if k != "legal" and v is not None]
    return facts
