"""Nothing accepted is lost, proved: power cuts below SQLite and random damage, short
versions of ``qa/reliability/run.py --power-cuts N --damages N`` (the method is
in qa/reliability/powercut.py and qa/reliability/corruption.py).  Plus the WAL
findings one by one: damage SQLite would skip without a word is reported, a
power cut's torn tail is not mistaken for damage."""

from __future__ import annotations

import os
import shutil
import struct
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from companion.runtime.journal import read_only  # noqa: E402
from companion.runtime.wal_format import wal_problem  # noqa: E402
from qa.reliability import corruption, powercut  # noqa: E402
from qa.reliability.inproc import Runner  # noqa: E402

needs_apsw = pytest.mark.skipif(not powercut.available(), reason="APSW not installed (pip install .[reliability])")


@needs_apsw
def test_power_cuts_below_sqlite_lose_no_acknowledged_input_and_every_start_works() -> None:
    results, _ = powercut.campaign(30, 20261201, per_script=10)
    bad = [r for r in results if not r.ok]
    assert not bad, "\n".join(f"script {r.seed} cut {r.cut_after}: {r.problems}" for r in bad)
    assert sum(r.acknowledged for r in results) > 300  # the cuts fell inside real games
    assert sum(r.torn > 0 for r in results) >= 5  # and torn writes did land


def test_a_slipped_tile_named_by_its_pattern_counts_as_kept() -> None:
    """A tile before the command phase is acknowledged in public as ``skb/*``;
    the journal holds the tile itself, and that is not a lost input — while a
    different journaled input, or one missing, still is."""
    assert powercut.kept(["skb/*", "next", "skb/knight/5"], ["skb/knight/4", "next", "skb/knight/5"]) == 3
    assert powercut.kept(["skb/*", "next"], ["player/red", "next"]) == 0
    assert powercut.kept(["skb/*", "next", "skb/knight/5"], ["skb/knight/4", "next"]) == 2


@needs_apsw
def test_power_cuts_in_games_with_a_slipped_tile_lose_nothing() -> None:
    """Script 20261205's Seven Knights has a tile tapped before the command
    phase: every cut in it keeps what the table acknowledged."""
    results, _ = powercut.campaign(6, 20261205, per_script=6)
    bad = [r for r in results if not r.ok]
    assert not bad, "\n".join(f"script {r.seed} cut {r.cut_after}: {r.problems}" for r in bad)
    assert sum(r.acknowledged for r in results) > 50


@needs_apsw
def test_the_power_cut_harness_catches_commits_that_are_not_fsynced() -> None:
    """The harness can fail: with synchronous=OFF acknowledged inputs are lost."""
    total = powercut.count_ops(5)
    lost = [powercut.cut_run(5, total * k // 4, k, unsafe=True).lost for k in (1, 2, 3)]
    assert any(lost), lost


def test_random_damage_to_journal_wal_and_backups_is_survived_reported_once_and_recovered() -> None:
    results, _ = corruption.campaign(30, 900)
    bad = [r for r in results if not r.ok]
    assert not bad, "\n".join(f"seed {r.seed} {r.target}/{r.kind}: {r.problems}" for r in bad)
    assert sum(r.reported > 0 for r in results) >= 10
    assert {r.target for r in results} >= {"journal", "wal", "newest backup"}


# ------------------------------------------------------------- the WAL, one by one
def _killed_state(tmp: Path, steps: int = 35) -> Path:
    """A state directory as a SIGKILL leaves it: the inputs in the WAL, its index beside it."""
    state = tmp / "state"
    state.mkdir()
    powercut.fork_play(state, 7, None, 0, steps=steps)
    assert (state / "journal.sqlite-wal").stat().st_size > 10 * 4120
    return state


def _frame_offset(wal: Path, k: int) -> int:
    size = struct.unpack(">I", wal.read_bytes()[8:12])[0]
    return 32 + k * (24 + size)


def test_a_flipped_byte_in_a_wal_frame_is_reported_not_silently_dropped(tmp_path: Path) -> None:
    """SQLite stops at the first bad frame and drops the rest without a word."""
    state = _killed_state(tmp_path)
    wal = state / "journal.sqlite-wal"
    assert wal_problem(wal) is None
    data = bytearray(wal.read_bytes())
    data[_frame_offset(wal, 3) + 24 + 1000] ^= 0x40
    wal.write_bytes(bytes(data))
    assert "damaged at frame 4" in (wal_problem(wal) or "")
    r = Runner(state)
    try:
        assert any("write-ahead log is damaged at frame 4" in e["message"] for e in r.events if e["event"] == "error")
    finally:
        r.close()


def test_the_same_damage_is_found_without_the_index(tmp_path: Path) -> None:
    """No -shm (a power cut can leave it stale): genuine frames after the bad one give it away."""
    state = _killed_state(tmp_path)
    wal = state / "journal.sqlite-wal"
    (state / "journal.sqlite-shm").unlink()
    data = bytearray(wal.read_bytes())
    data[_frame_offset(wal, 3) + 24 + 1000] ^= 0x40
    wal.write_bytes(bytes(data))
    assert "damaged at frame 4" in (wal_problem(wal) or "")


def test_a_torn_last_frame_after_a_power_cut_is_not_damage(tmp_path: Path) -> None:
    state = _killed_state(tmp_path)
    wal = state / "journal.sqlite-wal"
    (state / "journal.sqlite-shm").unlink()  # a power cut: the index counts for nothing
    data = wal.read_bytes()
    last = _frame_offset(wal, (len(data) - 32) // (_frame_offset(wal, 1) - 32) - 1)
    torn = data[:last + 24 + 1536] + os.urandom(512)  # three sectors landed, the fourth is garbage
    wal.write_bytes(torn)
    assert wal_problem(wal) is None


def test_a_deleted_wal_is_reported_when_its_index_says_it_held_commits(tmp_path: Path) -> None:
    """The WAL is the data: after a kill the main file is nearly empty."""
    state = _killed_state(tmp_path)
    keep = tmp_path / "wal-copy"
    shutil.copy(state / "journal.sqlite-wal", keep)
    (state / "journal.sqlite-wal").unlink()
    r = Runner(state)
    try:
        msgs = [e["message"] for e in r.events if e["event"] == "error"]
        assert any("write-ahead log is missing" in m for m in msgs), msgs
    finally:
        r.close()


def test_an_emptied_main_file_is_recovered_from_the_pages_in_its_wal(tmp_path: Path) -> None:
    """Without its header the main file stops saying 'WAL mode' and SQLite
    would ignore the WAL that holds everything: the pages are put back by hand."""
    state = _killed_state(tmp_path)
    db = read_only(state / "journal.sqlite")
    want = db.execute("SELECT count(*) FROM inputs").fetchone()[0]
    db.close()
    (state / "journal.sqlite").write_bytes(b"")
    r = Runner(state)
    try:
        assert r.sim.app.journal.count_inputs() == want
        assert [e["key"] for e in r.events if e["event"] == "say"][0] == "journal.recovered"
    finally:
        r.close()
