"""The page projection: a seat's page is rendered only
while its page is watched (the web server's paired seats), and then once per
change of the table, cached by its version (companion/runtime/pages.py)."""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from companion.app import config
from companion.app.simulate import Simulation, load_script
from companion.core.messages import ReadSide
from conftest import example_script
from web.live import WatchedReadSide

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = example_script("demagogos/10p.yaml")


def count_pages(sim: Simulation) -> Counter[str]:
    """Every seat page the table renders from now on, counted by seat (``Table.page``)."""
    rendered: Counter[str] = Counter()
    page = sim.loop.table.page

    def counting(seat: str) -> Any:
        rendered[seat] += 1
        return page(seat)
    sim.loop.table.page = counting  # type: ignore[method-assign]
    return rendered


def play(read_side: ReadSide, watch: Callable[[Any], None] | None = None) -> tuple[Counter[str], int, Any]:
    """Demagogos' Trap for ten, to the middle of its second round; returns the seats' pages rendered
    (counted at the table: ``Table.page``), the inputs done, and the simulation."""
    s = load_script(SCRIPT)
    cfg = config.load([ROOT / "config" / "companion.yaml"], s.overrides)
    state = tempfile.mkdtemp(prefix="projection-")
    sim = Simulation(cfg, Path(state), lambda e: None, draws=s.draws, read_side=read_side)
    rendered = count_pages(sim)
    inputs = []
    sim.loop.observers.append(lambda stage, item, _: inputs.append(item) if stage == "done" else None)
    if watch is not None:
        watch(sim)
    for _, kind, value in s.steps[:len(s.steps) // 2]:
        sim.step(kind, value)
    return rendered, len(inputs), sim


def test_projection_with_no_page_connected_no_seat_page_is_rendered_per_input() -> None:
    rendered, inputs, sim = play(WatchedReadSide())
    try:
        assert inputs > 40  # every input, timers and draws included
        assert sum(rendered.values()) == 0
        assert sim.loop.read_side.public()["board"]  # the public board is still there
        assert sim.loop.read_side.private("red") == {}
    finally:
        sim.close()


def test_projection_a_watched_seats_page_is_rendered_once_per_change_and_cached() -> None:
    watched: set[str] = set()
    read_side = WatchedReadSide()

    def watch(sim: Any) -> None:
        watched.add("red")
        read_side.watch(lambda: watched)  # as the web server does (its paired seats)
        sim.loop.pump()  # the watcher's page is rendered on the loop's thread, at once
    rendered, inputs, sim = play(read_side, watch)
    try:
        assert set(rendered) == {"red"}  # never an unwatched seat's
        assert rendered["red"] <= inputs + 2  # once per accepted input, at most (plus the watch)
        me = sim.loop.read_side.private("red")
        assert me == sim.loop.pages.render("red") and me["page"]
        before = rendered["red"]
        assert sim.loop.pages.refresh() is False  # nothing changed: nothing rendered, nothing replaced
        assert rendered["red"] == before
        watched.add("blue")
        read_side.watch(lambda: watched)
        sim.loop.pump()
        assert rendered["blue"] == 1 and rendered["red"] == before  # only the newcomer, from the cache
        assert sim.loop.read_side.private("blue")["page"]
    finally:
        sim.close()


def test_a_plain_read_side_keeps_every_seats_page_as_a_simulation_reads_them() -> None:
    rendered, _, sim = play(ReadSide())
    try:
        assert set(rendered) >= set(sim.loop.table.state.seats) and len(sim.loop.table.state.seats) == 10
        assert all(sim.loop.read_side.private(seat)["page"] for seat in sim.loop.table.state.seats)
    finally:
        sim.close()


def test_projection_with_the_pages_off_nothing_is_rendered_per_input(tmp_path: Path) -> None:
    """The daemon without its web server (``pages: off``) has no page to show: a plain
    read side there rendered every seat's page after every input."""
    from companion.core.table import PAGES_OFF

    s = load_script(example_script("madness-hour.yaml"))
    cfg = config.load([ROOT / "config" / "companion.yaml"], s.overrides)
    sim = Simulation(cfg, tmp_path, lambda e: None, draws=s.draws, pages=PAGES_OFF)
    try:
        rendered = count_pages(sim)
        for _, kind, value in s.steps:
            sim.step(kind, value)
        assert sim.loop.table.state.games_started == 1 and sum(rendered.values()) == 0  # a whole game
    finally:
        sim.close()
