"""A wall clock that is wrong (a Pi has no real-time clock): it is
wrong at boot and jumps when the network sets it.  Durations come from the
monotonic clock, dates never go back before the journal's, and the games
night is decided by the clock once it is right (companion.runtime.clock.Record).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from companion.app.simulate import load_script
from companion.runtime.clock import VIRTUAL_EPOCH, Record, VirtualClock
from companion.runtime.loop import TableLoop
from conftest import Table, example_script

ROOT = Path(__file__).resolve().parent.parent
SIX = example_script("demagogos/6p.yaml")
ONE_NIGHT = example_script("one-night.yaml")
YEAR = 365 * 86400
BEHIND = "the clock is behind the saved games"


def date(wall: float) -> str:
    return datetime.fromtimestamp(wall, UTC).strftime("%Y-%m-%d %H:%M:%S")


def six() -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    script = load_script(SIX)
    return [(kind, value) for _, kind, value in script.steps], dict(script.draws)


def open_table(state: Path, draws: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
               wall: float | None = None) -> Table:
    """The table on ``state``; ``wall``: what the wall clock reads when it starts
    (None: later the same evening, as a right clock would)."""
    if wall is not None:
        original = TableLoop.start

        def start(self: TableLoop) -> None:
            self.clock.jump_wall(wall - self.clock.wall())  # type: ignore[attr-defined]
            original(self)

        monkeypatch.setattr(TableLoop, "start", start)
    try:
        return Table(state, draws=draws)
    finally:
        monkeypatch.undo()


def play_six(table: Table, jump: float = 0.0) -> None:
    """Demagogos for six, whole: 10 minutes into it the wall clock jumps by
    ``jump`` seconds, and the game ends 10 minutes after that."""
    steps, _ = six()
    for i, (kind, value) in enumerate(steps):
        if i == 20:
            table.do("wait", 600)
            table.sim.clock.jump_wall(jump)
            table.do("wait", 600)
        table.do(kind, value)
    assert table.of("game_over")


def errors(table: Table) -> list[str]:
    return [e["message"] for e in table.of("error")]


@pytest.mark.parametrize("jump, start", [
    (3 * YEAR, VIRTUAL_EPOCH + 3 * YEAR),  # 3 years behind until the network set it: the start is the end less 20 min
    (-3 * YEAR, VIRTUAL_EPOCH),  # set 3 years back mid-game: the journal's date holds
], ids=["set-forward", "set-back"])
def test_a_game_lasts_its_monotonic_time_when_the_wall_clock_jumps_years_mid_game(
        tmp_path: Path, jump: float, start: float) -> None:
    _, draws = six()
    table = Table(tmp_path, draws=draws)
    try:
        play_six(table, jump)
        [play] = table.sim.app.journal.plays()
        assert (play["durationMin"], play["playDate"]) == (20, date(start))
        assert len([m for m in errors(table) if BEHIND in m]) == (1 if jump < 0 else 0)
    finally:
        table.close()


def test_a_game_across_a_restart_lasts_the_time_the_table_ran(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut 10 minutes in, right after a bid; the Pi comes back at 1970 and its
    monotonic clock restarts at 0: the game lasts its 20 minutes of table time,
    dated from the journal.  (The time off, and since the last input before
    the cut, is not known without a right clock: it counts nothing.)"""
    steps, draws = six()
    table = Table(tmp_path, draws=draws)
    for kind, value in steps[:20]:
        table.do(kind, value)
    table.do("wait", 600)
    table.do(*steps[20])
    table.close()
    table = open_table(tmp_path, draws, monkeypatch, wall=0.0)
    try:
        table.do("wait", 600)
        for kind, value in steps[21:]:
            table.do(kind, value)
        [play] = table.sim.app.journal.plays()
        assert (play["durationMin"], play["playDate"]) == (20, date(VIRTUAL_EPOCH))
    finally:
        table.close()


def test_a_restart_with_the_clock_behind_the_journal_is_noticed_and_keeps_plays_in_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, draws = six()
    table = Table(tmp_path, draws=draws)
    play_six(table)  # ends at 19:20 on the virtual evening
    table.close()
    table = open_table(tmp_path, draws, monkeypatch, wall=0.0)  # the clock reads 1970-01-01
    try:
        assert [m for m in errors(table) if BEHIND in m] == [m for m in errors(table)]
        [said] = errors(table)
        assert "1970-01-01 00:00" in said and "2026-01-01 19:20" in said
        assert table.sim.loop.table.state.evening == 1  # a clock set back is no new evening
        play_six(table)
        table.sim.clock.jump_wall(VIRTUAL_EPOCH + 2 * 3600 - table.sim.clock.wall())  # set: 21:00, tonight
        play_six(table)
        assert len(errors(table)) == 1  # said once
        plays = table.sim.app.journal.plays()
        dates = [p["playDate"] for p in plays]
        assert dates == [date(VIRTUAL_EPOCH), date(VIRTUAL_EPOCH + 1200), date(VIRTUAL_EPOCH + 2 * 3600)]
        assert [p["evening"] for p in plays] == [1, 1, 1] and [p["durationMin"] for p in plays] == [20] * 3
    finally:
        table.close()


