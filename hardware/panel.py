"""The control panel: three big buttons, three LEDs and a buzzer, as gpiozero
devices.  On a Pi gpiozero picks its own pin factory (lgpio on every Pi OS
bookworm board, Pi 5 included; RPi.GPIO only if lgpio is missing); in
simulation and tests it runs on gpiozero's MockFactory, so the same device
code is exercised with no Pi.  Nothing here imports RPi.GPIO or lgpio.

Default pins (BCM numbers, physical header pin in brackets) keep clear of the
PN532 UART (GPIO14/15), I2C (GPIO2/3), SPI0 (GPIO7-11), the HAT ID EEPROM
(GPIO0/1) and I2S audio amplifiers (GPIO18-21):

    next   17 [11]   back  27 [13]   repeat 22 [15]   buttons to GND, internal pull-ups
    ready   5 [29]   ok     6 [31]   error  13 [33]   LEDs via 330 ohm to GND
    buzzer 16 [36]                                    active buzzer (transistor if > ~15 mA)

Buttons are debounced here, in software, the same way on every pin factory
(MockFactory ignores ``bounce_time``; RPi.GPIO's ``bouncetime`` can swallow
the release edge and leave a button "stuck").  ``back`` is reported when it
is released; held for ``hold_back_s`` it is reported as ``hold-back`` while
still held, and its release then reports nothing.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from companion import threads
from companion.core import settings
from companion.core.events import ButtonPressed
from companion.core.messages import Inbox
from companion.core.settings import Field, Problem, Section

BUTTON_NAMES = ("next", "back", "repeat")
LED_NAMES = ("ready", "ok", "error")
HOLD_BACK = "hold-back"

# BCM pins a typical build uses for something else; a panel pin on one of
# them works but may fight that function, so ``pin_clashes`` names it.
RESERVED_PINS: dict[int, str] = {
    0: "HAT ID EEPROM (ID_SD)", 1: "HAT ID EEPROM (ID_SC)",
    2: "I2C SDA", 3: "I2C SCL",
    7: "SPI0 CE1", 8: "SPI0 CE0", 9: "SPI0 MISO", 10: "SPI0 MOSI", 11: "SPI0 SCLK",
    14: "UART TX (PN532 reader)", 15: "UART RX (PN532 reader)",
    18: "I2S BCLK (audio amp)", 19: "I2S LRCLK (audio amp)", 20: "I2S DIN", 21: "I2S DOUT (audio amp)",
}


@dataclass(frozen=True)
class PanelPins:
    next: int = 17
    back: int = 27
    repeat: int = 22
    ready: int = 5
    ok: int = 6
    error: int = 13
    buzzer: int = 16


def _pins_apart(pins: Mapping[str, Any]) -> Problem | None:
    """Every button, LED and the buzzer needs a GPIO of its own."""
    seen: dict[int, str] = {}
    for name, pin in pins.items():
        if pin in seen:
            return Problem((seen[pin], name), f"are both GPIO{pin}: each needs a pin of its own")
        seen[pin] = name
    return None


_pin = settings.whole(0, 27, "a whole BCM pin number")
_PIN_DOCS = {
    "next": "BCM pin of the next button (to GND; internal pull-up)",
    "back": "BCM pin of the back button",
    "repeat": "BCM pin of the repeat button",
    "ready": "BCM pin of the ready LED",
    "ok": "BCM pin of the ok LED",
    "error": "BCM pin of the error LED",
    "buzzer": "BCM pin of the buzzer",
}

# The ``panel:`` section of the config schema (companion.app.config adds the backend).
SETTINGS = {
    "pins": Section({f.name: Field(f.default, _pin, _PIN_DOCS[f.name]) for f in fields(PanelPins)},
                    check=_pins_apart),
    "bounce_s": Field(0.05, settings.optional(settings.number(0, 1)),
                      "a button's contacts settle within this; shorter presses are ignored"),
    "hold_back_s": Field(2.0, settings.number(0.3, 10),
                         "hold back this long to start the step again (or abandon a game that has taken nothing); "
                         "asks first: next confirms, back keeps"),
}


@dataclass(frozen=True)
class PanelConfig:
    pins: PanelPins = PanelPins()
    bounce_s: float | None = 0.05
    hold_back_s: float = 2.0

    @classmethod
    def from_checked(cls, section: Mapping[str, Any]) -> PanelConfig:
        """The ``panel:`` section as the config loader checked it."""
        pins = PanelPins(**{f.name: section["pins"][f.name] for f in fields(PanelPins)})
        bounce = section["bounce_s"]
        return cls(pins=pins, bounce_s=None if bounce is None else float(bounce),
                   hold_back_s=float(section["hold_back_s"]))

    @classmethod
    def from_dict(cls, section: Mapping[str, Any] | None) -> PanelConfig:
        """From a plain mapping (missing keys take the defaults), checked by
        the schema's own rules: ``SettingError`` (a ValueError) names the key."""
        return cls.from_checked(settings.checked(SETTINGS, section, "panel"))


