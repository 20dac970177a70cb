"""The table's pages, served from the daemon's process on a thread of their own.

A sink of the router like the speaker: ``receive`` is called on the loop's
thread and only hands the message to the web's event loop
(``call_soon_threadsafe``), so the table never waits for a page.  Inputs go
back the way a tap does, through ``inbox.submit``.

What leaves here for anyone (``/``, ``/api/table``, ``/api/events``) is built
only from the read side's public snapshot and events whose audience is the
table; a seat's events and snapshot go only to the page holding that seat's
secret (``web.pairing``).  Before any of it, the door (``httpkit.guard``) lets in
only the Pi's own names, bodies of a few KiB and a bounded number of
connections, each request arriving in time.

The pages name no game themselves: ``/api/games`` gives each game's name and
its steps' labels in every language, and the export each game's name and
scoring — both handed in by the app, from the games' folders.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import json
import secrets
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from companion.core.events import LOG, TABLE, ButtonPressed, Housekeeping, ShellError, Submit
from companion.core.messages import (
    Answer,
    Claim,
    Command,
    Event,
    Inbox,
    Message,
    PageInput,
    PairRequest,
    ReadSide,
    Wants,
)
from companion.core.table import NAMED
from httpkit.guard import Doorman, own_names
from httpkit.serving import Serving
from httpkit.sse import sse, stream
from web.bgstats import ExportGame, push_url, record
from web.game_log import GameLog
from web.live import WatchedReadSide
from web.pairing import COOKIE, COOKIE_AGE_S, Pairings, RateLimit

SSE_QUEUE = 256  # messages a slow page may fall behind before it is dropped (it reconnects)
ANSWER_S = 5.0  # how long a control waits in the table's inbox before it is withdrawn ("too late")
TAKEN_S = 60.0  # once the table has taken a control or a pairing, how long its verdict may take (a slow card)
# A pairing's refusals (the loop's ``error``) as HTTP statuses
PAIR_STATUS = {"busy": 409, "too_many": 429, "night": 409, "no_seat": 400, "not_saved": 503}
BUTTONS = ("next", "back", "repeat")
STATIC = {"app.js": "text/javascript", "app.css": "text/css"}


@dataclass
class _Client:
    queue: asyncio.Queue[str | None] = field(default_factory=lambda: asyncio.Queue(SSE_QUEUE))
    seat: str | None = None  # None: the public feed
    sent: Any = None  # a seat's page: the private snapshot it has (pushed again only when it changed)


class WebServer:
    """The pages.  ``history()`` returns the finished plays (the journal's,
    read-only); ``extra`` adds routes (the virtual table in a simulation);
    ``games``: the games' names and step labels by language (``/api/games``);
    ``export``: how BG Stats files each game (web.bgstats).
    A router device: it hears every audience and sends on only what each page
    may see."""

    wants = Wants()

    def __init__(self, read_side: ReadSide, inbox: Inbox, history: Callable[[], list[dict[str, Any]]],
                 host: str, port: int, *, pair_window_s: float = 30.0,
                 address: str | None = None, now: Callable[[], float] = time.monotonic,
                 extra: Callable[[WebServer], list[Route]] | None = None, store: Path | None = None,
                 games: Mapping[str, Any] | None = None, export: Mapping[str, ExportGame] | None = None,
                 hosts: Iterable[str] = (), narrate: Any = None, clock: Callable[[], float] = time.time) -> None:
        self.read_side, self.inbox, self.history = read_side, inbox, history
        # the table's narrator (voice.lines.Narrator: ``render``, ``lines``): a finished game's verdict, as said
        self.narrate = narrate
        # the table's wall clock (the loop's: virtual in a simulation), the one the deadline is on
        self.clock = clock
        self.games, self.export = dict(games or {}), dict(export or {})
        self.host, self.port = host, port
        self.address = address or f"http://{host}:{port}/"  # what the QR code and the start line say
        self.pair_window_s = pair_window_s
        self.answer_s = ANSWER_S
        # ``store``: kept across restarts; a pairing is of the table's evening (web.pairing)
        self.pairings = Pairings(store, evening=lambda: self.read_side.public().get("evening"))
        self.pair_limit = RateLimit(5, 60.0, now)  # attempts per client address per minute
        self._clients: list[_Client] = []
        self._pending_pairs: dict[str, asyncio.Future[Command]] = {}  # nonce → the loop's answer
        self.leds: dict[str, bool] = {}
        # The last line said: a public event the page shows again after a
        # reload (a round's points are in the read side: they survive a restart),
        # with its key (a game's ``clock`` lines give way to a running countdown).
        # It stands until the table moves on without a word (``_table_changed``):
        # "0 of 6 bids are in" is not shown under a headline of "4 of 6".
        self.now: dict[str, Any] = {"line": None, "key": None}
        self._said_since_change = False
        self._line_version: int | None = None  # the public snapshot the line was said with
        self._phase: Any = None
        # The game log: every line said to the table in the game being played, newest first
        # (web.game_log); ``_playing``: which game the last public push showed (None: none)
        self.log = GameLog()
        self._playing: Any = None
        self._log_lang: Any = None  # the language the feed last sent the whole log in
        # Which public snapshot the feed last carried (the read side counts its
        # changes): a page is pushed a snapshot only when what it may see changed,
        # so a private event (a gift) makes no public push — its timing would tell.
        self.public_version = read_side.public_versioned()[0]
        routes = [
            Route("/", self.page), Route("/seat", self.page), Route("/tv", self.tv), Route("/static/{name}", self.static),
            Route("/qr.svg", self.qr), Route("/api/table", self.api_table), Route("/api/events", self.api_events),
            Route("/api/games", self.api_games),
            Route("/api/pair", self.api_pair, methods=["POST"]), Route("/api/me", self.api_me),
            Route("/api/me/events", self.api_me_events), Route("/api/press", self.api_press, methods=["POST"]),
            Route("/api/submit", self.api_submit, methods=["POST"]), Route("/api/export", self.api_export),
            Route("/api/name", self.api_name, methods=["POST"]),
            *(extra(self) if extra else []),
        ]
        self.app = Starlette(routes=routes)
        # What uvicorn serves: the door (Host, body size) in front of the pages (httpkit.guard)
        self.door = Doorman(self.app, own_names(host, hosts), self.report)
        # uvicorn on its thread, and the one way onto its loop (``serving.hand_over``)
        self.serving = Serving(self.door)
        if isinstance(read_side, WatchedReadSide):  # last: a change may come from the loop's thread at once
            read_side.listeners.append(self._read_side_changed)
            # Only the seats with a phone have their pages rendered (runtime.pages):
            # a seat's phone is paired for the evening, and may ask for its page at any time.
            read_side.watch(self.pairings.paired_seats)

    # ------------------------------------------------------ the router's side
    def receive(self, message: Message) -> None:
        """On the loop's thread: hand over, never wait."""
        self.serving.hand_over(self._dispatch, message)

    def report(self, message: str) -> None:
        """Something the pages survived, for the table's log (from any thread)."""
        self.inbox.submit(ShellError(message))

    def _read_side_changed(self) -> None:
        # The version is read here, on the loop's thread as the change is made: the pushes may
        # run late and together (a busy serving loop), each then reading the newest snapshot.
        self.serving.hand_over(self._table_changed, self.read_side.public_versioned()[0])

    def _table_changed(self, version: int) -> None:
        """One change of the table, in order with its lines: the line said since the change
        before is this one's; with none said, the line stands only while the snapshot it
        was said with does."""
        if self._said_since_change:
            self._line_version, self._said_since_change = version, False
        elif version != self._line_version:
            self.now = {"line": None, "key": None}
        self._push_snapshots()

    def _dispatch(self, message: Message) -> None:
        if isinstance(message, Command):
            self._command(message)
            return
        fields = dict(message.fields)
        if fields.get("event") == "accepted":  # an input's lines follow: a new game's first are these
            self.log.taken()
        if message.audience == TABLE:
            self._track(message, fields)
            self._send(None, sse("event", fields))
        elif message.audience.startswith("player:"):
            self._send(message.audience.removeprefix("player:"), sse("event", fields))
        # LOG events are never sent; a page's control hears its verdict in its own answer (``_control``)

    def _track(self, message: Event, fields: dict[str, Any]) -> None:
        # an aside (the pages' address, said at start) is not the game's line: it never replaces it
        if fields.get("event") == "say" and not fields.get("aside"):
            self.now = {"line": fields.get("text"), "key": fields.get("key")}
            self._said_since_change = True
            line = message.line
            self.log.add(fields.get("key"), str(fields.get("text", "")), fields.get("lang"),
                         getattr(line, "params", None))

    def recall(self, text: str | None, key: str | None) -> None:
        """The line in force when the pages start (``Outputs.instruction``: what
        repeat would say), unless one was said since: after a restart the page
        shows the game's instruction, said before the pages were up."""
        def put() -> None:  # the pages just started: one opening now is sent it with the table
            if self.now["line"] is None and text is not None:
                self.now = {"line": text, "key": key}
            if not len(self.log) and text is not None:  # the game log too: its newest line, the one in force
                self.log.add(key, text)
        self.serving.hand_over(put)

    def _command(self, command: Command) -> None:
        if command.name in ("paired", "pair_failed"):
            future = self._pending_pairs.pop(str(command.args.get("nonce")), None)
            if future is not None and not future.done():
                future.set_result(command)
        elif command.name == "led" and command.audience == TABLE:
            self.leds[str(command.args["led"])] = bool(command.args["on"])
            self._send(None, sse("leds", self.leds))
        elif command.name == "feedback" and command.audience == TABLE:  # the panel's ok/error flash
            self._send(None, sse("feedback", {"ok": bool(command.args["ok"])}))

    def _push_snapshots(self) -> None:
        if self.pairings.new_evening():  # every pairing ended with its evening: their private feeds too
            for client in list(self._clients):
                if client.seat is not None:
                    self._put(client, None)
        version, public = self.read_side.public_versioned()
        if version != self.public_version:  # what a page may see changed since the last push
            self.public_version = version
            phase = public.get("phase")
            playing = None if phase == "idle" else public.get("game")
            # the whole log goes with a snapshot only when a page cannot follow it from the
            # lines on the feed: a new game emptied it, a language card reads it again
            whole = playing is not None and playing != self._playing or public.get("lang") != self._log_lang
            if playing is not None and playing != self._playing:
                self.log.new_game()
            self._playing, self._log_lang = playing, public.get("lang")
            if phase != self._phase and self._phase == "playing":  # a game ended (or was abandoned): a new play
                self._send(None, sse("history", [public_play(p, self.export) for p in self.history()]))
            self._phase = phase
            self._send(None, sse("table", self.public_state(history=False, log=whole, seen=(version, public))))
        for client in list(self._clients):
            if client.seat is not None:  # a seat's page hears only of its own changes
                private = self.read_side.private(client.seat)
                if private != client.sent:
                    client.sent = private
                    self._put(client, sse("me", private))

    def _send(self, seat: str | None, text: str | None) -> None:
        """To every page of ``seat`` (None: the public feed); ``None`` ends their streams."""
        for client in list(self._clients):
            if client.seat == seat:
                self._put(client, text)

    def _put(self, client: _Client, text: str | None) -> None:
        try:
            client.queue.put_nowait(text)
        except asyncio.QueueFull:  # a page that stopped reading: let it go (it reconnects and resyncs)
            if client in self._clients:
                self._clients.remove(client)
            client.queue = asyncio.Queue(1)
            client.queue.put_nowait(None)

    # ---------------------------------------------------------- public pages
    def public_state(self, history: bool = True, log: bool = True,
                     seen: tuple[int, dict[str, Any]] | None = None) -> dict[str, Any]:
        """``log``: with the whole game log (a page that connects now; a snapshot after
        which the lines it followed on the feed are not the log, ``_push_snapshots``).
        ``seen``: the public snapshot, with its version, to show (default: the latest)."""
        version, public = seen or self.read_side.public_versioned()
        state = {**public, "version": version, "address": self.address,
                 "now": self.now}
        if log:  # no game yet (or one abandoned, no result): no game's log, whatever the idle table said
            narrate = self.narrate
            render = (lambda key, params, to: str(narrate.render(key, params, to).text)) if narrate else None
            gamed = state.get("phase") != "idle" or bool(state.get("result"))
            state["log"] = self.log.lines(str(state.get("lang", "en")), render) if gamed else []
        if (state.get("headline") or {}).get("deadline"):  # a countdown runs: counted on the table's clock
            state["clock"] = self.clock()
        lang = str(state.get("lang", "en"))
        if isinstance(state.get("play"), dict) and state["play"].get("cards"):  # the cards shown, in words
            state["cards"] = self._cards(state["play"]["cards"], state.get("game"), lang)
        if state.get("result"):  # the read side's result stays as it is; its words beside it
            state["verdict"] = self._verdict(state["result"], lang)
        if history:
            state["history"] = [public_play(p, self.export) for p in self.history()]
        return state

    def _verdict(self, result: Mapping[str, Any], lang: str) -> dict[str, Any]:
        """The finished game's result in words, in the table's language: the lines
        said when it ended (``lines``) and each player's final role (``roles``)."""
        narrate = self.narrate
        if narrate is None:
            return {"lines": [], "roles": {}}
        lines = [{"key": s["key"], "text": narrate.render(s["key"], s["params"], lang).text}
                 for s in result.get("says", [])]
        game = result.get("game")
        # a card its last view named (the edition's name, the role it became) by those names; else the role's
        cards = self._cards((result.get("play") or {}).get("cards") or {}, game, lang)
        return {"lines": lines, "roles": {p["name"]: cards.get(p["name"]) or self._word(p["role"], game, lang)
                                          for p in result.get("players", []) if p.get("role")}}

    def _word(self, name: str, game: Any, lang: str) -> str:
        """The game's own word for a role (``role.<game>.<role>``), or the role's name (``name.<role>``)."""
        narrate = self.narrate
        assert narrate is not None
        for key in (f"role.{game}.{name}", f"name.{name}"):
            if key in narrate.lines(lang) or key in narrate.lines("en"):
                return str(narrate.render(key, {}, lang).text)
        return name

    def _cards(self, cards: Mapping[str, Any], game: Any, lang: str) -> dict[str, str]:
        """The cards a game's view shows face up (player → the names of what the card is: its role,
        then the role it became), in the table's words: "Doppelganger (Villager)" (``fmt.card_as``)."""
        narrate = self.narrate
        if narrate is None:
            return {}

        def named(names: list[str]) -> str:
            words = [(w := self._word(str(n), game, lang))[:1].upper() + w[1:] for n in names]
            text = words[-1]
            for word in reversed(words[:-1]):
                text = str(narrate.render("fmt.card_as", {"card": word, "as": text}, lang).text)
            return text

        return {p: named(list(names)) for p, names in cards.items() if names}

    async def api_table(self, request: Request) -> Response:
        return JSONResponse(self.public_state())

    async def api_games(self, request: Request) -> Response:
        """Every game's name and its steps' labels, by language: the page
        names the game, the step and the plays of the history with these."""
        return JSONResponse(self.games)

    async def api_export(self, request: Request) -> Response:
        """Every play, or one evening's (``?evening=N``), shaped as BG Stats'
        push (``companion scores --export json`` too)."""
        evening = request.query_params.get("evening")
        if evening is not None and not (evening.isascii() and evening.isdigit() and len(evening) <= 9):
            return _error(400, "no_evening", "evening is a number (1, 2, …)")  # '²' is a digit int() refuses
        plays = [p for p in self.history() if evening is None or p.get("evening") == int(evening)]
        name = f"plays-evening-{evening}.json" if evening is not None else "plays.json"
        return JSONResponse({"plays": [record(p, games=self.export) for p in plays]},
                            headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def api_events(self, request: Request) -> Response:
        return self._stream(_Client(), sse("table", self.public_state(history=False)))

    def _stream(self, client: _Client, first: str) -> Response:
        self._clients.append(client)
        return stream(client.queue, first, lambda: self._clients.remove(client) if client in self._clients else None)

    async def page(self, request: Request) -> Response:
        """The phone's page, with the players' names as the table says them (a data
        block, never run: ``names``), the same words as the speech and the TV."""
        html = resources.files("web").joinpath("static/index.html").read_text(encoding="utf-8")
        return _html(html.replace("{{csrf}}", self.pairings.csrf_token()).replace("{{names}}", _block(self.names())))

    def names(self) -> dict[str, dict[str, str]]:
        """The players' names as the table says them (``name.<value>`` lines: 赤 for red), by language."""
        narrate, langs = self.narrate, self.games or {"en": {}}
        return {lang: {k.removeprefix("name."): v[0] for k, v in narrate.lines(lang).items() if k.startswith("name.")}
                for lang in langs} if narrate is not None else {}

    async def tv(self, request: Request) -> Response:
        """The TV board: the public state drawn for a room (``static/tv.js``),
        sending nothing.  The page comes with what ``/api/events`` would send
        first, the games' names and the players' (a data block, never run: the CSP holds), and
        its script and style inline, pinned by their hashes: its first frame shows
        the table without waiting for a round trip (``tv_first_paint_ms``)."""
        html, csp = _tv_page()
        # ``clock``: the table's wall clock now, so a TV whose own clock is off still counts to the deadline
        boot = _block({"state": self.public_state(history=False), "games": self.games, "names": self.names(),
                       "clock": self.clock()})
        return _html(html.replace("{{boot}}", boot), csp)

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return Response("not found", 404)
        body = resources.files("web").joinpath(f"static/{name}").read_bytes()
        return Response(body, media_type=STATIC[name], headers={"X-Content-Type-Options": "nosniff"})

    async def qr(self, request: Request) -> Response:
        from web.qr import qr_svg

        return Response(qr_svg(self.address), media_type="image/svg+xml")

    # ---------------------------------------------------------- a seat's page
    def seats(self) -> list[str]:
        """The seats a phone may pair with: those at the table now."""
        return [str(s["id"]) for s in self.read_side.public().get("seats", [])]

    def _seat(self, request: Request) -> str | None:
        return self.pairings.seat_of(request.cookies.get(COOKIE, ""))

    def _refused(self, request: Request, need_seat: bool = True) -> Response | None:
        """Why a POST is refused: a missing or wrong page token (CSRF), a
        foreign origin, or no paired seat."""
        origin = request.headers.get("origin")
        if origin is not None and origin.split("//", 1)[-1] != request.headers.get("host"):
            return _error(403, "csrf", "this page is from another site")
        if not self.pairings.csrf_ok(request.headers.get("x-csrf-token", "")):
            return _error(403, "csrf", "reload the page")
        if need_seat and self._seat(request) is None:
            return _error(403, "not_paired", "pair this phone with a seat first")
        return None

    async def api_pair(self, request: Request) -> Response:
        """A phone asks for a seat; the answer comes when that player's card is
        tapped (the loop's ``paired``), or the window closes.  The secret is
        stored by ``commit``, which the loop calls once the card proved it and
        before it journals or says anything (a store that fails changes nothing)."""
        if (refused := self._refused(request, need_seat=False)) is not None:
            return refused
        body = await read_json(request)
        if isinstance(body, Response):
            return body
        seat = body.get("seat") if isinstance(body, dict) else None
        if not isinstance(seat, str) or seat not in self.seats():
            return _error(400, "no_seat", "pick a seat at the table")
        who = request.client.host if request.client else "?"
        if not self.pair_limit.allow(who):
            return _error(429, "too_many", "too many pairing attempts from this phone; wait a minute")
        nonce = secrets.token_urlsafe(16)
        future: asyncio.Future[Command] = asyncio.get_running_loop().create_future()
        self._pending_pairs[nonce] = future
        claim, secret, before = Claim(), [], self.pairings.snapshot()

        def commit() -> bool:  # on the loop's thread
            nonlocal before
            if not claim.take():
                return False  # this phone stopped waiting
            before = self.pairings.snapshot()
            secret.append(self.pairings.pair(seat))  # durable, or OSError and nothing changed
            return True

        self.inbox.submit(PairRequest(seat, nonce, commit=commit, undo=lambda: self.pairings.restore(before),
                                      claim=claim))
        try:
            try:
                answer = await asyncio.wait_for(asyncio.shield(future), self.pair_window_s + 2.0)
            except TimeoutError:
                if claim.withdraw():
                    return _error(408, "timeout", "no card was tapped in time; try again")
                answer = await asyncio.wait_for(future, TAKEN_S)  # the card proved it just now: its answer comes
        except TimeoutError:
            return _error(504, "no_answer", "the table took the card but has not answered; look at the table")
        finally:
            claim.withdraw()  # however this ends, a card tapped later pairs no phone that is not waiting
            self._pending_pairs.pop(nonce, None)
        if answer.name != "paired":
            error = str(answer.args.get("error", "refused"))
            return _error(PAIR_STATUS.get(error, 409), error, str(answer.args.get("reason", "refused")),
                          answer.args.get("text"))
        self._send(seat, None)  # the replaced phone's private feed ends
        response = JSONResponse({"ok": True, "seat": seat})
        response.set_cookie(COOKIE, secret[0], httponly=True, samesite="strict", path="/",
                            max_age=COOKIE_AGE_S)
        return response

    async def api_me(self, request: Request) -> Response:
        seat = self._seat(request)
        if seat is None:
            return _error(403, "not_paired", "pair this phone with a seat first")
        return JSONResponse({"seat": seat, **self.read_side.private(seat)})

    async def api_me_events(self, request: Request) -> Response:
        seat = self._seat(request)
        if seat is None:
            return _error(403, "not_paired", "pair this phone with a seat first")
        private = self.read_side.private(seat)
        return self._stream(_Client(seat=seat, sent=private), sse("me", private))

    async def _control_body(self, request: Request) -> Any:
        """A control's JSON body, or the Response refusing it: the page's own
        refusals first (``_refused``: its token, its origin, its pairing), then a
        body that is no JSON the door let through (``read_json``)."""
        if (refused := self._refused(request)) is not None:
            return refused
        return await read_json(request)

    async def api_press(self, request: Request) -> Response:
        body = await self._control_body(request)
        if isinstance(body, Response):
            return body
        button = body.get("button") if isinstance(body, dict) else None
        if button not in BUTTONS:
            return _error(400, "no_button", "next, back or repeat")
        seat = str(self._seat(request))
        return await self._control(ButtonPressed(str(button), seat), seat)

    async def api_submit(self, request: Request) -> Response:
        body = await self._control_body(request)
        if isinstance(body, Response):
            return body
        seat = self._seat(request)
        if not isinstance(body, dict) or not isinstance(body.get("field"), str) or "value" not in body:
            return _error(400, "bad_submit", "a field and a value")
        value = body["value"]
        if not (_plain(value) or (isinstance(value, dict) and 0 < len(value) <= 4
                                  and all(isinstance(k, str) and _plain(v) for k, v in value.items()))):
            return _error(400, "bad_submit", "a number, a choice, or a small form of them (a gift)")
        return await self._control(Submit(str(seat), body["field"], value), str(seat))

    async def api_name(self, request: Request) -> Response:
        """The paired seat's display name (``{"name": "Aki"}``): journaled by the
        table as ``named`` housekeeping, which refuses (409, the sentence in the
        table's language) an empty, too long or control-laden name, or another
        seat's; here only what is no text at all (the door has limited its size)."""
        body = await self._control_body(request)
        if isinstance(body, Response):
            return body
        seat = self._seat(request)
        name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(name, str):
            return _error(400, "bad_name", "a display name (a short text)")
        return await self._control(Housekeeping(NAMED, {"seat": str(seat), "name": name}), str(seat))

    async def _control(self, item: Any, seat: str) -> Response:
        """Submit ``item`` the way a tap goes, and answer with what the table
        hands back for it alone (``PageInput.reply``): its verdict — accepted
        only once journaled, refused with the reason —, what it told this seat,
        and this seat's page after it (core.messages.Answer).  A control the
        busy table has not taken within ``answer_s`` is withdrawn, and the page
        told so: what the page is told is what happened."""
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()

        def settle(answer: Answer) -> None:  # on the web's thread
            if not future.done():
                future.set_result(answer)

        control = PageInput(item, seat, lambda answer: self.serving.hand_over(settle, answer))  # on the loop's thread
        self.inbox.submit(control)
        try:
            try:
                answer = await asyncio.wait_for(asyncio.shield(future), self.answer_s)
            except TimeoutError:
                if control.claim.withdraw():
                    return _error(504, "too_late", "the table was busy: nothing was done; try again")
                answer = await asyncio.wait_for(future, TAKEN_S)  # taken: its answer is coming
        except TimeoutError:
            return _error(504, "no_answer", "the table took it but has not answered; look at the table")
        body = {"ok": answer.ok, "reason": answer.reason, "key": answer.key, "text": answer.text,
                "told": list(answer.told), "me": dict(answer.me)}
        return JSONResponse(body, status_code=200 if answer.ok else 409)

    # --------------------------------------------------------------- running
    def start(self, timeout: float = 10.0, sock: socket.socket | None = None) -> None:
        """Serve on a registered thread; returns once the socket listens (or raises
        why not: a taken port, an address this machine does not have).  ``sock``:
        one already bound to host and port (the daemon binds first, to know
        whether the pages can be on before the table is told)."""
        try:
            port = self.serving.start(self.host, self.port, "web", self.stop, sock, timeout)
        except OSError as e:
            raise OSError(f"the web pages could not listen on {self.host}:{self.port}"
                          + (f" ({e})" if str(e) else "")) from None
        if self.port == 0:  # a test asked for any free port: learn which
            self.port = port
            self.address = f"http://{self.host}:{self.port}/"

    def stop(self) -> None:
        self.serving.stop(self._end_streams)

    def close(self) -> None:
        """As a router device: the app closing stops the pages (``stop``)."""
        self.stop()

    def _end_streams(self) -> None:
        for client in list(self._clients):
            self._put(client, None)


CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'"


def public_play(play: Mapping[str, Any], export: Mapping[str, ExportGame] | None = None) -> dict[str, Any]:
    """A finished play as anyone may see it (everything in it was said at the
    table), with its BG Stats link; ``playDate`` stays UTC: each page shows it
    in its phone's local time."""
    shown = {k: play[k] for k in ("id", "evening", "game", "rules", "playDate", "durationMin", "players") if k in play}
    return {**shown, "bgstats": push_url(play, games=export)}


@functools.cache
def _tv_page() -> tuple[str, str]:
    """The TV board's HTML with tv.js and tv.css inline, and the CSP that lets
    exactly those two run (their SHA-256) and nothing else inline."""
    static = resources.files("web").joinpath("static")
    html, js, css = (static.joinpath(n).read_text(encoding="utf-8") for n in ("tv.html", "tv.js", "tv.css"))

    def pin(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    html = (html.replace('<link rel="stylesheet" href="/static/tv.css">', f"<style>{css}</style>")
            .replace('<script src="/static/tv.js"></script>', f"<script>{js}</script>"))
    csp = CSP.replace("style-src 'self'", f"style-src {pin(css)}").replace("script-src 'self'", f"script-src {pin(js)}")
    return html, csp


def _block(data: Any) -> str:
    """JSON for a page's data block (``<script type="application/json">``): no ``</script>`` inside."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _html(html: str, csp: str = CSP) -> Response:
    return Response(html, media_type="text/html; charset=utf-8",
                    headers={"Cache-Control": "no-store", "Content-Security-Policy": csp,
                             "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"})


def _plain(value: Any) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _error(status: int, code: str, reason: str, text: Any = None) -> Response:
    """A refusal: ``reason`` in plain words; ``text``, where the table has one,
    the sentence the table would say, in its language (what the page shows)."""
    body = {"ok": False, "error": code, "reason": reason}
    if text:
        body["text"] = str(text)
    return JSONResponse(body, status_code=status)


async def read_json(request: Request) -> Any:
    """The request's JSON, or the 400 to answer (the door has limited its size
    already): not JSON, not UTF-8, or nested deeper than the parser recurses."""
    try:
        return json.loads(await request.body())
    except (ValueError, RecursionError):
        return _error(400, "bad_json", "the request is not the JSON a page sends")


__all__ = ["LOG", "WatchedReadSide", "WebServer", "public_play", "read_json", "sse"]
