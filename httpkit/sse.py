"""Server-sent events, for the table's pages (web.server) and the venue's
board (venue.server): one message's text, and the response that streams a
page's queue to it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.responses import StreamingResponse

KEEPALIVE_S = 15.0  # a comment this often, so a proxy or a sleeping phone notices a dead link
RETRY_MS = 1000  # how soon a page's EventSource reconnects
# one encoder for every event (``json.dumps`` with options builds one per call: a venue sends a thousand a second)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def sse(kind: str, data: Any) -> str:
    """One event: ``kind`` and ``data`` as compact JSON (UTF-8 as it is)."""
    return f"event: {kind}\ndata: {_COMPACT(data)}\n\n"


def stream(queue: asyncio.Queue[str | None], first: str, gone: Callable[[], None]) -> StreamingResponse:
    """``first``, then what arrives on ``queue`` until a None (the server
    stopping); ``gone`` runs when the stream ends, however it ends (the page
    left, the server stopped), to forget the queue."""

    async def events() -> AsyncIterator[str]:
        try:
            yield f"retry: {RETRY_MS}\n\n" + first
            while True:
                try:
                    text = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if text is None:
                    return
                yield text
        finally:
            gone()

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
