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


def test_finding_a_tv_board_that_stopped_reading_has_its_stream_closed() -> None:
    """Let go of (its queue full), its stream must end, so its EventSource
    reconnects and shows the board as it is, rather than a stale one forever."""
    import asyncio

    from venue.server import SSE_QUEUE, VenueServer

    server = VenueServer(lambda: {"tables": []}, lambda ident: {"id": ident}, lambda: {"season": []},
                         "127.0.0.1", 0, report=quiet)

    async def a_tv_that_stops_reading() -> list[str]:
        response = await server.api_events(None)  # type: ignore[arg-type]
        for _ in range(SSE_QUEUE + 1):  # the TV reads nothing meanwhile
            server._push("table", "t1")
        assert server._clients == []  # let go of
        chunks: list[str] = []

        async def read() -> None:
            async for chunk in response.body_iterator:
                chunks.append(str(chunk))

        await asyncio.wait_for(read(), 5.0)  # the stream ends (before: it waited for pushes that never came)
        return chunks

    chunks = asyncio.run(a_tv_that_stops_reading())
    assert chunks[0].startswith("retry: ")  # the page reconnects by itself, and is sent the whole board again


def test_finding_one_person_spelt_with_two_spaces_is_not_two_players_of_one_play() -> None:
    """"Al ice" and "Al  ice" are one person to the league: a play naming both
    is refused (as a table never sends it: the same test refuses the name there)."""
    import json

    from companion.core import display_names
    from venue import league, schema

    record = play(players=[
        {"name": "Al ice", "seat": "red", "score": 1, "winner": True, "team": "village", "place": None},
        {"name": "Al  ice", "seat": "blue", "score": 0, "winner": False, "team": "werewolf", "place": None}])
    for i, name in enumerate(("Al ice", "Al  ice")):
        record["play"]["players"][i]["name"] = name
    checked = schema.check("companion/t1/play", json.dumps(record).encode())
    assert isinstance(checked, schema.Problem) and "same name" in str(checked)
    # one normalisation, the table's: the same person at the table as at the venue
    assert league.person("Ａl\u3000 ICE ", "red") == display_names.fold("Al ice") == "al ice"
    refusal = display_names.problem("Al  ice", ["Al ice"])
    assert refusal is not None and refusal.key == "display.refuse.taken"


def late_play(n: int, minute: int) -> Any:
    import json

    from venue import schema

    record = play(id=f"t1/p/{n}", players=[
        {"name": f"p{n % 7}", "seat": "red", "score": 1, "winner": True, "team": "village", "place": None},
        {"name": f"q{n % 5}", "seat": "blue", "score": 0, "winner": False, "team": "werewolf", "place": None}])
    record["play"]["durationMin"] = minute
    for i, q in enumerate(record["play"]["players"]):
        q["name"] = record["players"][i]["name"]
    checked = schema.check("companion/t1/play", json.dumps(record).encode())
    assert isinstance(checked, schema.Play)
    return checked


def test_finding_a_late_play_does_not_rate_the_whole_season_again(tmp_path: Path, monkeypatch: Any) -> None:
    """A play that ended before the last one rated costs the plays after its
    place (a few), not the season; one later than the league keeps history
    for is rated at its arrival.  Counted in ratings made, not in time."""
    from venue import league

    v = Venue(tmp_path / "v", ("127.0.0.1", 1), None, since=0.0, report=quiet)  # never started: no broker needed
    try:
        for n in range(1, 601):
            v.store.apply(late_play(n, 10 + 2 * n), 1.0)
        v.league()
        rated: list[int] = []
        model = league.MODEL

        class Counting:
            def rating(self, *a: Any, **kw: Any) -> Any:
                return model.rating(*a, **kw)

            def rate(self, *a: Any, **kw: Any) -> Any:
                rated.append(1)
                return model.rate(*a, **kw)

        monkeypatch.setattr(league, "MODEL", Counting())
        v.store.apply(late_play(601, 10 + 2 * 596 + 1), 1.0)  # ended before the last four
        v.league()
        assert len(rated) == 2 * 5  # tonight and the season: it and the four after it (before: 2 * 601)
        rated.clear()
        v.store.apply(late_play(602, 1), 1.0)  # ended before all 601: later than any history kept
        v.league()
        assert len(rated) == 2
        scratch = [s.view() for s in league.standings(v.store.plays(), v.store.people())]
        assert v.league()["season"] == scratch  # what a restart computes from the store
    finally:
        v.store.close()


