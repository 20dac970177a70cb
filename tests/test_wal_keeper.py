"""The journal's WAL is folded into the main file off the tap's path, and kept
bounded (companion/runtime/wal_keeper.py).

What a tap's commit does is observed on the files, never timed: a commit
that folds the WAL writes the main file; a commit into an emptied WAL
writes (and syncs: a second sync before the feedback) the WAL's header.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from companion.app import config
from companion.app.wiring import build, simulated
from companion.core.events import Tap
from companion.runtime import wal_keeper
from companion.runtime.clock import VirtualClock
from companion.runtime.journal import Journal
from hardware.sim_reader import SimulatedReader
from qa.reliability.inproc import Runner
from qa.reliability.scripts import generate, press, tap
from voice.base import RecordingVoice

WAL_HEADER = 32


def _main_crc(journal: Path) -> int:
    return zlib.crc32(journal.read_bytes())


def _wal_header(journal: Path) -> bytes:
    wal = journal.with_name(journal.name + "-wal")
    return wal.read_bytes()[:WAL_HEADER] if wal.exists() else b""


def test_finding_a_tap_never_waits_for_a_checkpoint_in_its_commit(tmp_path: Path) -> None:
    """SQLite's automatic checkpoint runs inside the commit that takes the WAL
    past 1,000 pages: that tap's feedback waited for the fold's syncs too.
    Thousands of commits in a row leave the main file as it was."""
    path = tmp_path / "journal.sqlite"
    journal = Journal(path)
    try:
        before = _main_crc(path)
        for i in range(2_500):
            journal.append(Tap(f"player/p{i % 7}"), float(i), 1_700_000_000.0 + i)
        assert _main_crc(path) == before  # nothing was folded into it
        assert journal.count_inputs() == 2_500
    finally:
        journal.close()


def test_finding_a_tap_never_waits_for_a_checkpoint_after_a_game(tmp_path: Path) -> None:
    """The fold at a game's end emptied the WAL, so the next game's first
    commit wrote the new WAL's header and synced it before its own frames:
    two syncs before its feedback.  Games back to back: before every commit
    the WAL is already begun, and no commit rewrites its header or touches
    the main file."""
    runner = Runner(tmp_path)
    path = tmp_path / "journal.sqlite"
    seen: dict[str, Any] = {}
    problems: list[str] = []

    def observe(stage: str, item: Any, info: Any) -> None:
        if stage == "input":
            seen["before"] = (_wal_header(path), _main_crc(path))
        elif stage == "journaled":
            header, main = seen["before"]
            if len(header) < WAL_HEADER:
                problems.append(f"{item}: its commit began the WAL")
            elif _wal_header(path) != header:
                problems.append(f"{item}: its commit started the WAL over")
            if _main_crc(path) != main:
                problems.append(f"{item}: its commit folded the WAL")

    runner.sim.loop.observers.append(observe)
    plays = 0
    try:
        for seed in (3, 4, 5):
            for step in generate(seed, games=["seven-knights", "one-night"]).steps:
                runner.run(step)
            plays = len(runner.sim.app.journal.plays())
    finally:
        runner.close().join()
    assert plays >= 5, "the games did not end: no fold between them was tried"
    assert not problems, problems[:5]


def test_the_wal_stays_under_its_bound_when_the_table_never_idles(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """No game ends and no pause: a player seated and unseated 2,000 times.
    The WAL is folded at its bound (here 128 KiB) after an input's feedback,
    so it never holds more than the bound and one input's frames."""
    bound = 128 << 10
    monkeypatch.setattr(wal_keeper, "WAL_BOUND_BYTES", bound)
    runner = Runner(tmp_path)
    wal = tmp_path / "journal.sqlite-wal"
    largest = 0
    try:
        runner.run(tap("game/seven-knights"))
        for _ in range(1_000):
            for step in (tap("player/red"), press("back")):
                resp, _ = runner.run(step)
                assert resp is not None and resp["event"] == "accepted", resp
                largest = max(largest, wal.stat().st_size)
        app = runner.sim.app
        assert app.journal.count_inputs() >= 2_001  # and the evening's own bookkeeping
        assert app.wal is not None and app.wal.folds >= 10  # the bound was reached again and again
    finally:
        runner.close().join()
    assert largest < bound + (32 << 10), largest


