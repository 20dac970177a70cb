"""httpkit/sse.py: the one server-sent-events helper of the table's pages and the
venue's board (one place for it: the venue once had a copy of the pages' stream)."""

from __future__ import annotations

import asyncio

from httpkit import sse
from venue import server as venue_server
from web import server as web_server


def test_the_pages_and_the_venue_stream_with_the_one_sse_helper() -> None:
    assert web_server.sse is sse.sse and venue_server.sse is sse.sse
    assert web_server.stream is sse.stream and venue_server.stream is sse.stream


def test_an_event_is_its_kind_and_compact_json_as_written() -> None:
    assert sse.sse("table", {"step": "夜", "n": [1, 2]}) == 'event: table\ndata: {"step":"夜","n":[1,2]}\n\n'


def test_a_stream_sends_first_then_the_queue_until_none_and_then_forgets_it() -> None:
    gone: list[bool] = []

    async def read() -> list[str]:
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        for text in (sse.sse("a", 1), sse.sse("b", 2), None, sse.sse("never", 3)):
            queue.put_nowait(text)
        response = sse.stream(queue, sse.sse("board", {}), lambda: gone.append(True))
        assert response.media_type == "text/event-stream"
        assert response.headers["cache-control"] == "no-store" and response.headers["x-accel-buffering"] == "no"
        return [chunk async for chunk in response.body_iterator]  # type: ignore[misc]

    chunks = asyncio.run(read())
    assert chunks == ["retry: 1000\n\nevent: board\ndata: {}\n\n", "event: a\ndata: 1\n\n", "event: b\ndata: 2\n\n"]
    assert gone == [True]
