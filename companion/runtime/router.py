"""The router: every output of the table goes to the devices that want it.

Sources (the reader, the panel, the pages) feed the loop; the loop runs the
pure table and hands what comes out here, already journaled, as the core's
``Event`` and ``Command`` messages (``companion.core.messages``).  Each
output device is a ``Device``: it says what it ``wants`` (audiences and
kinds) and is attached by that alone; the three below adapt the parts the
wiring hands in (the log, the voice, the panel) to that shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from companion.core.events import TABLE
from companion.core.messages import ALL, Command, Device, Event, Message, Wants, wants


class Router:
    def __init__(self) -> None:
        self._subscribers: list[tuple[Wants, Callable[[Message], None]]] = []

    def attach(self, device: Device) -> None:
        """``device`` gets every message it wants, in the order attached."""
        self._subscribers.append((device.wants, device.receive))

    def subscribe(self, receive: Callable[[Message], None], audiences: str | Iterable[str] = ALL,
                  kinds: Iterable[str] | None = None) -> None:
        """``receive`` gets every message for ``audiences`` (``ALL``: every one)
        of ``kinds`` (None: every one): a listener that is no device (tests, benches)."""
        self._subscribers.append((wants(audiences, kinds), receive))

    def unsubscribe(self, receive: Callable[[Message], None]) -> None:
        self._subscribers = [(w, r) for w, r in self._subscribers if r != receive]

    def publish(self, message: Message) -> None:
        for wanted, receive in list(self._subscribers):
            if message in wanted:
                receive(message)


# ------------------------------------------------------------------ adapters
class Speaker(Protocol):
    """What the speaker adapter needs of a voice (``voice.base.Voice``)."""

    def speak(self, line: Any) -> None: ...  # a voice.base.Line, which the runtime does not import

    def ambience(self, sound: str, on: bool) -> None: ...

    def close(self) -> None: ...


class Lights(Protocol):
    """What the panel adapter needs of a panel (``hardware.panel.Panel``)."""

    def led(self, name: str, on: bool, flash: bool = False) -> None: ...

    def beep(self, long: bool = False) -> None: ...

    def close(self) -> None: ...


class LogSink:
    """Every event, as one JSON-ready dict, to the log (the simulation's
    stdout, the daemon's journal); commands are no events.  The log belongs
    to whoever handed it in: closing lets go of nothing."""

    wants = Wants()

    def __init__(self, log: Callable[[dict[str, Any]], None]) -> None:
        self.log = log

    def receive(self, message: Message) -> None:
        if isinstance(message, Event):
            self.log(dict(message.fields))

    def close(self) -> None:
        pass


class SpeakerSink:
    """The table's lines and the ambience, to the voice."""

    wants = wants(TABLE, ("say", "sound"))

    def __init__(self, voice: Speaker) -> None:
        self.voice = voice

    def receive(self, message: Message) -> None:
        if isinstance(message, Event) and message.name == "say" and message.public:
            self.voice.speak(message.line)
        elif isinstance(message, Command) and message.name == "sound":
            self.voice.ambience(str(message.args["sound"]), bool(message.args["on"]))

    def close(self) -> None:
        self.voice.close()


class PanelSink:
    """Accepted and refused inputs, and the reader's state, to the LEDs and the buzzer."""

    wants = wants(TABLE, ("feedback", "led"))

    def __init__(self, panel: Lights) -> None:
        self.panel = panel

    def receive(self, message: Message) -> None:
        if isinstance(message, Command) and message.name == "feedback":
            ok = bool(message.args["ok"])
            self.panel.led("ok" if ok else "error", True, flash=True)
            self.panel.beep(long=not ok)
        elif isinstance(message, Command) and message.name == "led":
            self.panel.led(str(message.args["led"]), bool(message.args["on"]))

    def close(self) -> None:
        self.panel.close()
