"""The router: every output of the table goes to the sinks of its audience.

Sources (the reader, the panel, the web) feed the loop; the loop runs the
pure table and hands what comes out here, already journaled.  Each sink
subscribes to the audiences it may receive (DESIGN.md, *Audiences*):

    TABLE          the speaker, the panel's LEDs and buzzer, the public page, the log
    player:<id>    that player's page (and the log)
    LOG            the log only

Two kinds of message travel: ``Event`` — a log event (``say``, ``accepted``,
``formation``, ``tell``…) with its audience and, for lines, the rendered
``line`` — and ``Command`` — something a device does that is no event
(``feedback``: the ok/error LED and beep; ``sound``: the night's ambience).

The read side lives here too: ``ReadSide`` keeps the latest public snapshot
and each seat's private one, replaced whole by the loop after each input, so
a page reads them from any thread without ever making the loop wait.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from companion.core.events import LOG, TABLE

ALL = "*"


def seat_audience(player_id: str) -> str:
    """The audience of the player seated as ``player_id`` (their page)."""
    return f"player:{player_id}"


@dataclass(frozen=True)
class Event:
    audience: str  # TABLE | LOG | seat_audience(id)
    fields: Mapping[str, Any]  # the log event: {"t", "event", ...}, JSON-ready
    line: Any = None  # the rendered line of a ``say`` or ``tell``

    @property
    def name(self) -> str:
        return str(self.fields["event"])

    @property
    def public(self) -> bool:
        return self.audience == TABLE


@dataclass(frozen=True)
class Command:
    name: str  # "feedback" | "sound"
    args: Mapping[str, Any] = field(default_factory=dict)
    audience: str = TABLE


Message = Event | Command


class Sink(Protocol):
    def receive(self, message: Message) -> None: ...


class Router:
    def __init__(self) -> None:
        self._subscribers: list[tuple[frozenset[str] | None, Callable[[Message], None]]] = []

    def subscribe(self, receive: Callable[[Message], None], audiences: str | Iterable[str] = ALL) -> None:
        """``receive`` gets every message for ``audiences`` (``ALL``: every one)."""
        wanted = None if audiences == ALL else frozenset([audiences] if isinstance(audiences, str) else audiences)
        self._subscribers.append((wanted, receive))

    def unsubscribe(self, receive: Callable[[Message], None]) -> None:
        self._subscribers = [(a, r) for a, r in self._subscribers if r != receive]

    def publish(self, message: Message) -> None:
        for wanted, receive in list(self._subscribers):
            if wanted is None or message.audience in wanted:
                receive(message)


# ------------------------------------------------------------------ sinks
class LogSink:
    """Every event, as one JSON-ready dict, to the log (the simulation's
    stdout, the daemon's journal); commands are no events."""

    def __init__(self, log: Callable[[dict[str, Any]], None]) -> None:
        self.log = log

    def receive(self, message: Message) -> None:
        if isinstance(message, Event):
            self.log(dict(message.fields))


class SpeakerSink:
    """The table's lines and the ambience, to the voice."""

    def __init__(self, voice: Any) -> None:
        self.voice = voice

    def receive(self, message: Message) -> None:
        if isinstance(message, Event) and message.name == "say" and message.public:
            self.voice.speak(message.line)
        elif isinstance(message, Command) and message.name == "sound":
            self.voice.ambience(str(message.args["sound"]), bool(message.args["on"]))


class PanelSink:
    """Accepted and refused inputs, to the LEDs and the buzzer."""

    def __init__(self, panel: Any) -> None:
        self.panel = panel

    def receive(self, message: Message) -> None:
        if isinstance(message, Command) and message.name == "feedback":
            ok = bool(message.args["ok"])
            self.panel.led("ok" if ok else "error", True, flash=True)
            self.panel.beep(long=not ok)
        elif isinstance(message, Command) and message.name == "led":
            self.panel.led(str(message.args["led"]), bool(message.args["on"]))


class ReadSide:
    """The latest snapshots for the pages: replaced whole, read from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._public: dict[str, Any] = {}
        self._private: dict[str, dict[str, Any]] = {}
        self.version = 0

    def update(self, public: dict[str, Any], private: Mapping[str, dict[str, Any]]) -> None:
        with self._lock:
            self._public, self._private = public, dict(private)
            self.version += 1

    def public(self) -> dict[str, Any]:
        with self._lock:
            return self._public

    def private(self, player_id: str) -> dict[str, Any]:
        with self._lock:
            return self._private.get(player_id, {})


__all__ = ["ALL", "LOG", "TABLE", "Command", "Event", "LogSink", "Message", "PanelSink", "ReadSide",
           "Router", "Sink", "SpeakerSink", "seat_audience"]
