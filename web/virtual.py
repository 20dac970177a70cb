"""The virtual table (``companion run --simulate --web``): the simulated
reader's components as buttons and the panel's LEDs, so a whole game can be
played in a browser with no hardware.  Only in a simulation: a real table's
page must not let a phone "tap" a card nobody laid on the reader.

A virtual tap is the simulated reader seeing a tag — the same path as a
card on a real reader, so every rule about it (refusals, pairing proofs,
night silence) holds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

BUTTONS = ("next", "back", "repeat")


def virtual_routes(reader: Any, panel: Any, components: list[str]) -> Callable[[Any], list[Route]]:
    known = frozenset(components)

    def routes(server: Any) -> list[Route]:
        async def describe(request: Request) -> Response:
            return JSONResponse({"components": components, "leds": panel.state(), "buttons": list(BUTTONS)})

        async def tap(request: Request) -> Response:
            if (refused := server._refused(request, need_seat=False)) is not None:
                return refused
            body = await _body(request)
            identity = body.get("identity") if isinstance(body, dict) else None
            if identity not in known:
                return JSONResponse({"ok": False, "reason": "no such component"}, status_code=400)
            reader.present(text=identity)
            return JSONResponse({"ok": True})

        async def press(request: Request) -> Response:  # the panel's own buttons, unpaired
            if (refused := server._refused(request, need_seat=False)) is not None:
                return refused
            body = await _body(request)
            button = body.get("button") if isinstance(body, dict) else None
            if button not in BUTTONS:
                return JSONResponse({"ok": False, "reason": "next, back or repeat"}, status_code=400)
            panel.press(button)
            return JSONResponse({"ok": True})

        return [Route("/api/virtual", describe), Route("/api/virtual/tap", tap, methods=["POST"]),
                Route("/api/virtual/press", press, methods=["POST"])]
    return routes


async def _body(request: Request) -> Any:
    try:
        return await request.json()
    except ValueError:
        return None
