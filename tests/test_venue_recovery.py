"""The venue under trouble: a store that cannot keep a message for a while
(a full disk), a TV that stops reading, a message too big to read, a flood
of junk on many topics, one person spelt twice, bad files at start."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from test_venue_schema import play
from venue_kit import Table, wait

from venue.app import Venue


def quiet(line: str) -> None:
    pass


def test_finding_a_venue_whose_disk_filled_and_emptied_hears_every_play_it_missed(broker: Any,
                                                                                 tmp_path: Path) -> None:
    """A play the store cannot keep is not acknowledged; the broker sends it
    again only on a new connection, and past its in-flight limit (20) sends
    nothing more: the venue must recover by itself once its disk has room."""
    said: list[str] = []
    v = Venue(tmp_path / "v", (broker.host, broker.port), None, ident="venue-full", report=said.append).start()
    keep = v.store.apply
    full = {"on": True, "refusals": 0}

    def apply(record: Any, now: float) -> Any:
        if full["on"]:
            full["refusals"] += 1
            raise sqlite3.OperationalError("database or disk is full")
        return keep(record, now)

    v.store.apply = apply  # type: ignore[method-assign]
    t = Table(broker, "t1")
    try:
        wait(v.ear.subscribed.is_set, what="the subscription")
        for n in range(1, 27):
            t.send("companion/t1/play", play(id=f"t1/p/{n}"))
        wait(lambda: full["refusals"] >= 2, what="the venue failing to keep a play")
        time.sleep(3.0)  # a few reconnections meanwhile
        full["on"] = False  # the disk has room again
        wait(lambda: v.store.counts()["plays"] == 26, timeout=60, what="all 26 plays kept")
        assert said == ["the venue cannot keep messages (database or disk is full); it reconnects until it can,"
                        " losing none", "the venue keeps messages again"]
        assert v.store.counts()["duplicates"] == 0  # each kept once, acknowledged once
    finally:
        t.close()
        v.stop()
