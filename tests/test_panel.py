"""The panel on gpiozero's MockFactory: the real device code, no Pi."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from companion.core.events import ButtonPressed

pytest.importorskip("gpiozero")

from hardware.panel import (  # noqa: E402
    HOLD_BACK,
    Panel,
    PanelConfig,
    PanelPins,
    is_raspberry_pi,
    mock_factory,
    pin_clashes,
)
from hardware.sim_panel import SimulatedPanel  # noqa: E402

BOUNCE = 0.03  # real seconds: short, so the suite stays fast
HOLD = 0.15


class Recorder:
    def __init__(self) -> None:
        self.names: list[str] = []
        self.changed = threading.Condition()

    def submit(self, item: Any) -> None:
        """The panel's inbox: each button as the loop would get it."""
        assert isinstance(item, ButtonPressed) and item.seat is None
        with self.changed:
            self.names.append(item.name)
            self.changed.notify_all()

    def wait_for(self, predicate: Callable[[list[str]], bool], timeout: float = 3.0) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: predicate(self.names), timeout)


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


@pytest.fixture
def panel(rec: Recorder) -> Iterator[SimulatedPanel]:
    p = SimulatedPanel(rec, PanelPins(), pin_factory=mock_factory(), bounce_s=BOUNCE, hold_back_s=HOLD)
    yield p
    p.close()


def after_bounce() -> None:
    # Real time must pass for the debouncer to accept the next edge; this is
    # waiting for the clock, not polling for behaviour.
    time.sleep(BOUNCE * 1.5)


@pytest.mark.parametrize("name", ["next", "repeat"])
def test_press_reports_its_name_on_the_press(panel: SimulatedPanel, rec: Recorder, name: str) -> None:
    panel.buttons[name].pin.drive_low()
    assert rec.names == [name]  # MockFactory calls back synchronously
    after_bounce()
    panel.buttons[name].pin.drive_high()
    assert rec.names == [name]


def test_each_button_maps_to_its_own_name(panel: SimulatedPanel, rec: Recorder) -> None:
    for name in ("next", "back", "repeat"):
        panel.press(name)
    assert rec.names == ["next", "back", "repeat"]


def test_back_is_reported_on_release_not_on_press(panel: SimulatedPanel, rec: Recorder) -> None:
    pin = panel.buttons["back"].pin
    pin.drive_low()
    assert rec.names == []
    after_bounce()
    pin.drive_high()
    assert rec.names == ["back"]


def test_edges_inside_bounce_time_make_one_press(panel: SimulatedPanel, rec: Recorder) -> None:
    pin = panel.buttons["next"].pin
    start = time.monotonic()
    for _ in range(4):  # a chattering contact: low/high/low/high/... in microseconds
        pin.drive_low()
        pin.drive_high()
    pin.drive_low()
    assert time.monotonic() - start < BOUNCE, "machine too slow to make edges inside the bounce time"
    assert rec.names == ["next"]
    after_bounce()
    pin.drive_high()
    after_bounce()
    pin.drive_low()  # a genuine second press, after the bounce time
    assert rec.names == ["next", "next"]


def test_release_bounce_does_not_make_a_second_press(panel: SimulatedPanel, rec: Recorder) -> None:
    pin = panel.buttons["repeat"].pin
    pin.drive_low()
    after_bounce()
    pin.drive_high()
    pin.drive_low()  # the contact chatters as it opens
    pin.drive_high()
    assert rec.names == ["repeat"]


def test_bouncy_back_press_reports_one_back(panel: SimulatedPanel, rec: Recorder) -> None:
    pin = panel.buttons["back"].pin
    pin.drive_low()
    pin.drive_high()
    pin.drive_low()
    after_bounce()
    pin.drive_high()
    pin.drive_low()
    pin.drive_high()
    assert rec.names == ["back"]


def test_no_bounce_time_counts_every_edge(rec: Recorder) -> None:
    p = SimulatedPanel(rec, pin_factory=mock_factory(), bounce_s=None)
    try:
        pin = p.buttons["next"].pin
        pin.drive_low()
        pin.drive_high()
        pin.drive_low()
        assert rec.names == ["next", "next"]
        p.press("back")
        assert rec.names[-1] == "back"
    finally:
        p.close()


