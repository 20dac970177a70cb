"""The journal's guards: one daemon per journal; a corrupt journal is kept
aside, recovered and reported, never a traceback or a crash loop; schema
versions; bad rows quarantined; the WAL checkpointed and backed up.

Expected counts come from the scripts played here (how many inputs the
journal held before the damage), not from the recovery code."""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from companion.app import doctor, scores  # noqa: E402
from companion.core.events import Press  # noqa: E402
from companion.runtime import backups, journal_check, state_lock  # noqa: E402
from companion.runtime.journal import SCHEMA_VERSION, Journal, JournalTooNew  # noqa: E402
from companion.runtime.state_lock import StateLock, StateLocked  # noqa: E402
from qa.reliability.inproc import Runner  # noqa: E402
from qa.reliability.proc import child_env, companion_cmd  # noqa: E402
from qa.reliability.scripts import generate, press, tap  # noqa: E402

GATHER = [tap("game/seven-knights"), tap("player/red"), tap("player/blue"), tap("player/green")]


def played(state: Path, games: int = 1, extra: list[Any] | None = None) -> tuple[int, list[dict[str, Any]]]:
    """Play ``games`` whole Seven Knights games (and then ``extra`` steps) into
    ``state``; (inputs in the journal, the table's events)."""
    r = Runner(state)
    try:
        for g in range(games):
            for step in generate(40 + g, games=["seven-knights"]).steps:
                r.run(step)
        for step in extra or []:
            r.run(step)
    finally:
        r.close()
    j = Journal(state / "journal.sqlite")
    n = j.count_inputs()
    j.close()
    return n, r.events


def restart(state: Path) -> tuple[Runner, list[dict[str, Any]]]:
    r = Runner(state)
    return r, r.events


def errors(events: list[dict[str, Any]]) -> list[str]:
    return [e["message"] for e in events if e["event"] == "error"]


def said(events: list[dict[str, Any]]) -> list[str]:
    return [e["key"] for e in events if e["event"] == "say"]


