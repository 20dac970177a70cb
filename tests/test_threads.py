"""The one registry of threads: named, stopped newest first, joined, stragglers named."""

from __future__ import annotations

import threading
from pathlib import Path

from companion import threads
from companion.app import config
from companion.app.simulate import Simulation

ROOT = Path(__file__).resolve().parent.parent


def test_shutdown_stops_newest_first_joins_and_names_a_thread_that_will_not_stop() -> None:
    order: list[str] = []
    events = {name: threading.Event() for name in ("first", "second")}
    for name, ev in events.items():
        threads.spawn(f"test-{name}", ev.wait, stop=lambda n=name, e=ev: (order.append(n), e.set()))
    never = threading.Event()
    threads.spawn("test-stubborn", never.wait, stop=lambda: None)  # asked, does not listen
    stuck = threads.shutdown(timeout=0.2, only=lambda w: w.name.startswith("test-"))
    assert order == ["second", "first"]
    assert stuck == ["test-stubborn"]
    assert "test-first" not in threads.running() and "test-second" not in threads.running()
    never.set()
    assert threads.shutdown(timeout=1.0, only=lambda w: w.name.startswith("test-")) == []


def test_every_thread_a_table_runs_is_registered_and_gone_after_close(tmp_path: Path) -> None:
    from gpiozero.threads import GPIOThread  # gpiozero's own registry keeps gpiozero's threads

    before = set(threading.enumerate())
    sim = Simulation(config.load([ROOT / "config" / "companion.yaml"]), tmp_path, lambda ev: None)
    sim.step("tap", "game/seven-knights")
    sim.step("press", "next")
    ours = [t for t in set(threading.enumerate()) - before if not isinstance(t, GPIOThread)]
    assert ours and all(t.name in threads.running() for t in ours), [t.name for t in ours]
    sim.close()  # each device stops and joins its own workers
    assert not [t for t in ours if t.is_alive()]
