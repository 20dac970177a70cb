"""The pages' front door: what is let in at all, before the app reads a byte.

- ``Host``: only the names the Pi answers to.  A web site whose name was
  rebound to the Pi's address gets 421 and no body (its page would otherwise
  read the table's API, fetch a page token and ask for a seat: the Origin
  check passes when Origin and Host are both the rebound name).
- Bodies: at most ``MAX_BODY`` bytes, counted as they arrive (a declared
  length or a chunked stream), so nothing larger is ever held: 413.
- Connections: at most ``MAX_CONNECTIONS`` open, ``MAX_PER_CLIENT`` from one
  address (the excess is closed as soon as it is accepted, so descriptors stay
  free for the journal and the backups), and each request must arrive whole
  within ``REQUEST_S`` of its connection being idle.  A flood is logged once.
"""

from __future__ import annotations

import errno
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_BODY = 8 * 1024  # a page sends a seat, a button or a bid: a few hundred bytes
MAX_HEADERS = 8 * 1024  # h11's limit on a request's head (its default is 16 KiB)
# The unit allows 1,024 descriptors (LimitNOFILE): 128 connections leave the
# rest to the journal, its backups, the voice, the reader.  Ten phones hold
# two streams each (the public feed and their seat's) and a request or two.
MAX_CONNECTIONS = 128
MAX_PER_CLIENT = 32  # one LAN host cannot take every connection from the phones
REQUEST_S = 10.0  # a request's head and body, from the connection's being idle
FLOOD_OVER_S = 60.0  # a flood is over when none was refused for this long
ScopeT = MutableMapping[str, Any]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


def host_of(header: str) -> str:
    """``Host:`` → the bare name or address, lower case: ``[::1]:80`` → ``::1``."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    name, sep, port = value.rpartition(":")
    if sep and port.isdigit() and ":" not in name:
        value = name
    return value.rstrip(".")


def own_names(bound: str, configured: Iterable[str]) -> frozenset[str]:
    """The names the Pi answers to: loopback, its host name and ``<host>.local``,
    the address it is bound to, and the config's ``web: hosts:``.  (The address a
    connection arrived on is added per request: ``Doorman.allows``.)"""
    hostname = socket.gethostname().lower()
    names = {"localhost", "127.0.0.1", "::1", hostname, f"{hostname}.local", hostname.partition(".")[0] + ".local"}
    if bound not in ("", "0.0.0.0", "::"):
        names.add(bound.lower())
    names.update(host_of(h) for h in configured)
    return frozenset(n for n in names if n)


class Doorman:
    """The ASGI middleware (Host, body size) and the connections' bookkeeping
    (counts, the flood's one log line)."""

    def __init__(self, app: Any, names: frozenset[str], report: Callable[[str], None],
                 max_body: int = MAX_BODY) -> None:
        self.app, self.names, self.report, self.max_body = app, names, report, max_body
        self.refused = 0  # connections closed at accept, ever
        self.dropped = 0  # requests that did not arrive in time, ever
        self._flood_since: float | None = None  # the last refusal of the flood being logged
        self.clock = time.monotonic

    # ------------------------------------------------------------ ASGI
    async def __call__(self, scope: ScopeT, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        if not self.allows(headers.get(b"host", b"").decode("latin-1"), scope.get("server")):
            await _respond(send, 421, b"")  # no body: a rebound page learns nothing here
            return
        length = headers.get(b"content-length")
        if length is None and b"transfer-encoding" not in headers:
            await self.app(scope, receive, send)  # no body (a GET, the event streams)
            return
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await _too_big(send, self.max_body)  # refused unread
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # nobody left to answer
            body += message.get("body", b"")
            if len(body) > self.max_body:
                await _too_big(send, self.max_body)  # and the connection closes: the rest is never read
                return
            if not message.get("more_body", False):
                break
        whole = bytes(body)
        given = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": whole, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def allows(self, header: str, server: Any) -> bool:
        host = host_of(header)
        if not host:
            return False
        if host in self.names:
            return True
        # the address this very connection arrived on is one of the Pi's own (an IPv4
        # client of a dual-stack socket arrives on ::ffff:a.b.c.d; a link-local one names its zone)
        local = str(server[0]).lower().partition("%")[0].removeprefix("::ffff:") if server else ""
        return host == local

    # ----------------------------------------------------- connections
    def too_many(self, connections: Iterable[Any], client: Any) -> str | None:
        """Why a new connection is closed at once, or None."""
        open_ = list(connections)
        if len(open_) > MAX_CONNECTIONS:
            return f"more than {MAX_CONNECTIONS} connections open"
        ip = client[0] if client else None
        if ip is not None and sum(1 for c in open_ if getattr(c, "client", None) and c.client[0] == ip) > MAX_PER_CLIENT:
            return f"more than {MAX_PER_CLIENT} connections from {ip}"
        return None

    def flood(self, why: str) -> None:
        """One line per flood, however many connections it was."""
        now = self.clock()
        if self._flood_since is None or now - self._flood_since > FLOOD_OVER_S:
            self.report(f"the pages are refusing connections: {why} (a flood? the table plays on; "
                        f"connections left half-sent are closed after {REQUEST_S:g} s)")
        self._flood_since = now

    def loop_exception(self, loop: Any, context: dict[str, Any]) -> None:
        """The web loop's exception handler: out of descriptors at accept is the
        flood again (one line), never a traceback a second."""
        e = context.get("exception")
        if isinstance(e, OSError) and e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
            self.flood(f"out of descriptors ({e.strerror})")
            return
        loop.default_exception_handler(context)


def guarded_protocol(door: Doorman) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the door's limits on connections and time
    (uvicorn has a keep-alive timeout, but none for a request's head: a client
    that sends a byte now and then would hold its connection for ever)."""

    class Guarded(H11Protocol):
        _timer: Any = None

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            why = door.too_many(self.connections, self.client)
            if why is not None:
                door.refused += 1
                door.flood(why)
                transport.abort()  # the descriptor is free again at once
                return
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._timer = self.loop.call_later(REQUEST_S, self._too_slow)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _too_slow(self) -> None:
            self._timer = None
            if not self.transport.is_closing():
                door.dropped += 1
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
                self._disarm()  # the request is in: answering it (a stream) may take as long as it likes

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm()  # waiting for the next request on this connection

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return Guarded


class OncePerMinute(logging.Filter):
    """uvicorn's own warnings ("Invalid HTTP request received.") are one a
    request: under a flood, one a minute of each."""

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        key = str(record.msg)
        if now - self._last.get(key, -1e9) < 60.0:
            return False
        self._last[key] = now
        return True


def quiet_uvicorn() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, OncePerMinute) for f in logger.filters):
        logger.addFilter(OncePerMinute())


async def _respond(send: Send, status: int, body: bytes, close: bool = False) -> None:
    headers = [(b"content-length", str(len(body)).encode())]
    if body:
        headers.append((b"content-type", b"application/json"))
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _too_big(send: Send, limit: int) -> None:
    import json

    body = json.dumps({"ok": False, "error": "too_big", "reason": f"a page sends at most {limit} bytes"}).encode()
    await _respond(send, 413, body, close=True)
