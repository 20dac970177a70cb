"""The virtual table (``companion run --simulate --web``): the simulated
reader's components as buttons, the panel's three buttons (``back`` pressed
or held) and its LEDs, and the reader's cable (unplug, plug), so a whole game
can be played in a browser with no hardware.  Only in a simulation: a real table's
page must not let a phone "tap" a card nobody laid on the reader.

A virtual tap is the simulated reader seeing a tag — the same path as a
card on a real reader, so every rule about it (refusals, pairing proofs,
night silence) holds."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from web.server import read_json

BUTTONS = ("next", "back", "repeat")


def virtual_routes(reader: Any, panel: Any, components: list[str]) -> Callable[[Any], list[Route]]:
    known = frozenset(components)

    def routes(server: Any) -> list[Route]:
        async def describe(request: Request) -> Response:
            return JSONResponse({"components": components, "leds": panel.state(), "buttons": list(BUTTONS),
                                 "hold_back_s": panel.hold_back_s, "plugged": bool(reader.connected)})

        async def tap(request: Request) -> Response:
            if (refused := server._refused(request, need_seat=False)) is not None:
                return refused
            body = await read_json(request)
            if isinstance(body, Response):
                return body
            identity = body.get("identity") if isinstance(body, dict) else None
            if identity not in known:
                return JSONResponse({"ok": False, "reason": "no such component"}, status_code=400)
            if not reader.present(text=identity):
                return JSONResponse({"ok": False, "reason": "the reader is unplugged"}, status_code=409)
            return JSONResponse({"ok": True})

        async def press(request: Request) -> Response:
            """The panel's own buttons, unpaired: a press, or back held (restart
            the step, or leave the game) — on the mock pins, as a finger would,
            on a worker thread: a held button must not stall the pages."""
            if (refused := server._refused(request, need_seat=False)) is not None:
                return refused
            body = await read_json(request)
            if isinstance(body, Response):
                return body
            button = body.get("button") if isinstance(body, dict) else None
            if button not in BUTTONS:
                return JSONResponse({"ok": False, "reason": "next, back or repeat"}, status_code=400)
            if body.get("hold"):
                if button != "back":
                    return JSONResponse({"ok": False, "reason": "only back is held"}, status_code=400)
                await asyncio.to_thread(panel.hold, "back", panel.hold_back_s * 1.5)
            else:
                await asyncio.to_thread(panel.press, button)
            return JSONResponse({"ok": True})

        async def cable(request: Request) -> Response:
            """Take the reader away or give it back (the loop says so, as it would
            of a real reader's cable)."""
            if (refused := server._refused(request, need_seat=False)) is not None:
                return refused
            body = await read_json(request)
            if isinstance(body, Response):
                return body
            plugged = body.get("plugged") if isinstance(body, dict) else None
            if not isinstance(plugged, bool):
                return JSONResponse({"ok": False, "reason": "plugged: true or false"}, status_code=400)
            (reader.plug if plugged else reader.unplug)()
            return JSONResponse({"ok": True, "plugged": plugged})

        return [Route("/api/virtual", describe), Route("/api/virtual/tap", tap, methods=["POST"]),
                Route("/api/virtual/press", press, methods=["POST"]),
                Route("/api/virtual/reader", cable, methods=["POST"])]
    return routes