def test_finding_a_message_too_big_is_never_read_by_the_venue(broker: Any, tmp_path: Path) -> None:
    """The venue tells the broker the largest packet it takes (MQTT 5 Maximum
    Packet Size): a message over it is dropped by the broker, never read into
    the venue's memory (before: read whole, 96 MiB cost +293 MiB, then refused)."""
    v = Venue(tmp_path / "v", (broker.host, broker.port), None, ident="venue-size", report=quiet).start()
    t = Table(broker, "t1")
    try:
        wait(v.ear.subscribed.is_set, what="the subscription")
        t.send("companion/t1/state", b"x" * (1024 * 1024))
        t.send("companion/t1/status", b"online")
        wait(lambda: v.store.tables(), what="the small message after the big one")
        assert v.store.counts()["messages"] == 1 and v.store.counts()["refused"] == 0
    finally:
        t.close()
        v.stop()


def test_finding_junk_on_thousands_of_topics_is_said_at_a_bounded_rate(tmp_path: Path) -> None:
    """Each topic's refusal is said once a minute; thousands of topics made up
    must not make thousands of lines: a few, then how many more were not said."""
    import paho.mqtt.client as mqtt

    from venue import subscriber

    said: list[str] = []
    v = Venue(tmp_path / "v", ("127.0.0.1", 1), None, ident="venue-noise", report=said.append)  # not started
    try:
        for i in range(5000):
            msg = mqtt.MQTTMessage(topic=f"companion/t{i}/state".encode())
            msg.payload = b"junk"
            v.ear._message(v.ear.client, None, msg)
        assert v.store.counts()["refused"] == 5000  # every one counted
        assert len(said) <= 20, len(said)  # before: 5,000 lines
        assert len(said) == subscriber.SAY_BURST
        v.ear.stop()  # what was not said is summed up, not lost
        assert said[-1] == f"refused: {5000 - len(said) + 1} more like this, not said one by one", said[-1]
    finally:
        v.store.close()


def damaged_venue(state: Path, pages: tuple[int, ...]) -> Path:
    """A venue database holding 150 plays, ``pages`` (4 KiB) overwritten as a failing card does."""
    import json

    from venue import schema
    from venue.store import Store

    store = Store(state)
    for n in range(1, 151):
        checked = schema.check("companion/t1/play", json.dumps(play(id=f"t1/p/{n}")).encode())
        assert isinstance(checked, schema.Play)
        store.apply(checked, 1.0)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    path = state / "venue.sqlite"
    data = bytearray(path.read_bytes())
    for page in pages:
        data[page * 4096:(page + 1) * 4096] = b"\xa5" * 4096
    path.write_bytes(bytes(data))
    return path


def test_finding_a_damaged_venue_database_is_recovered_at_start(tmp_path: Path) -> None:
    """Like the table's journal: the damaged file kept aside as it is, every
    whole play it still holds recovered, one line saying so (before: a traceback,
    or, for damage past the schema's pages, nothing until the first play failed)."""
    for n, pages in enumerate(((1,), (30, 35))):  # a first table's page (before: a traceback); plays' pages
        state = tmp_path / f"state{n}"
        before = damaged_venue(state, pages).read_bytes()
        said: list[str] = []
        v = Venue(state, ("127.0.0.1", 1), None, report=said.append)
        try:
            [line] = said
            [aside] = state.glob("venue.sqlite.damaged-*[0-9]")  # (and its WAL beside it)
            assert aside.read_bytes() == before  # kept as it was
            plays = v.store.counts()["plays"]
            assert 100 <= plays <= 150 and line.startswith("venue.sqlite was damaged (") and (
                f"kept as {aside.name}; recovered {plays} plays") in line, line
            assert all(len(p["players"]) == 2 for p in v.store.plays())  # whole plays only
            v.league()  # the league reads it
        finally:
            v.store.close()


def test_finding_an_empty_or_junk_ca_file_is_one_line_naming_it(tmp_path: Path, capsys: Any) -> None:
    from companion.app.cli import main

    for name, text in (("empty.pem", ""), ("junk.pem", "junk\n")):
        ca = tmp_path / name
        ca.write_text(text)
        code = main(["venue", "--mqtt", "127.0.0.1:1", "--web", "127.0.0.1:0", "--state", str(tmp_path / "s"),
                     "--ca-file", str(ca)])
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert f"--ca-file: {ca}: " in err and "certificate" in err, err
