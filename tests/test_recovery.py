"""Recovery that survives a kill, salvage that reads what is on the card,
losses counted, headers that may not claim anything, and backups ordered by
what they hold (docs/develop/reliability.md, *Recovery and salvage*)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from companion.runtime import backups  # noqa: E402
from companion.runtime.wal_format import _wal_sum  # noqa: E402
from qa.reliability.inproc import Runner  # noqa: E402
from qa.reliability.recovery_kills import killed_at, start  # noqa: E402
from qa.reliability.scripts import generate  # noqa: E402

PAGE = 4096


def played(state: Path, games: int = 1, more: int = 0) -> list[tuple[Any, ...]]:
    """``games`` whole Seven Knights games, then ``more`` steps of the next,
    in a child that then exits as a kill leaves it (nothing closed: the WAL,
    which holds the ``more`` steps, and its index stay); the journal's inputs."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            r = Runner(state)
            for g in range(games):
                for step in generate(40 + g, games=["seven-knights"], wrong=0).steps:
                    r.run(step)
            for step in generate(40 + games, games=["seven-knights"], wrong=0).steps[:more]:
                r.run(step)
        except BaseException:
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return inputs_of(state / "journal.sqlite")


def inputs_of(path: Path) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute("SELECT seq, t, wall, input FROM inputs ORDER BY seq").fetchall()
    finally:
        db.close()


