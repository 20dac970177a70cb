"""The venue's board: one page a café puts on a TV (every table, tonight's and
the season's league), ``GET /api/venue`` (all of it as JSON) and
``GET /api/venue/events`` (SSE: ``table`` when a table changed, ``league``
when a play arrived).

In front of it stands the table's own door (``httpkit.guard``): only the
machine's own names in ``Host`` (a rebound web site reads nothing), small
bodies, a bounded number of connections each sending its request in time.
Everything shown came through ``venue.schema``; the page sets it as text,
never as markup.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Callable, Iterable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from httpkit.guard import Doorman, own_names
from httpkit.serving import Serving
from httpkit.sse import sse, stream

LANGS = ("en", "ja")
# A TV that stopped reading is let go past this many pushes: its stream ends, it reconnects and
# resyncs.  A few seconds of a convention's thousand tables (one change a second each), so a TV on a
# Wi-Fi that hiccups is not sent the whole board again; at most ~1 MiB held for one TV.
SSE_QUEUE = 4096
# The changes heard this long are pushed together: a thousand tables' states a second are a few
# dozen writes to each TV, not one (and a turn of the serving loop, a wake-up) per state or two.
PUSH_S = 0.025
STATIC = {"venue.js": "text/javascript", "venue.css": "text/css"}
CSP = "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'"


def language(query: str | None, accept: str | None) -> str:
    """``?lang=`` if it is one we speak, else the best of Accept-Language, else English."""
    if query in LANGS:
        return str(query)
    wanted = []
    for i, part in enumerate((accept or "").split(",")[:20]):
        tag, _, q = part.strip().partition(";q=")
        try:
            weight = float(q) if q else 1.0
        except ValueError:
            continue
        wanted.append((-weight, i, tag.strip().lower().partition("-")[0]))
    # q=0 is "not this one"
    return next((lang for minus_q, _, lang in sorted(wanted) if lang in LANGS and minus_q < 0), "en")


class VenueServer:
    """``board()``: the whole board (tables, league, counts); ``table(id)``: one
    table's row; ``league()``: the standings and counts.  ``changed(kind, id)``
    may be called from any thread (the MQTT one): it only hands over."""

    def __init__(self, board: Callable[[], dict[str, Any]], table: Callable[[str], dict[str, Any] | None],
                 league: Callable[[], dict[str, Any]], host: str, port: int, *, hosts: Iterable[str] = (),
                 report: Callable[[str], None] = print) -> None:
        self.board, self.table, self.league = board, table, league
        self.host, self.port = host, port
        self._clients: list[asyncio.Queue[str | None]] = []
        self._pending: dict[tuple[str, str], None] = {}  # changes not yet pushed, in order (``changed``)
        self._pending_handed: object = None  # the serving loop asked to push them, if one was
        self._pending_lock = threading.Lock()
        self.pushed = 0  # SSE messages handed to the pages, ever
        self.app = Starlette(routes=[
            Route("/", self.page), Route("/static/{name}", self.static),
            Route("/api/venue", self.api_venue), Route("/api/venue/events", self.api_events)])
        self.door = Doorman(self.app, own_names(host, hosts), report)
        self.serving = Serving(self.door)  # uvicorn on its thread; ``changed`` hands over through it

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{'127.0.0.1' if host in ('', '0.0.0.0') else host}:{self.port}"

    # -------------------------------------------------------- from the ear
    def changed(self, kind: str, ident: str) -> None:
        """Kept until the serving thread takes them, PUSH_S after the first: a
        thousand tables' changes a second wake it once per batch, not once each
        (waking it is a write to its self-pipe and a turn of its loop), and a table
        changed twice meanwhile is pushed once, as it is now (``_push`` reads the
        row when it pushes)."""
        with self._pending_lock:
            self._pending[(kind, ident)] = None
            loop = self.serving.loop
            # asked once per batch, of the loop serving now (one stopped before taking them: ask again)
            if loop is not None and not loop.is_closed() and self._pending_handed is not loop:
                self._pending_handed = loop
                self.serving.hand_over(self._push_later)

    def _push_later(self) -> None:
        asyncio.get_running_loop().call_later(PUSH_S, self._push_pending)

    def _push_pending(self) -> None:
        with self._pending_lock:
            pending, self._pending, self._pending_handed = self._pending, {}, None
        if not self._clients:
            return
        # one chunk for the batch: each TV's stream written once, not once per change
        texts = [t for t in (self._text(kind, ident) for kind, ident in pending) if t is not None]
        if texts:
            self._send("".join(texts), len(texts))

    def _push(self, kind: str, ident: str) -> None:
        if not self._clients:
            return
        text = self._text(kind, ident)
        if text is not None:
            self._send(text, 1)

    def _text(self, kind: str, ident: str) -> str | None:
        if kind == "table":
            row = self.table(ident)
            return sse("table", row if row is not None else {"id": ident, "gone": True})
        if kind == "play":
            return sse("league", self.league())
        return None

    def _send(self, text: str, messages: int) -> None:
        for queue in list(self._clients):
            try:
                queue.put_nowait(text)
                self.pushed += messages
            except asyncio.QueueFull:
                self._let_go(queue)

    def _let_go(self, queue: asyncio.Queue[str | None]) -> None:
        """A TV that stopped reading: no more pushes, and its stream ends (what
        it did not read is stale anyway), so its EventSource reconnects and is
        sent the whole board again."""
        if queue in self._clients:
            self._clients.remove(queue)
        while not queue.empty():
            queue.get_nowait()
        queue.put_nowait(None)

    # -------------------------------------------------------------- routes
    async def page(self, request: Request) -> Response:
        lang = language(request.query_params.get("lang"), request.headers.get("accept-language"))
        html = resources.files("venue").joinpath("static/venue.html").read_text(encoding="utf-8")
        return Response(html.replace("{{lang}}", lang), media_type="text/html; charset=utf-8",
                        headers={"Cache-Control": "no-store", "Content-Security-Policy": CSP,
                                 "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"})

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return Response("not found", 404)
        body = resources.files("venue").joinpath(f"static/{name}").read_bytes()
        return Response(body, media_type=STATIC[name], headers={"X-Content-Type-Options": "nosniff"})

    async def api_venue(self, request: Request) -> Response:
        return JSONResponse(self.board(), headers={"Cache-Control": "no-store"})

    async def api_events(self, request: Request) -> Response:
        queue: asyncio.Queue[str | None] = asyncio.Queue(SSE_QUEUE)
        first = sse("board", self.board())
        self._clients.append(queue)
        return stream(queue, first, lambda: self._clients.remove(queue) if queue in self._clients else None)

    # ------------------------------------------------------------- running
    def start(self, timeout: float = 10.0) -> None:
        """Serve on a thread of its own; returns once listening, or raises
        OSError saying why not (a port taken, an address not this machine's)."""
        # bound here first: a port taken or an address not ours is one line of ours, not uvicorn's log
        try:
            family = socket.getaddrinfo(self.host or None, self.port, type=socket.SOCK_STREAM)[0][0]
            sock = socket.create_server((self.host, self.port), family=family)
        except OSError as e:
            raise OSError(f"the board could not listen on {self.host}:{self.port} ({os.strerror(e.errno) if e.errno else e})") from None
        sock.setblocking(False)
        try:
            self.port = self.serving.start(self.host, self.port, "venue-web", self.stop, sock, timeout)
        except OSError as e:
            sock.close()
            raise OSError(f"the board could not start on {self.host}:{self.port}" + (f" ({e})" if str(e) else "")) from None

    def stop(self) -> None:
        self.serving.stop(self._end_streams)

    def _end_streams(self) -> None:
        for queue in list(self._clients):
            try:
                queue.put_nowait(None)
            except asyncio.QueueFull:
                pass
        self._clients.clear()
