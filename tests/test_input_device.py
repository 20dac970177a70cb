"""A new input device is one plan too (docs/develop/adding-a-device.md, "An input"):
a foot pedal, made from the parts by one ``DevicePlan`` like the LED ring of
tests/test_wiring.py, hands the loop's inbox what it read from its own thread, as
the panel's buttons and the reader do; the table cannot tell its ``next`` from the
panel's, and it closes with the app."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from companion.app import config
from companion.app.wiring import DEVICES, DevicePlan, Parts, build, simulated
from companion.core.events import ButtonPressed
from companion.core.messages import Message, Wants
from companion.runtime.clock import VirtualClock
from hardware.sim_reader import SimulatedReader
from voice.base import RecordingVoice


class Pedal:
    """A stand-in for a foot pedal that means ``next``: it hears nothing of the
    table (an input only) and puts each press into the inbox from its own thread."""

    wants = Wants(audiences=frozenset())  # no audience: the router hands it nothing

    def __init__(self, submit: Callable[[Any], None]) -> None:
        self.submit = submit
        self.closed = 0

    def step_on(self) -> None:
        reading = threading.Thread(target=lambda: self.submit(ButtonPressed("next")), name="pedal")
        reading.start()
        reading.join(5)

    def receive(self, message: Message) -> None:
        raise AssertionError(f"an input device wants nothing, yet heard {message}")

    def close(self) -> None:
        self.closed += 1


def test_a_new_input_device_is_one_plan_and_its_press_is_the_tables(tmp_path: Path) -> None:
    cfg = config.load([], {"panel": {"backend": "mock"}})
    pedals: list[Pedal] = []

    def make_pedal(parts: Parts) -> Pedal:
        assert parts.loop is not None  # the parts a device is made from include the loop's inbox
        pedals.append(Pedal(parts.loop.submit))
        return pedals[-1]

    events: list[dict[str, Any]] = []
    app = build(cfg, clock=VirtualClock(), log=events.append, voice=RecordingVoice(), reader=SimulatedReader(),
                journal_path=tmp_path / "journal.sqlite", devices=[*DEVICES, DevicePlan("pedal", make_pedal)])
    try:
        assert list(app.sinks)[-1] == "pedal"
        app.loop.start()
        app.reader.start(app.loop)
        app.loop.pump()
        reader, panel = simulated(app)
        (pedal,) = pedals
        pedal.step_on()  # before a game card: refused, said, as the panel's next is
        app.loop.pump()
        panel.press("next")
        app.loop.pump()
        refused = [(e["event"], e.get("input"), e.get("key")) for e in events if e["event"] in ("rejected", "say")]
        assert refused[1:] == [("rejected", "next", None), ("say", None, "refuse.tap_game_card")] * 2
        for tag in ("game/seven-knights", "player/red", "player/blue", "player/green"):
            reader.present(text=tag)
            app.loop.pump()
        pedal.step_on()  # all seated: the pedal's next starts the game
        app.loop.pump()
        assert [e["players"] for e in events if e["event"] == "game_started"] == [["red", "blue", "green"]]
    finally:
        app.close()
    assert pedal.closed == 1