def test_the_daemon_folds_a_quiet_tables_wal_on_a_thread_of_its_own(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon's keeper (background): once the table is quiet, its thread
    folds the WAL through a connection of its own and begins the next WAL,
    so the main file alone holds every input.  The loop is pumped here, on
    the test's thread: only the keeper's thread can have folded."""
    path = tmp_path / "journal.sqlite"
    app = _daemon(path, monkeypatch)
    try:
        reader = simulated(app)[0]
        for identity in ("game/seven-knights", "player/red", "player/blue"):
            reader.present(text=identity)
            app.loop.pump()
        keeper, inputs = app.wal, app.journal.count_inputs()
        page = int(app.journal.db.execute("PRAGMA page_size").fetchone()[0])
        assert keeper is not None and inputs >= 3
        folded = begun = False
        deadline = time.monotonic() + 10.0  # a bound on the wait, not a timing asserted
        while not (folded and begun) and time.monotonic() < deadline:
            time.sleep(0.01)
            folded = _inputs_in_main_file_alone(path, tmp_path / "main-alone.sqlite") == inputs
            begun = (tmp_path / "journal.sqlite-wal").stat().st_size == WAL_HEADER + 24 + page  # one frame
        assert folded and begun and keeper.folds >= 1
    finally:
        app.close()


def test_finding_a_fold_a_reader_kept_from_emptying_the_wal_is_tried_again_once_it_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader in the WAL as the keeper folds (`companion scores`, a page's
    read) lets it copy the frames but not empty the WAL: then the next tap
    pays the WAL's new header.  The keeper tries again while the table stays
    quiet, so once the reader has left the WAL is emptied and begun (one
    frame) with no tap to prompt it — and while the reader stays, the WAL
    does not grow a frame per try."""
    monkeypatch.setattr(wal_keeper, "RETRY_S", 0.05)
    path = tmp_path / "journal.sqlite"
    app = _daemon(path, monkeypatch)
    reader = sqlite3.connect(path, isolation_level=None)
    try:
        keeper, page = app.wal, int(app.journal.db.execute("PRAGMA page_size").fetchone()[0])
        assert keeper is not None
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM inputs").fetchall()  # a snapshot held in the WAL
        for identity in ("game/seven-knights", "player/red", "player/blue"):
            simulated(app)[0].present(text=identity)
            app.loop.pump()
        deadline = time.monotonic() + 10.0  # bounds on the waits, not timings asserted
        while keeper.folds < 6 and time.monotonic() < deadline:  # the input's folds, then tries again
            time.sleep(0.01)
        assert keeper.folds >= 6
        held = (tmp_path / "journal.sqlite-wal").stat().st_size
        time.sleep(0.3)  # several more tries with the reader still there
        assert (tmp_path / "journal.sqlite-wal").stat().st_size == held
        reader.execute("COMMIT")
        begun = False
        while not begun and time.monotonic() < deadline + 10.0:
            time.sleep(0.01)
            begun = (tmp_path / "journal.sqlite-wal").stat().st_size == WAL_HEADER + 24 + page  # one frame
        assert begun
    finally:
        reader.close()
        app.close()


def _daemon(path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """An app as the daemon builds it (its keeper on a thread), folding at once when quiet; started."""
    monkeypatch.setattr(wal_keeper, "WAL_IDLE_S", 0.0)
    monkeypatch.setattr(wal_keeper, "WAL_IDLE_BYTES", 0)
    cfg = config.load([], {"panel": {"backend": "mock"}})
    app = build(cfg, clock=VirtualClock(), log=lambda ev: None, voice=RecordingVoice(), reader=SimulatedReader(),
                journal_path=path, background_backups=True)
    app.loop.start()
    app.reader.start(app.loop.inbox)
    return app


def _inputs_in_main_file_alone(path: Path, copy: Path) -> int:
    shutil.copy(path, copy)  # without its WAL
    db = sqlite3.connect(copy)
    try:
        return int(db.execute("SELECT count(*) FROM inputs").fetchone()[0])
    except sqlite3.Error:
        return -1
    finally:
        db.close()