def test_hold_reports_hold_back_and_release_reports_nothing(panel: SimulatedPanel, rec: Recorder) -> None:
    pin = panel.buttons["back"].pin
    pin.drive_low()
    assert rec.wait_for(lambda n: HOLD_BACK in n), "gpiozero's hold thread never fired"
    pin.drive_high()
    assert rec.names == [HOLD_BACK]


def test_hold_helper_gives_only_hold_back(panel: SimulatedPanel, rec: Recorder) -> None:
    panel.hold("back", HOLD)
    assert rec.names == [HOLD_BACK]
    panel.press("back")  # the next short press is a plain back again
    assert rec.names == [HOLD_BACK, "back"]


def test_short_hold_is_a_plain_back(panel: SimulatedPanel, rec: Recorder) -> None:
    panel.hold("back", HOLD / 3)
    assert rec.names == ["back"]


def test_holding_next_is_just_next(panel: SimulatedPanel, rec: Recorder) -> None:
    panel.hold("next", HOLD * 1.5)
    assert rec.names == ["next"]


def test_hold_time_comes_from_config(rec: Recorder) -> None:
    cfg = PanelConfig.from_dict({"hold_back_s": 0.7})
    p = SimulatedPanel.from_config(rec, {"hold_back_s": 0.7, "bounce_s": 0.01}, pin_factory=mock_factory())
    try:
        assert cfg.hold_back_s == 0.7
        assert p.buttons["back"].hold_time == pytest.approx(0.7)
        assert p.bounce_s == pytest.approx(0.01)
    finally:
        p.close()


def test_leds_drive_their_pins(panel: Panel) -> None:
    for name in ("ready", "ok", "error"):
        pin = panel.leds[name].pin
        pin.clear_states()
        panel.led(name, True)
        panel.flush()
        assert pin.state
        panel.led(name, False)
        panel.flush()
        assert not pin.state
        pin.assert_states([False, True, False])
    panel.led("ok", True)
    assert panel.state() == {"ready": False, "ok": True, "error": False}


def test_led_flash_goes_on_then_off(panel: Panel) -> None:
    pin = panel.leds["error"].pin
    pin.clear_states()
    panel.led("error", True, flash=True)
    deadline = time.monotonic() + 3
    while len(pin.states) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [s.state for s in pin.states[:3]] == [False, True, False]


@pytest.mark.parametrize(("long", "length"), [(False, 0.05), (True, 0.4)])
def test_beep_lengths(panel: SimulatedPanel, long: bool, length: float) -> None:
    pin = panel.buzzer.pin
    pin.clear_states()
    panel.beep(long=long)
    deadline = time.monotonic() + 3
    while len(pin.states) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [s.state for s in pin.states[:3]] == [False, True, False]
    on_for = pin.states[2].timestamp
    assert length * 0.8 <= on_for < length + 0.5


def test_led_and_beep_requests_never_wait_for_the_hardware(panel: SimulatedPanel, monkeypatch) -> None:
    """The loop only enqueues: a slow device (gpiozero joining a blink
    thread) holds up the panel's own worker, not the caller."""
    gate = __import__("threading").Event()
    monkeypatch.setattr(panel, "_apply_beep", lambda long: gate.wait(2))
    started = time.monotonic()
    for _ in range(5):
        panel.beep()
        panel.led("ok", True, flash=True)
    assert time.monotonic() - started < 0.5
    gate.set()
    panel.flush()


def test_pins_follow_the_config() -> None:
    factory = mock_factory()
    section = {"pins": {"next": 23, "back": 24, "repeat": 25, "ready": 26, "ok": 12, "error": 4, "buzzer": 5}}
    p = Panel.from_config(Recorder(), section, pin_factory=factory)
    try:
        assert p.buttons["next"].pin.info.name == "GPIO23"
        assert p.leds["error"].pin.info.name == "GPIO4"
        assert p.buzzer.pin.info.name == "GPIO5"
    finally:
        p.close()


def test_default_pins_avoid_uart_i2c_spi_and_i2s() -> None:
    assert pin_clashes(PanelPins()) == []
    assert "I2S" in " ".join(pin_clashes(PanelPins(buzzer=19)))