@pytest.mark.parametrize("later, evening", [(18 * 3600, 2), (3 * 3600, 1)], ids=["next-day", "same-evening"])
def test_once_the_clock_is_set_it_decides_whether_the_start_was_a_new_evening(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, later: float, evening: int) -> None:
    """A Pi boots behind its journal (1970, or the hour it last saved); the network
    sets the clock before the first game: the evening is then decided as a start with
    a right clock would have, 6 hours apart or not."""
    _, draws = six()
    table = Table(tmp_path, draws=draws)
    play_six(table)
    last = table.sim.clock.wall()
    table.close()
    table = open_table(tmp_path, draws, monkeypatch, wall=last - 3600)  # an hour behind the journal
    try:
        assert table.sim.loop.table.state.evening == 1
        table.do("wait", 30)
        table.sim.clock.jump_wall(last + later - table.sim.clock.wall())
        play_six(table)
        plays = table.sim.app.journal.plays()
        assert [p["evening"] for p in plays] == [1, evening]
        assert plays[1]["playDate"] == date(last + later)
    finally:
        table.close()


def test_a_clock_jumping_years_forward_mid_evening_starts_no_new_evening(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, draws = six()
    table = Table(tmp_path, draws=draws)
    play_six(table)
    table.sim.clock.jump_wall(10 * YEAR)
    play_six(table)
    table.close()
    table = open_table(tmp_path, draws, monkeypatch)
    try:
        play_six(table, jump=-10 * YEAR)  # and back again, mid-game
        plays = table.sim.app.journal.plays()
        assert [p["evening"] for p in plays] == [1, 1, 1]
        dates = [p["playDate"] for p in plays]
        assert dates == sorted(dates) and [p["durationMin"] for p in plays] == [20] * 3
    finally:
        table.close()


def test_the_one_night_discussion_holds_through_ten_years_of_jumps_either_way(tmp_path: Path) -> None:
    """The night, the discussion and the vote count run on the monotonic clock:
    the table says the same lines at the same times however the wall jumps."""
    script = load_script(ONE_NIGHT)
    steps = [(kind, value) for _, kind, value in script.steps]
    talked = next(i for i, (k, _) in enumerate(steps) if k == "press" and i > 10)  # "the table is done talking"
    steps[talked] = ("wait", 100)  # let the discussion run out by itself

    def run(state: Path, jumps: list[float]) -> tuple[list[tuple[float, str]], Any]:
        table = Table(state, **script.overrides)
        try:
            left = list(jumps)
            for kind, value in steps:
                if kind == "wait":
                    table.do("wait", value / 2)
                    table.sim.clock.jump_wall(left.pop(0) if left else 0.0)
                    table.do("wait", value / 2)
                else:
                    table.do(kind, value)
            [play] = table.sim.app.journal.plays()
            return [(e["t"], e["key"]) for e in table.of("say")], play["durationMin"]
        finally:
            table.close()

    still = run(tmp_path / "still", [])
    assert any(key == "onw.discussion.time_up" for _, key in still[0])
    for jumps in ([10 * YEAR, -10 * YEAR, 10 * YEAR, -10 * YEAR], [-10 * YEAR, 10 * YEAR, 10 * YEAR]):
        assert run(tmp_path / str(jumps[0]), jumps) == still


def test_record_continues_t_from_the_journal_and_keeps_the_wall_of_record_from_going_back() -> None:
    clock = VirtualClock()
    clock.jump_wall(-VIRTUAL_EPOCH)  # 1970
    times = Record(clock, (500.0, VIRTUAL_EPOCH))
    assert times.t(clock.now()) == 500.0 and times.wall(clock.now()) == VIRTUAL_EPOCH
    clock.set(60)
    assert times.t(60) == 560.0 and times.wall(60) == VIRTUAL_EPOCH + 60 and times.behind(60) == VIRTUAL_EPOCH
    times.recorded(60, times.wall(60))
    clock.jump_wall(VIRTUAL_EPOCH + 3600)  # set right: an hour later than the journal knew
    assert times.wall(60) == VIRTUAL_EPOCH + 3660 and times.behind(60) == 0
    times.recorded(60, times.wall(60))
    clock.jump_wall(-5 * YEAR)
    assert times.wall(60) == VIRTUAL_EPOCH + 3660  # never back before a recorded wall
