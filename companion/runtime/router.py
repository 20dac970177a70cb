"""The router: every output of the table goes to the sinks of its audience.

Sources (the reader, the panel, the pages) feed the loop; the loop runs the
pure table and hands what comes out here, already journaled, as the core's
``Event`` and ``Command`` messages (``companion.core.messages``).  Each sink
subscribes to the audiences it may receive; the three below adapt the
devices the wiring hands in (the log, the voice, the panel).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from companion.core.messages import ALL, Command, Event, Message


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
    """Accepted and refused inputs, and the reader's state, to the LEDs and the buzzer."""

    def __init__(self, panel: Any) -> None:
        self.panel = panel

    def receive(self, message: Message) -> None:
        if isinstance(message, Command) and message.name == "feedback":
            ok = bool(message.args["ok"])
            self.panel.led("ok" if ok else "error", True, flash=True)
            self.panel.beep(long=not ok)
        elif isinstance(message, Command) and message.name == "led":
            self.panel.led(str(message.args["led"]), bool(message.args["on"]))