def folded(path: Path) -> None:
    """The WAL folded into the main file and gone: damage to the main file is read."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    assert not Path(f"{path}-wal").exists()


def started(state: Path) -> tuple[list[tuple[Any, ...]], list[str], list[str]]:
    """One start the production way: (inputs, what was said, the log's lines)."""
    return start(state)


# ------------------------------------------------------- a recovery killed
def test_finding_a_recovery_killed_at_any_step_is_finished_or_said_at_the_next_start(tmp_path: Path) -> None:
    """A damaged journal (a page of garbage in the main file, inputs in its
    WAL past the last backup) is recovered by a start killed at each of its
    file operations in turn: the next start holds everything the uninterrupted
    recovery holds and says it recovered, the one after is quiet, and the
    damaged files are kept."""
    pristine = tmp_path / "pristine"
    played(pristine, games=1, more=6)
    with open(pristine / "journal.sqlite", "r+b") as f:
        f.seek(2 * PAGE)
        f.write(b"\xa5" * PAGE)
    whole = tmp_path / "whole"
    shutil.copytree(pristine, whole)
    want, keys, _ = started(whole)
    assert "journal.recovered" in keys and len(want) > 20
    for k in range(1, 80):
        state = tmp_path / f"kill-{k}"
        shutil.copytree(pristine, state)
        if killed_at(state, k, started):
            break
        got, keys, messages = started(state)
        assert got == want, (k, messages)
        assert "journal.recovered" in keys, (k, messages)
        assert any(".damaged-" in p.name for p in state.iterdir()), (k, sorted(p.name for p in state.iterdir()))
        again, keys, messages = started(state)
        assert again == want and not keys and not messages, (k, messages)
        shutil.rmtree(state)
    else:
        pytest.fail("the recovery never finished")
    assert k > 3  # the kills did land inside the recovery


# --------------------------------------------------------- salvage: the WAL
def _wal_only(state: Path) -> list[tuple[Any, ...]]:
    """A game and 8 steps into the next, no backup: 8 inputs only in the WAL."""
    held = played(state, games=1, more=8)
    shutil.rmtree(state / "backups")
    return held


def _frames(wal: bytes) -> int:
    return (len(wal) - 32) // (24 + PAGE)


@pytest.mark.parametrize("field", ["magic", "page size", "salts", "checksum", "whole header"])
def test_finding_a_damaged_wal_header_loses_no_intact_frame(tmp_path: Path, field: str) -> None:
    """The WAL's 32-byte header damaged: its frames are read by their own
    checksums (and salts, and the journal's page size), not thrown away."""
    state = tmp_path / "state"
    held = _wal_only(state)
    wal = Path(f"{state / 'journal.sqlite'}-wal")
    data = bytearray(wal.read_bytes())
    assert _frames(bytes(data)) >= 2
    span = {"magic": (0, 4), "page size": (8, 12), "salts": (16, 24), "checksum": (24, 32),
            "whole header": (0, 32)}[field]
    for i in range(*span):
        data[i] ^= 0x5A
    wal.write_bytes(bytes(data))
    got, keys, messages = started(state)
    assert got == held, messages
    assert "journal.recovered" in keys


@pytest.mark.parametrize("claimed", [512, 8192, 1024])
def test_finding_a_damaged_page_size_field_is_not_trusted(tmp_path: Path, claimed: int) -> None:
    """The main file's page-size field says another size: the journal is
    always written with its own, and that is tried first."""
    state = tmp_path / "state"
    held = played(state, games=2)
    shutil.rmtree(state / "backups")
    folded(state / "journal.sqlite")
    with open(state / "journal.sqlite", "r+b") as f:
        f.seek(16)
        f.write(struct.pack(">H", claimed))
    got, keys, messages = started(state)
    assert got == held, messages
    assert "journal.recovered" in keys


def _reframe(data: bytearray, k: int, commit: int) -> None:
    """Frame ``k``'s commit field set to ``commit``, and every checksum from
    it on made right again: what a crafted WAL looks like."""
    magic = struct.unpack(">I", data[:4])[0]
    order = ">" if magic & 1 else "<"
    frame = 24 + PAGE
    at = 32 + k * frame
    data[at + 4:at + 8] = struct.pack(">I", commit)
    s = struct.unpack(">2I", data[24:32]) if k == 0 else struct.unpack(">2I", data[at - frame + 16:at - frame + 24])
    for j in range(k, _frames(bytes(data))):
        at = 32 + j * frame
        s = _wal_sum(bytes(data[at + 24:at + frame]), order, *_wal_sum(bytes(data[at:at + 8]), order, *s))
        data[at + 16:at + 24] = struct.pack(">2I", *s)


def test_finding_a_wal_claiming_a_huge_database_is_bounded(tmp_path: Path) -> None:
    """A commit frame that claims a database of 2^31 pages (checksums made
    right) is no MemoryError and no empty table: what a header may claim is
    bounded by what the files hold."""
    state = tmp_path / "state"
    held = _wal_only(state)
    wal = Path(f"{state / 'journal.sqlite'}-wal")
    data = bytearray(wal.read_bytes())
    last = max(k for k in range(_frames(bytes(data)))
               if struct.unpack(">I", data[32 + k * (24 + PAGE) + 4:32 + k * (24 + PAGE) + 8])[0])
    _reframe(data, last, 1 << 31)
    wal.write_bytes(bytes(data))
    os.truncate(state / "journal.sqlite", 0)  # and the main file lost: the salvage reads the WAL
    got, _keys, messages = started(state)
    assert got == held, messages


def test_finding_rows_that_are_not_inputs_are_quarantined_after_a_recovery(tmp_path: Path) -> None:
    """Salvaged rows of NUL text with times that are not the table's are not
    inputs, wherever they are — before the checkpoint too."""
    state = tmp_path / "state"
    played(state, games=1)
    shutil.rmtree(state / "backups")
    path = state / "journal.sqlite"
    db = sqlite3.connect(path)
    db.execute("UPDATE inputs SET input=?, t=-1e12, wall=0 WHERE seq=3", ("\0" * 40,))
    db.commit()
    db.close()
    folded(path)
    with open(path, "r+b") as f:
        f.write(b"\0" * 16)  # the file's magic gone: recovered page by page
    got, keys, messages = started(state)
    assert 3 not in [seq for seq, *_ in got], messages
    assert "journal.rows_set_aside" in keys
    db = sqlite3.connect(path)
    try:
        assert db.execute("SELECT row_id FROM quarantine WHERE source='inputs'").fetchall() == [(3,)]
    finally:
        db.close()


# ------------------------------------------------------------ losses counted
def test_finding_a_lost_tail_is_counted_as_far_as_the_numbering_shows(tmp_path: Path) -> None:
    """The WAL damaged at its first frame with the tail's frames intact
    behind it is read; the WAL gone, the last backup's number and the plays'
    and checkpoint's seqs still say how far the journal went: the table hears
    how many inputs could not be recovered."""
    state = tmp_path / "state"
    held = played(state, games=2, more=5)
    top = held[-1][0]
    newest = backups.backups(state / "journal.sqlite")[0]
    assert int(newest.name.split("-")[1]) < top
    Path(f"{state / 'journal.sqlite'}-wal").unlink()  # the tail past the last backup: gone
    os.truncate(state / "journal.sqlite", 0)
    newest.write_bytes(newest.read_bytes()[:-100] + b"\xff" * 100)  # the last backup damaged too
    got, keys, messages = started(state)
    assert "journal.lost_some" in keys, messages
    shown = int(newest.name.split("-")[1])
    assert any(f"{shown - len(got)} inputs" in m for m in messages if "could not be recovered" in m), messages


# ------------------------------------------------------------------ backups
def test_finding_a_backup_made_after_the_clock_went_back_is_kept(tmp_path: Path) -> None:
    """The clock jumped back a day: rotation orders backups by what they
    hold, so each one made now (the most inputs) is kept, not deleted as made."""
    state = tmp_path / "state"
    played(state, games=2)
    journal = state / "journal.sqlite"
    for p in backups.backups(journal):
        os.utime(p, (p.stat().st_mtime + 86400, p.stat().st_mtime + 86400))  # made "tomorrow"
    top = played(state, games=1)[-1][0]
    kept = backups.backups(journal)
    assert len(kept) == backups.BACKUPS_KEPT and f"-{top:09d}-" in kept[0].name, [p.name for p in kept]


def test_finding_a_backup_of_another_journal_does_not_push_out_this_ones(tmp_path: Path) -> None:
    """Backups of an earlier line (before a restore: another epoch) hold
    more inputs; this journal's own newest backups are still the ones kept."""
    state = tmp_path / "state"
    journal = state / "journal.sqlite"
    played(state, games=1)
    earlier = tmp_path / "earlier.sqlite"
    shutil.copyfile(backups.backups(journal)[0], earlier)  # at the game's end
    played(state, games=2)
    for p in backups.backups(journal):
        os.utime(p, (p.stat().st_mtime + 86400, p.stat().st_mtime + 86400))  # and made "tomorrow"
    backups.restore(journal, earlier)
    played(state, games=1)  # the restored line's backups: fewer inputs, older file times
    mine = backups.epoch_at(journal)
    kept = [backups.epoch_at(p) for p in backups.backup_dir(journal).glob("journal-*.sqlite")]
    assert kept == [mine] * backups.BACKUPS_KEPT


def test_finding_a_backup_of_another_table_is_never_taken_for_this_ones(tmp_path: Path) -> None:
    """A backup belongs to one journal (the identity both carry from its first
    input): another table's backup, holding more inputs, left in this table's
    backups folder (a state folder copied, a card moved between tables), is never
    read as this journal's past — the healthy journal is kept as it is, and
    rotation never removes the other table's file."""
    from companion.runtime.journal_identity import identity_at
    from qa.reliability.sticks import another_evening

    state, other = tmp_path / "state", tmp_path / "other"
    mine = played(state, games=1, more=5)
    with another_evening():
        played(other, games=2)
    theirs = backups.backups(other / "journal.sqlite")[0]
    assert identity_at(theirs) != identity_at(state / "journal.sqlite")
    stranger = backups.backup_dir(state / "journal.sqlite") / theirs.name
    shutil.copyfile(theirs, stranger)
    after, said, _ = started(state)
    assert after[:len(mine)] == mine and len(after) == len(mine), "another table's inputs were taken"
    assert not any("recover" in line.lower() for line in said), said
    played(state, games=1)  # more backups of this journal, and a rotation
    assert stranger.exists()
