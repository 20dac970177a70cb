"""The panel with simulated fingers: the real gpiozero ``Panel`` on
MockFactory pins, plus ``press`` and ``hold``, which drive those pins as a
person would.  Simulations (``companion simulate``, ``run --simulate``), the
benchmarks and the tests use it; the Pi's panel has no such methods.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from companion.core.messages import Inbox
from hardware.panel import Panel, PanelPins, mock_factory


class SimulatedPanel(Panel):
    def __init__(self, inbox: Inbox, pins: PanelPins | None = None,
                 pin_factory: Any = None, bounce_s: float | None = None,
                 hold_back_s: float = 2.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._hold_reported = threading.Event()
        super().__init__(inbox, pins or PanelPins(), pin_factory=pin_factory or mock_factory(), bounce_s=bounce_s,
                         hold_back_s=hold_back_s, clock=clock)

    def _held_back(self) -> None:
        super()._held_back()
        if self._state["back"].held:
            self._hold_reported.set()

    def press(self, name: str) -> None:
        """Press and release a button on the mock pins.  The
        pin stays low a little longer than the bounce time, as a finger
        would, or the release would count as bounce."""
        self._settle(name)
        pin = self.buttons[name].pin
        pin.drive_low()
        if self.bounce_s:
            time.sleep(self.bounce_s * 1.2)
        pin.drive_high()

    def hold(self, name: str, seconds: float) -> None:
        """Hold a button down for ``seconds``, then let go.
        Holding ``back`` for at least ``hold_back_s`` waits (bounded) until
        gpiozero's hold thread has reported ``hold-back`` before releasing,
        so a loaded machine cannot turn a hold into a plain ``back``."""
        self._settle(name)
        pin = self.buttons[name].pin
        self._hold_reported.clear()
        pin.drive_low()
        deadline = time.monotonic() + max(seconds, self.bounce_s * 1.2)
        if name == "back" and seconds >= self.hold_back_s:
            deadline = max(deadline, time.monotonic() + self.hold_back_s)
            # Wait until hold-back has been handed on, not just noticed, so the
            # next simulated input cannot overtake it.
            self._hold_reported.wait(deadline + 5.0 - time.monotonic())
        remaining = deadline - time.monotonic()
        if remaining > 0:
            time.sleep(remaining)
        pin.drive_high()

    def _settle(self, name: str) -> None:
        # A finger cannot press again inside the bounce time of its last
        # release; back-to-back simulated presses must not look like bounce.
        wait = self._state[name].last_edge + self.bounce_s * 1.2 - self._clock()
        if wait > 0:
            time.sleep(wait)