def test_config_refuses_bad_pins() -> None:
    with pytest.raises(ValueError, match="panel.pins.back"):
        PanelConfig.from_dict({"pins": {"next": 17, "back": 17}})
    with pytest.raises(ValueError, match="unknown setting .panel.pins.start."):
        PanelConfig.from_dict({"pins": {"start": 4}})
    with pytest.raises(ValueError, match="panel.pins.ok"):
        PanelConfig.from_dict({"pins": {"ok": 40}})
    with pytest.raises(ValueError, match="hold_back_s"):
        PanelConfig.from_dict({"hold_back_s": 0})


def test_close_releases_every_pin(rec: Recorder) -> None:
    factory = mock_factory()
    p = Panel(rec, pin_factory=factory)
    p.led("ready", True)
    p.close()
    assert all(dev.closed for dev in [*p.buttons.values(), *p.leds.values(), p.buzzer])
    # The pins are free again: a second panel can claim the same ones.
    again = Panel(rec, pin_factory=factory)
    again.close()
    p.close()  # idempotent


def test_close_tells_every_buttons_thread_to_stop_before_waiting_for_any(rec: Recorder,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """gpiozero gives each button a hold thread that looks for its stop every 0.1 s, and a
    button's close waits for it: told one button after the other, a panel's close waited for
    each poll in turn (every daemon stop, every simulated table's close).  All are told first,
    and woken, so close waits for none of the polls."""
    from gpiozero.mixins import HoldThread

    p = Panel(rec, pin_factory=mock_factory())
    holds = [b._hold_thread for b in p.buttons.values()]
    woken: set[int] = set()

    def record_wake(h: Any) -> Callable[[], None]:
        wake = h.holding.set
        return lambda: (woken.add(id(h)), wake())[1]

    for h in holds:
        h.holding.set = record_wake(h)
    told_before_each_wait: list[bool] = []
    join = HoldThread.join

    def watched(self: Any, timeout: float | None = None) -> None:
        told_before_each_wait.append(all(h.stopping.is_set() and id(h) in woken for h in holds))
        join(self, timeout)

    monkeypatch.setattr(HoldThread, "join", watched)
    p.close()
    assert len(told_before_each_wait) == len(holds) and all(told_before_each_wait), told_before_each_wait
    assert not any(h.is_alive() for h in holds)


def test_a_pin_clash_on_open_releases_what_was_claimed(rec: Recorder) -> None:
    from gpiozero import LED

    factory = mock_factory()
    squatter = LED(16, pin_factory=factory)  # the buzzer's default pin
    try:
        with pytest.raises(Exception):  # noqa: B017 - gpiozero's GPIOPinInUse
            Panel(rec, pin_factory=factory)
    finally:
        squatter.close()
    Panel(rec, pin_factory=factory).close()  # nothing was left claimed


def test_not_a_pi_here(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")
    assert is_raspberry_pi(model)
    assert not is_raspberry_pi(tmp_path / "missing")


@pytest.fixture
def thread_deaths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every thread that dies with an exception while the test runs, by name
    and exception (what a daemon stopping on a Pi would log as a traceback)."""
    died: list[str] = []
    monkeypatch.setattr(threading, "excepthook", lambda a: died.append(f"{a.thread and a.thread.name}: "
                                                                       f"{a.exc_type.__name__}: {a.exc_value}"))
    return died


def test_closing_a_flashing_panel_kills_no_thread(rec: Recorder, thread_deaths: list[str]) -> None:
    """Closed twice at once (the app, and a test's fixture after it) with
    flashes and beeps still queued: before, the second close released the
    pins while the worker still started blinks, whose gpiozero threads then
    died with GPIODeviceClosed."""
    for _ in range(5):
        p = Panel(rec, pin_factory=mock_factory())
        for i in range(40):
            p.led("ok" if i % 2 else "error", True, flash=True)
            p.beep(long=i % 3 == 0)
        closers = [threading.Thread(target=p.close) for _ in range(2)]
        for c in closers:
            c.start()
        for c in closers:
            c.join(5)
        p.led("ok", True, flash=True)  # after close: dropped, not a dying thread
        p.beep()
    time.sleep(0.5)  # a blink thread started late would die within its 0.15 s on-time
    assert thread_deaths == []