def pin_clashes(pins: PanelPins) -> list[str]:
    """Plain sentences for each panel pin that sits on a commonly used function."""
    return [
        f"{f.name} is on GPIO{getattr(pins, f.name)}, which is {RESERVED_PINS[getattr(pins, f.name)]}"
        for f in fields(pins)
        if getattr(pins, f.name) in RESERVED_PINS
    ]


def is_raspberry_pi(model_file: Path = Path("/proc/device-tree/model")) -> bool:
    """True on a Raspberry Pi (the device tree names the board)."""
    try:
        return "raspberry pi" in model_file.read_bytes().decode("ascii", "replace").lower()
    except OSError:
        return False


class _ButtonState:
    """What the debouncer believes about one button."""

    __slots__ = ("down", "held", "last_edge")

    def __init__(self) -> None:
        self.down = False  # an accepted press that has not been released
        self.held = False  # ...and it has already been reported as held
        self.last_edge = float("-inf")  # when the last accepted edge happened


class Panel:
    """A source like every other (``companion.core.messages.Inbox``): each
    button is submitted to ``inbox`` as a ``ButtonPressed`` from gpiozero's
    threads (the loop's queue makes that safe); names are ``next``, ``back``,
    ``repeat`` and ``hold-back``.  ``led``/``beep`` are requests from the loop.

    Debouncing: an edge less than ``bounce_s`` after the last accepted edge
    of the same button is contact bounce and is ignored.  ``next`` and
    ``repeat`` are reported on the press; ``back`` on the release (or as
    ``hold-back`` once held ``hold_back_s``), so a hold never also undoes.
    """

    def __init__(self, inbox: Inbox, pins: PanelPins = PanelPins(),
                 pin_factory: Any = None, bounce_s: float | None = None,
                 hold_back_s: float = 2.0, clock: Callable[[], float] = time.monotonic) -> None:
        from gpiozero import LED, Button, Buzzer  # lazy: start-up cost only where used

        self.pins = pins
        self.factory = pin_factory
        self.bounce_s = float(bounce_s or 0.0)
        self.hold_back_s = float(hold_back_s)
        self._inbox = inbox
        self._clock = clock
        self._lock = threading.Lock()
        # close() against the output worker: a request is applied whole before
        # the pins go, and none after (a blink started on a closed LED dies on
        # its gpiozero thread with GPIODeviceClosed, a traceback in the log).
        self._applying = threading.Lock()
        self._closing = threading.Lock()
        self._closed = False
        self._state = {name: _ButtonState() for name in BUTTON_NAMES}
        self._outbox: queue.Queue[Any] = queue.Queue()
        self._worker: threading.Thread | None = threads.spawn(
            "panel-output", self._apply_requests, stop=lambda: self._outbox.put(None))
        self.buttons: dict[str, Any] = {}
        self.leds: dict[str, Any] = {}
        self.buzzer: Any = None
        try:
            for name in BUTTON_NAMES:
                # bounce_time stays None: debouncing is ours (see module doc).
                button = Button(getattr(pins, name), pull_up=True, bounce_time=None,
                                hold_time=self.hold_back_s, hold_repeat=False, pin_factory=pin_factory)
                self.buttons[name] = button
                button.when_pressed = (lambda n: lambda: self._edge(n, True))(name)
                button.when_released = (lambda n: lambda: self._edge(n, False))(name)
            self.buttons["back"].when_held = self._held_back
            for name in LED_NAMES:
                self.leds[name] = LED(getattr(pins, name), pin_factory=pin_factory)
            self.buzzer = Buzzer(pins.buzzer, pin_factory=pin_factory)
        except BaseException:
            self.close()  # give back the pins already claimed
            raise

    @classmethod
    def from_config(cls, inbox: Inbox, config: PanelConfig | Mapping[str, Any] | None,
                    pin_factory: Any = None) -> Panel:
        """``config``: as the config loader made it, or a plain mapping (checked here)."""
        if not isinstance(config, PanelConfig):
            config = PanelConfig.from_dict(config)
        return cls(inbox, config.pins, pin_factory=pin_factory, bounce_s=config.bounce_s,
                   hold_back_s=config.hold_back_s)

    # ------------------------------------------------------------ buttons
    def _edge(self, name: str, pressed: bool) -> None:
        now = self._clock()
        report: list[str] = []
        with self._lock:
            st = self._state[name]
            if now - st.last_edge < self.bounce_s:
                return  # contact bounce
            if pressed:
                if st.down:
                    # The release edge fell inside the bounce window (a tap
                    # shorter than bounce_s): that press is over now.
                    report += self._release(name, st)
                st.down, st.held, st.last_edge = True, False, now
                if name != "back":
                    report.append(name)
            elif st.down:
                st.last_edge = now
                report += self._release(name, st)
        for r in report:
            self._inbox.submit(ButtonPressed(r))

    @staticmethod
    def _release(name: str, st: _ButtonState) -> list[str]:
        was_held = st.held
        st.down = st.held = False
        return ["back"] if name == "back" and not was_held else []

    def _held_back(self) -> None:
        with self._lock:
            st = self._state["back"]
            # Only a press we accepted and have not yet reported counts; the
            # lock makes "held" and "released" exclusive when they race.
            if not st.down or st.held:
                return
            st.held = True
        self._inbox.submit(ButtonPressed(HOLD_BACK))

    # ------------------------------------------------------------ outputs
    # LED and buzzer requests come from the table loop, which must never wait
    # for hardware: gpiozero stops and joins a blink's thread before the next
    # call (milliseconds), so one worker thread here applies the requests in
    # order and the loop only enqueues.
    def led(self, name: str, on: bool, flash: bool = False) -> None:
        if name not in self.leds:
            raise KeyError(f"no LED {name!r} (LEDs: {', '.join(LED_NAMES)})")
        self._request(self._apply_led, name, on, flash)

    def beep(self, long: bool = False) -> None:
        self._request(self._apply_beep, long)

    def flush(self, timeout: float = 5.0) -> None:
        """Wait until every LED/buzzer request so far has been applied."""
        if self._worker is None:  # closed
            return
        done = threading.Event()
        self._request(done.set)
        done.wait(timeout)

    def _request(self, fn: Callable[..., None], *args: Any) -> None:
        self._outbox.put((fn, args))

    def _apply_requests(self) -> None:
        while True:
            item = self._outbox.get()
            if item is None:
                return
            fn, args = item
            with self._applying:
                if self._closed:
                    return
                try:
                    fn(*args)
                except Exception:  # a failing device must not stop the feedback thread
                    pass

    def _apply_led(self, name: str, on: bool, flash: bool) -> None:
        led = self.leds[name]
        if flash:
            led.blink(on_time=0.15, off_time=0.15, n=1, background=True)
        elif on:
            led.on()
        else:
            led.off()

    def _apply_beep(self, long: bool) -> None:
        t = 0.4 if long else 0.05
        self.buzzer.beep(on_time=t, off_time=0.01, n=1, background=True)

    def state(self) -> dict[str, bool]:
        self.flush()
        return {name: bool(led.value) for name, led in self.leds.items()}

    def close(self) -> None:
        """Release every pin (LEDs and buzzer off first); idempotent, and a
        second close at the same time waits for the first.  Requests made
        after it are dropped; no device thread outlives its pin."""
        with self._closing:
            if self._closed:
                return
            worker, self._worker = self._worker, None
            if worker is not None:
                self._outbox.put(None)
                worker.join(timeout=2.0)
            with self._applying:  # a worker late past the join finishes its request first
                self._closed = True
            for button in self.buttons.values():
                # Each button's hold thread polls every 0.1 s, and gpiozero's close waits for it
                # to notice, one button after the other: tell them all first, and wake them.
                hold = getattr(button, "_hold_thread", None)
                if hold is not None:
                    hold.stopping.set()
                    hold.holding.set()
            for dev in [*self.buttons.values(), *self.leds.values(), self.buzzer]:
                if dev is not None:
                    dev.close()


def mock_factory() -> Any:
    from gpiozero.pins.mock import MockFactory

    return MockFactory()