def aside_files(state: Path) -> list[Path]:
    return sorted(p for p in state.iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm")))


# --------------------------------------------------- 1. one daemon per journal
def test_two_daemons_on_one_state_directory_the_second_is_refused_naming_the_first(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = subprocess.Popen(companion_cmd("run", "--simulate", "--json", "--state", str(state), "--voice", "silent"),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=child_env(), cwd=tmp_path)
    try:
        assert first.stdout is not None
        for line in first.stdout:
            if '"started"' in line:
                break
        second = subprocess.run(companion_cmd("run", "--simulate", "--json", "--state", str(state)),
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                                env=child_env(), cwd=tmp_path)
        assert second.returncode == 1
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in second.stderr, second.stderr
        assert f"pid {first.pid}" in lines[0] and "run --simulate" in lines[0], lines[0]
        assert not [ln for ln in second.stdout.splitlines() if '"accepted"' in ln]
        # read-only commands still work beside it
        sc = subprocess.run(companion_cmd("scores", "--state", str(state)), capture_output=True, text=True,
                            timeout=60, env=child_env(), cwd=tmp_path)
        assert sc.returncode == 0 and "No game in progress." in sc.stdout, sc.stderr
    finally:
        assert first.stdin is not None
        first.stdin.write("quit\n")
        first.stdin.close()
        assert first.wait(30) == 0


def test_the_lock_goes_with_the_process_and_is_taken_again(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    lock = StateLock(path)
    with pytest.raises(StateLocked, match=f"pid {os.getpid()}"):
        StateLock(path)
    assert state_lock.held_by(path) is not None
    lock.release()
    assert state_lock.held_by(path) is None
    StateLock(path).release()


def _read_only_mount_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount --make-rprivate / && mount -t tmpfs none /mnt"],
                           capture_output=True, timeout=10, check=False)
    return probe.returncode == 0


@pytest.mark.parametrize("with_journal", [False, True], ids=["a fresh card", "a card with a journal"])
def test_starting_on_a_read_only_card_is_one_line_and_exit_1(tmp_path: Path, with_journal: bool) -> None:
    """The lock file on a card that is read-only (as root,
    chmod stops nothing: a read-only bind mount in a mount namespace of the
    test's own) was a raw ``OSError: [Errno 30]`` traceback."""
    if not _read_only_mount_works():
        pytest.skip("no mount namespace here (unshare -m needs CAP_SYS_ADMIN)")
    state = tmp_path / "state"
    if with_journal:
        played(state, games=0, extra=GATHER)
    else:
        state.mkdir()
    before = sorted((p.name, p.stat().st_size) for p in state.iterdir())
    run = " ".join(companion_cmd("run", "--simulate", "--json", "--voice", "silent", "--state", str(state)))
    script = (f"mount --make-rprivate / && mount --bind {state} {state} && mount -o remount,ro,bind {state} {state}"
              f" && exec {run}")
    p = subprocess.run(["unshare", "-m", "sh", "-c", script], stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60, env=child_env(), cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert p.stderr.strip() == (f"companion: {state} cannot be written (Read-only file system): the journal needs "
                                "a writable state directory (a card that turned read-only needs fsck or "
                                "replacing; a wrong owner, chown)"), p.stderr
    assert not [ln for ln in p.stdout.splitlines() if '"accepted"' in ln]
    assert sorted((p.name, p.stat().st_size) for p in state.iterdir()) == before


# ---------------------------------------------- 2. a corrupt journal at start
def _garbage_at_page(page: int | str) -> Any:
    """Random bytes over most of a page: a number (0: the header and schema),
    or a table's root page."""
    def damage(path: Path) -> None:
        at = page
        if isinstance(page, str):
            db = sqlite3.connect(path)
            at = db.execute("SELECT rootpage FROM sqlite_master WHERE name=?", (page,)).fetchone()[0] - 1
            db.close()
        with open(path, "r+b") as f:
            f.seek(int(at) * 4096 + (100 if at == 0 else 0))  # page 0: keep the file header
            f.write(os.urandom(3996))
    return damage


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2 + 100)


def _not_a_database(path: Path) -> None:
    path.write_text("this is not a database\n" * 200)


def _a_directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


DAMAGES = {"garbage-at-page-0": _garbage_at_page(0), "garbage-in-inputs": _garbage_at_page("inputs"),
           "garbage-in-plays": _garbage_at_page("plays"), "truncated": _truncate,
           "not-a-database": _not_a_database, "a-directory": _a_directory}


def _checkpointed(state: Path) -> None:
    j = Journal(state / "journal.sqlite")
    j.checkpoint_wal()  # the damage must reach the main file, not a WAL SQLite would read first
    j.close()


@pytest.mark.parametrize("kind", sorted(DAMAGES))
def test_a_corrupt_journal_is_kept_aside_recovered_and_said_never_a_traceback(tmp_path: Path, kind: str) -> None:
    state = tmp_path / "state"
    n, _ = played(state, games=2)
    shutil.rmtree(state / "backups")  # recovery from the damaged file alone (the backup is the next test)
    _checkpointed(state)
    DAMAGES[kind](state / "journal.sqlite")
    r, events = restart(state)
    try:
        kept = aside_files(state)
        assert len(kept) == 1, list(state.iterdir())  # the damaged file, never deleted
        assert (state / "journal.sqlite").is_file()
        errs = errors(events)
        assert len([m for m in errs if "kept as" in m]) == 1, errs
        assert kept[0].name in errs[0]
        keys = said(events)
        assert keys[0] in ("journal.recovered", "journal.started_fresh"), keys
        recovered = r.sim.app.journal.count_inputs()
        assert recovered <= n
        if kind == "garbage-in-plays":
            assert recovered == n  # the inputs' pages were not hit
        resp = r.step(tap("game/seven-knights"))  # the table works: no "could not save" forever
        assert resp is not None and resp.get("reason") != "could not save; tap again", resp
    finally:
        r.close()
    # a second start is quiet: the damage is reported once, not at every start
    r, events = restart(state)
    r.close()
    assert not errors(events) and not [k for k in said(events) if k.startswith("journal.")]


@pytest.mark.parametrize("damage,said_why", [(_not_a_database, "cannot be read"),
                                              (Path.unlink, "missing")], ids=["not-a-database", "deleted"])
def test_a_corrupt_journal_with_a_backup_recovers_every_input_the_backup_holds(
        tmp_path: Path, damage: Any, said_why: str) -> None:
    """Not a database any more, or deleted (the SD card lost it): the
    newest backup (one after each game) brings every game back."""
    state = tmp_path / "state"
    n, _ = played(state, games=2)
    _checkpointed(state)
    damage(state / "journal.sqlite")
    r, events = restart(state)
    try:
        assert r.sim.app.journal.count_inputs() == n
        assert said(events)[0] == "journal.recovered"
        line = next(e for e in events if e["event"] == "say")
        assert f"recovered {n} taps" in line["text"]
        assert said_why in errors(events)[0] and "backup journal-" in errors(events)[0]
    finally:
        r.close()


def test_partial_corruption_of_plays_does_not_block_the_game_nor_break_scores(tmp_path: Path) -> None:
    state = tmp_path / "state"
    n, _ = played(state, games=2)
    db = sqlite3.connect(state / "journal.sqlite")
    db.execute("UPDATE plays SET play='{not json' WHERE id=1")
    db.commit()
    db.close()
    out = io.StringIO()
    assert scores.run(argparse.Namespace(state=state, export=None, output=None, config=[]), out) == 0
    assert "History: 1 plays" in out.getvalue() and "1 unreadable" in out.getvalue()
    r, events = restart(state)
    try:
        assert any("plays row 1" in m and "quarantine" in m for m in errors(events)), errors(events)
        for step in generate(41, games=["seven-knights"]).steps:
            resp, _ = r.run(step)
            assert resp is None or resp.get("reason") != "could not save; tap again"
        assert len(r.sim.app.journal.plays()) == 2  # one new, the bad one in quarantine
    finally:
        r.close()


@pytest.mark.parametrize("kind", sorted(DAMAGES))
def test_scores_on_a_corrupt_journal_says_so_without_a_traceback(tmp_path: Path, kind: str) -> None:
    state = tmp_path / "state"
    played(state, games=1)
    _checkpointed(state)
    DAMAGES[kind](state / "journal.sqlite")
    p = subprocess.run(companion_cmd("scores", "--state", str(state)), capture_output=True, text=True, timeout=60,
                       env=child_env(), cwd=tmp_path)
    assert "Traceback" not in p.stderr + p.stdout, p.stderr
    assert p.returncode in (0, 1)
    if p.returncode == 1:
        assert "damaged" in p.stderr and "companion doctor" in p.stderr, p.stderr


def test_doctor_checks_the_journal_and_names_the_backup(tmp_path: Path) -> None:
    state = tmp_path / "state"
    played(state, games=1)
    result = doctor.check_journal(state)
    assert result.status == doctor.OK and "backup it would use: journal-" in result.detail, result
    _checkpointed(state)
    _garbage_at_page(1)(state / "journal.sqlite")
    result = doctor.check_journal(state)
    assert result.status == doctor.FAIL and "damaged" in result.detail and "journal-" in result.detail, result
    assert not aside_files(state)  # doctor only looks


# ------------------------------------------------ 3. schema version, bad rows
def test_a_journal_from_a_newer_release_is_refused_untouched(tmp_path: Path) -> None:
    state = tmp_path / "state"
    played(state, games=0, extra=GATHER)
    db = sqlite3.connect(state / "journal.sqlite")
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    before = (state / "journal.sqlite").read_bytes()
    with pytest.raises(JournalTooNew, match="newer companion"):
        Runner(state)
    p = subprocess.run(companion_cmd("run", "--simulate", "--json", "--state", str(state)), stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60, env=child_env(), cwd=tmp_path)
    assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and "newer companion" in p.stderr
    assert (state / "journal.sqlite").read_bytes() == before
    assert state_lock.held_by(state / "journal.sqlite") is None  # refused, and the lock let go


def test_an_unversioned_journal_is_migrated(tmp_path: Path) -> None:
    state = tmp_path / "state"
    n, _ = played(state, games=0, extra=GATHER)
    db = sqlite3.connect(state / "journal.sqlite")
    db.execute("DROP TABLE quarantine")
    db.execute("PRAGMA user_version=0")
    db.close()
    r, events = restart(state)
    try:
        assert r.sim.app.journal.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert r.sim.app.journal.count_inputs() == n + 0 and not errors(events)
        assert said(events)[0] == "table.resumed_gathering"
    finally:
        r.close()


BAD_ROWS = {
    "unknown-input-kind": ("inputs", json.dumps({"gesture": "wave"})),
    "non-json-input": ("inputs", "{tap: player/red"),
}


@pytest.mark.parametrize("kind", sorted(BAD_ROWS))
def test_a_bad_input_row_is_reported_with_its_id_and_quarantined(tmp_path: Path, kind: str) -> None:
    state = tmp_path / "state"
    n, _ = played(state, games=0, extra=GATHER)
    db = sqlite3.connect(state / "journal.sqlite")
    db.execute("INSERT INTO inputs (seq, t, wall, input) VALUES (?, 0, ?, ?)", (n + 1, time.time(), BAD_ROWS[kind][1]))
    db.commit()
    db.close()
    r, events = restart(state)
    try:
        assert any(f"inputs row {n + 1}" in m for m in errors(events)), errors(events)
        assert "journal.rows_set_aside" in said(events)
        q = r.sim.app.journal.db.execute("SELECT source, row_id, data FROM quarantine").fetchall()
        assert q == [("inputs", n + 1, BAD_ROWS[kind][1])]
        assert r.sim.loop.table.players  # the gathering survived
    finally:
        r.close()


@pytest.mark.parametrize("state_json", ['[1, 2]', '{"foo": 1}', '{"phase": "idle", "seats": 3}', 'nope'])
def test_a_checkpoint_of_the_wrong_shape_is_quarantined_and_the_table_replayed_whole(
        tmp_path: Path, state_json: str) -> None:
    """Never a silent reset: the checkpoint goes, every input is replayed
    from the first, and the standings come out as before."""
    state = tmp_path / "state"
    played(state, games=1)
    r, _ = restart(state)
    standings = dict(r.sim.loop.table.state.standings)
    r.close()
    assert standings
    db = sqlite3.connect(state / "journal.sqlite")
    db.execute("UPDATE checkpoint SET state=?", (state_json,))
    db.commit()
    db.close()
    r, events = restart(state)
    try:
        assert any("checkpoint row 1" in m for m in errors(events)), errors(events)
        assert r.sim.loop.table.state.standings == standings
    finally:
        r.close()


# ------------------------------------------------------------------ 4. the WAL
def test_the_wal_is_checkpointed_at_game_end_and_a_backup_made(tmp_path: Path) -> None:
    state = tmp_path / "state"
    n, events = played(state, games=1)
    found = backups.backups(state / "journal.sqlite")
    assert len(found) == 3  # after rounds 1 and 2, and after the game (which ends with round 3)
    b = sqlite3.connect(found[0])
    assert b.execute("SELECT count(*) FROM plays").fetchone()[0] == 1
    assert b.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # self-contained: no WAL to lose
    b.close()
    assert not [e for e in events if e["event"] == "error"]


def test_backup_rotation_keeps_the_newest_and_one_per_earlier_night(tmp_path: Path) -> None:
    state = tmp_path / "state"
    played(state, games=5)
    names = [p.name for p in backups.backups(state / "journal.sqlite")]
    assert len(names) == backups.BACKUPS_KEPT  # one night: the newest three


def test_backup_and_restore_commands(tmp_path: Path) -> None:
    state = tmp_path / "state"
    n, _ = played(state, games=1, extra=GATHER)
    target = tmp_path / "copy.sqlite"
    p = subprocess.run(companion_cmd("backup", "--state", str(state), str(target)), capture_output=True, text=True,
                       timeout=60, env=child_env(), cwd=tmp_path)
    assert p.returncode == 0 and str(target) in p.stdout, p.stderr
    played(state, games=0, extra=[press("back")])
    p = subprocess.run(companion_cmd("restore", "--state", str(state), str(target)), capture_output=True, text=True,
                       timeout=60, env=child_env(), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert f"{n} inputs" in p.stdout and "kept as" in p.stdout
    j = Journal(state / "journal.sqlite")
    assert j.count_inputs() == n
    j.close()
    assert not aside_files(state) and len(list(state.glob("journal.sqlite.replaced-*"))) == 1


def test_finding_a_restored_older_backup_is_not_undone_at_the_next_start(tmp_path: Path) -> None:
    """The start-up check takes a journal that lacks what its newest backup
    holds for one cut short, and merges that backup back in: a restore of any
    backup older than the newest was silently undone when the daemon started
    again.  A restore gives the journal a new epoch; a backup of another epoch
    is not this journal's past."""
    state = tmp_path / "state"
    n, _ = played(state, games=1)
    target = tmp_path / "after-one.sqlite"
    j = Journal(state / "journal.sqlite")
    backups.make_backup(j, target)
    j.close()
    more, _ = played(state, games=1)
    assert more > n and backups.backups(state / "journal.sqlite")  # a game-end backup newer than the target
    backups.restore(state / "journal.sqlite", target)
    r, events = restart(state)
    try:
        assert not errors(events)
        assert r.sim.loop.journal.count_inputs() == n
    finally:
        r.close()
    n2, events = played(state, games=1)  # and played on from there, the next start is quiet too
    assert n2 > n and not errors(events)


def test_after_a_restore_the_journal_is_held_against_its_own_epochs_backups(tmp_path: Path) -> None:
    """After a restore the backups made before it hold more inputs than the
    restored line for a while: the start-up check must hold the journal against
    the newest backup of its own epoch, or a journal cut short after the restore
    would go unnoticed (and a recovery would bring back the history the restore
    took away)."""
    state = tmp_path / "state"
    played(state, games=1)
    target = tmp_path / "after-one.sqlite"
    j = Journal(state / "journal.sqlite")
    backups.make_backup(j, target)
    j.close()
    played(state, games=2)
    backups.restore(state / "journal.sqlite", target)
    n, _ = played(state, games=1)  # a game-end backup of the restored line: fewer inputs than the old line's
    db = sqlite3.connect(state / "journal.sqlite")
    db.execute("DELETE FROM inputs WHERE seq = (SELECT max(seq) FROM inputs)")  # cut short
    db.commit()
    db.close()
    r, events = restart(state)
    try:
        [message] = [m for m in errors(events) if "lacks inputs" in m]
        assert r.sim.loop.journal.count_inputs() == n  # what its own backup held came back, nothing older
    finally:
        r.close()


def test_restore_is_refused_while_a_daemon_holds_the_journal(tmp_path: Path) -> None:
    state = tmp_path / "state"
    played(state, games=1)
    backup = backups.backups(state / "journal.sqlite")[0]
    lock = StateLock(state / "journal.sqlite")
    try:
        p = subprocess.run(companion_cmd("restore", "--state", str(state), str(backup)), capture_output=True,
                           text=True, timeout=60, env=child_env(), cwd=tmp_path)
        assert p.returncode == 1 and f"pid {os.getpid()}" in p.stderr and "Traceback" not in p.stderr
    finally:
        lock.release()
    assert not aside_files(state)


def test_restore_refuses_a_damaged_file(tmp_path: Path) -> None:
    state = tmp_path / "state"
    played(state, games=0, extra=GATHER)
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"SQLite format 3\0" + os.urandom(5000))
    p = subprocess.run(companion_cmd("restore", "--state", str(state), str(bad)), capture_output=True, text=True,
                       timeout=60, env=child_env(), cwd=tmp_path)
    assert p.returncode == 1 and str(bad) in p.stderr and "Traceback" not in p.stderr
    assert not aside_files(state)


# Restore checks the file before it trusts it: each refused with one line, exit 1, nothing changed.
def _state_now(state: Path) -> list[tuple[str, int, int]]:
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in state.iterdir() if p.is_file())


def _restore_refused(tmp_path: Path, source: Path, reason: str) -> None:
    """``companion restore source`` onto a state with a game in progress is
    refused for ``reason``, and the journal is as it was."""
    state = tmp_path / "state"
    if not (state / "journal.sqlite").exists():
        played(state, games=0, extra=GATHER)
    j = Journal(state / "journal.sqlite", readonly=True)
    n = j.count_inputs()
    j.close()
    before = _state_now(state)
    p = subprocess.run(companion_cmd("restore", "--state", str(state), str(source)), capture_output=True, text=True,
                       timeout=30, env=child_env(), cwd=tmp_path)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert p.stderr.strip() == f"companion restore: {source}: {reason}; nothing changed", p.stderr
    assert _state_now(state) == before
    j = Journal(state / "journal.sqlite", readonly=True)
    assert j.count_inputs() == n
    j.close()


def _a_backup(tmp_path: Path, name: str = "b.sqlite") -> Path:
    """A good backup of one played game, as `companion backup FILE` makes it."""
    src = tmp_path / "played"
    played(src, games=1)
    j = Journal(src / "journal.sqlite", readonly=True)
    try:
        return backups.make_backup(j, tmp_path / name)
    finally:
        j.close()


def _edited(path: Path, *sql: str) -> Path:
    db = sqlite3.connect(path, isolation_level=None)
    for statement in sql:
        db.execute(statement)
    db.close()
    return path


def test_restore_refuses_a_journal_with_a_trigger(tmp_path: Path) -> None:
    """Restored, the table acknowledged three inputs and stored none."""
    bad = _edited(_a_backup(tmp_path), "CREATE TRIGGER eat AFTER INSERT ON inputs BEGIN "
                                       "DELETE FROM inputs WHERE seq = new.seq; END")
    _restore_refused(tmp_path, bad, "it holds a trigger a journal never has (eat)")


def test_restore_refuses_a_journal_with_a_view(tmp_path: Path) -> None:
    bad = _edited(_a_backup(tmp_path), "CREATE VIEW v AS SELECT * FROM inputs")
    _restore_refused(tmp_path, bad, "it holds a view a journal never has (v)")


def test_restore_refuses_the_right_tables_with_the_wrong_columns(tmp_path: Path) -> None:
    """Restored, then a crash loop: ``no such column: seq``."""
    bad = _edited(tmp_path / "columns.sqlite",
                  "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
                  "CREATE TABLE inputs (id INTEGER PRIMARY KEY, t REAL, wall REAL, input TEXT)",
                  "CREATE TABLE plays (id INTEGER PRIMARY KEY, seq INTEGER, session INTEGER, game TEXT, play TEXT)",
                  "CREATE TABLE checkpoint (id INTEGER PRIMARY KEY, seq INTEGER, state TEXT)",
                  "INSERT INTO inputs VALUES (1, 0.0, 0.0, '{}')")
    _restore_refused(tmp_path, bad, "its checkpoint, inputs, plays tables are not the journal's (other columns or constraints)")


def test_restore_refuses_a_journal_from_a_newer_release(tmp_path: Path) -> None:
    """Restored, then refused at every start."""
    bad = _edited(_a_backup(tmp_path), f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    _restore_refused(tmp_path, bad, f"it was written by a newer companion (journal version {SCHEMA_VERSION + 1}; "
                                    f"this one reads up to {SCHEMA_VERSION}): restore it with that release")


def test_restore_refuses_a_fifo_without_opening_it(tmp_path: Path) -> None:
    """It hung, opening a pipe nobody writes to."""
    fifo = tmp_path / "pipe.sqlite"
    os.mkfifo(fifo)
    _restore_refused(tmp_path, fifo, "it is not a regular file (a FIFO)")


@pytest.mark.parametrize("how", ["the path", "a symlink to it"])
def test_restore_refuses_the_journal_onto_itself(tmp_path: Path, how: str) -> None:
    """It moved the journal aside, then failed with a traceback: 4 of 30
    inputs and the game in progress were gone."""
    state = tmp_path / "state"
    played(state, games=1, extra=GATHER)
    source = state / "journal.sqlite"
    if how == "a symlink to it":
        (tmp_path / "link.sqlite").symlink_to(source)
        source = tmp_path / "link.sqlite"
    _restore_refused(tmp_path, source,
                     "it is the journal itself: restore a backup of it (backups/ in the state directory)")


def test_a_backup_of_an_older_version_is_still_restored(tmp_path: Path) -> None:
    """The exact check knows each version's schema: a version-0 journal (no
    quarantine table) is one this release reads, and migrates on open."""
    old = _edited(_a_backup(tmp_path), "DROP TABLE quarantine", "DROP TABLE outbox", "DROP TABLE outbox_sent", "PRAGMA user_version=0")
    assert backups.restore_problem(tmp_path / "state" / "journal.sqlite", old) is None
    state = tmp_path / "state"
    what, _aside = backups.restore(state / "journal.sqlite", old)
    j = Journal(state / "journal.sqlite")
    assert j.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION and j.count_inputs() > 0
    j.close()


def test_mqtt_outbox_a_version_1_backup_without_the_outbox_is_restored_and_gains_it(tmp_path: Path) -> None:
    """Version 2 added the MQTT outbox: a journal (or backup) of version 1 is
    still one this release reads, and gets its outbox on open."""
    old = _edited(_a_backup(tmp_path), "DROP TABLE outbox", "DROP TABLE outbox_sent", "PRAGMA user_version=1")
    assert backups.restore_problem(tmp_path / "state" / "journal.sqlite", old) is None
    state = tmp_path / "state"
    backups.restore(state / "journal.sqlite", old)
    j = Journal(state / "journal.sqlite")
    assert j.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    assert j.db.execute("SELECT count(*) FROM outbox").fetchone()[0] == 0 and j.count_inputs() > 0
    j.close()


def test_a_flipped_byte_in_a_backup_is_caught_by_the_checksum_in_its_name(tmp_path: Path) -> None:
    """SQLite checks structure, not a row's text: 'skb/knight' → 'skb/jnight' passes its check."""
    state = tmp_path / "state"
    played(state, games=1)
    b = backups.backups(state / "journal.sqlite")[0]  # the newest: the one a recovery would use
    assert "-crc" in b.name
    data = bytearray(b.read_bytes())
    data[data.find(b"skb/knight") + 4] ^= 0x01
    b.write_bytes(bytes(data))
    assert journal_check.file_problem(b, tables=("inputs",)) is None
    r, events = restart(state)
    r.close()
    assert [m for m in errors(events) if "checksum does not match" in m and b.name in m]
    assert not b.exists() and list(b.parent.glob(b.name + ".damaged-*"))


def test_the_daemon_backs_up_on_a_thread_of_its_own_with_its_own_connections(tmp_path: Path) -> None:
    """While the loop's connection stays open (and could be writing), the
    backup thread checkpoints and copies through connections of its own."""
    import threading

    state = tmp_path / "state"
    played(state, games=1)
    journal = Journal(state / "journal.sqlite")
    journal.append(Press("next"), 1.0, time.time())
    reported: list[str] = []
    before = set(backups.backups(journal.path))
    backups.GameEndBackups(journal, reported.append, background=True)()
    for t in [t for t in threading.enumerate() if t.name == "backup"]:
        t.join(30)
    new = set(backups.backups(journal.path)) - before
    assert not reported and len(new) == 1
    b = sqlite3.connect(new.pop())
    assert b.execute("SELECT count(*) FROM inputs").fetchone()[0] == journal.count_inputs()
    b.close()
    # Checkpointed (TRUNCATE) from the other connection, and the next WAL begun there: one frame.
    page = journal.db.execute("PRAGMA page_size").fetchone()[0]
    assert (state / "journal.sqlite-wal").stat().st_size == 32 + 24 + page
    journal.close()


def test_a_reader_beside_the_daemon_never_makes_the_next_tap_wait(tmp_path: Path) -> None:
    """A read transaction open when a game ends (`companion
    scores` beside the daemon) made the backup's wal_checkpoint(TRUNCATE) hold
    the write lock while it waited on the reader: the next tap waited 5 s and
    was refused "could not save".  The backup never holds the lock waiting."""
    import threading

    state = tmp_path / "state"
    r = Runner(state)
    reported: list[str] = []
    try:
        r.sim.loop.after_input = backups.GameEndBackups(r.sim.app.journal, reported.append,
                                                         background=True).after_input
        steps = generate(40, games=["seven-knights"]).steps
        for step in steps[:-1]:
            r.run(step)
        reader = sqlite3.connect(f"file:{state / 'journal.sqlite'}?mode=ro", uri=True, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM inputs").fetchone()  # a snapshot held, as `scores` holds one
        r.run(steps[-1])  # the game ends: the backup thread starts
        assert [e for e in r.events if e["event"] == "game_over"]
        # Until the backup is done, or it holds the write lock (a tap would wait behind it).
        probe = sqlite3.connect(state / "journal.sqlite", timeout=0, isolation_level=None)
        for _ in range(500):
            if not [t for t in threading.enumerate() if t.name == "backup"]:
                break
            try:
                probe.execute("BEGIN IMMEDIATE")
                probe.execute("ROLLBACK")
            except sqlite3.OperationalError:
                break  # taken: the tap below finds it so
            time.sleep(0.01)
        probe.close()
        before = r.sim.app.journal.count_inputs()
        got = r.step(tap("game/seven-knights"))
        assert got is not None and got["event"] == "accepted", got
        assert r.sim.app.journal.count_inputs() == before + 1
        reader.close()
        for t in [t for t in threading.enumerate() if t.name == "backup"]:
            t.join(30)
        assert not reported and not errors(r.events)
        assert backups.backups(state / "journal.sqlite")  # the backup was still made
    finally:
        r.close()


def test_finding_a_lock_released_by_two_threads_at_once_closes_its_descriptor_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A signal's close and a finally's may release the state lock at the same
    moment: its descriptor is closed once (a second close raised EBADF in the
    closing thread, or closed a file that had been given the number since)."""
    import threading

    lock = StateLock(tmp_path / "journal.sqlite")
    fd, real, closed, errors = lock.fd, os.close, [], []

    def slow_close(n: int) -> None:  # both releases inside the check-then-close at once
        time.sleep(0.05)
        closed.append(n)
        real(n)

    def release() -> None:
        try:
            lock.release()
        except OSError as e:
            errors.append(e)

    monkeypatch.setattr(state_lock.os, "close", slow_close)
    both = [threading.Thread(target=release) for _ in range(2)]
    for t in both:
        t.start()
    for t in both:
        t.join(10)
    monkeypatch.undo()
    assert errors == [] and closed == [fd] and lock.fd is None
    StateLock(tmp_path / "journal.sqlite").release()  # the flock went with it
