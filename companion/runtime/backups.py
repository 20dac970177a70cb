"""Backups of the journal: made through SQLite's online backup API after
each scored round and each finished game (see ``after_game`` for why then),
named with their input count and a checksum, rotated by games night, checked
before use, restored on request."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from companion.core.events import ROUND_SCORED, Output, Report
from companion.runtime.journal import (
    Journal,
    checkpoint_without_waiting,
    epoch_at,
    fsync_dir,
    new_epoch,
    read_only,
)
from companion.runtime.journal_check import DB_ERRORS, Notice, file_problem, schema_problem, set_aside
from companion.runtime.journal_identity import identity_at
from companion.runtime.state_lock import StateLock

BACKUPS_KEPT = 3  # the newest automatic backups kept, plus the last one of each earlier night…
NIGHTS_KEPT = 3  # …for this many earlier games nights

# journal-<inputs>-<time>-crc<CRC-32 of the file>.sqlite: the checksum in the name
# catches a flipped byte that SQLite's own check cannot (inside a row's text).
_BACKUP_NAME = re.compile(r"^(journal|manual)-(\d+)-.*?(?:-crc([0-9a-f]{8}))?\.sqlite$")


def backup_dir(journal_path: Path) -> Path:
    return journal_path.parent / "backups"


def backups(journal_path: Path, epoch: str | None = None, identity: str | None = None) -> list[Path]:
    """Backups of this journal, newest first by what they hold, never by
    file time (a clock set back a day made each new backup the "oldest", and
    rotation deleted it as it was made): with the journal's ``epoch`` given,
    those of that epoch first (after a restore, the earlier line's hold more
    inputs but are not this journal's past); by the last input's number in
    the name.  The journal itself is not opened here: a reader opening a
    journal whose WAL is damaged can reset its index, the evidence the
    start-up check reads (journal_check.diagnose)."""
    folder = backup_dir(journal_path)
    try:
        found = [(int(m.group(2)), p) for p in folder.iterdir() if (m := _BACKUP_NAME.match(p.name))]
    except OSError:
        return []
    check = (epoch is not None or identity is not None) and len(found) > 1
    # The name's time breaks a tie between two of one input (a round's end, then the game's).
    return [p for _, _, p in sorted(((check and _of(p, epoch, identity), seq, p) for seq, p in found),
                                    key=lambda x: (x[0], x[1], x[2].name), reverse=True)]


def _of(backup: Path, epoch: str | None, identity: str | None) -> bool:
    """Is ``backup`` of this journal (its ``identity``: runtime.journal_identity) and of its line (``epoch``)?"""
    return ((epoch is None or epoch_at(backup) == epoch)
            and (identity is None or identity_at(backup) in (identity, None)))


def newest_intact_backup(journal_path: Path, notices: list[Notice] | None = None, *,
                         look_only: bool = False, epoch: str | None = None, identity: str | None = None,
                         seen: list[tuple[int, str | None]] | None = None) -> Path | None:
    """The backup recovery would use.  Every backup is checked (a few small
    files): damaged ones are set aside (renamed, never deleted) and reported
    — unless ``look_only`` (doctor).  ``epoch``: only a backup of that epoch
    (runtime.journal.EPOCH) counts — one made before a restore is not the
    restored journal's past; ``identity``: only a backup of that journal —
    another table's is never its past.  ``seen`` gets (the last input's number its name
    gives, its epoch if it can be read) of each, damaged ones too: how far
    the journal went, for a recovery to count what it lost."""
    best = None
    for candidate in backups(journal_path, epoch, identity):
        problem = backup_problem(candidate)
        m = _BACKUP_NAME.match(candidate.name)
        if seen is not None and m:
            seen.append((int(m.group(2)), epoch_at(candidate) if candidate.is_file() else None))
        if problem is None:
            if best is None and _of(candidate, epoch, identity):
                best = candidate
            continue
        if look_only:
            continue
        aside = set_aside(candidate)
        if notices is not None:
            notices.append(Notice(None, {}, f"backup {candidate.name} is damaged ({problem}); "
                                  f"kept as {aside.name}, not used"))
    return best


def backup_problem(path: Path) -> str | None:
    """Why a backup cannot be trusted (None: it can): its checksum, if its
    name carries one, else SQLite's check."""
    m = _BACKUP_NAME.match(path.name)
    if m and m.group(3):
        try:
            if f"{_crc(path):08x}" == m.group(3):
                return None
        except OSError as e:
            return f"it cannot be read ({e.strerror or e})"
        return "its checksum does not match: it changed after it was written"
    return file_problem(path, tables=("inputs",))


def _crc(path: Path) -> int:
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def make_backup(journal: Journal, target: Path | None = None, *, kind: str = "journal") -> Path:
    """A backup into ``target``, or into backups/ named with its input count,
    time and checksum."""
    if target is not None:
        journal.backup_to(target)
        return target
    folder = backup_dir(journal.path)
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{kind}-{_max_seq(journal.db):09d}-{time.strftime('%Y%m%d-%H%M%S')}"
    written = folder / f"{stem}.sqlite"
    journal.backup_to(written)
    named = folder / f"{stem}-crc{_crc(written):08x}.sqlite"
    os.replace(written, named)
    fsync_dir(folder)
    return named


def rotate(journal_path: Path) -> list[Path]:
    """Keep the newest BACKUPS_KEPT automatic backups and the newest one of
    each of the NIGHTS_KEPT nights before; manual backups stay.  Returns
    what was removed (superseded copies, not damage: those are kept)."""
    # Newest by what it holds (``backups``), never by file time; after a restore
    # the restored line's backups come first though they hold fewer inputs.
    # Only this journal's: another table's backup left in the folder is not ours to remove.
    identity = identity_at(journal_path)
    auto = [p for p in backups(journal_path, epoch_at(journal_path), identity)
            if p.name.startswith("journal-") and _of(p, None, identity)]
    keep = set(auto[:BACKUPS_KEPT])
    nights: dict[int, Path] = {}
    for p in auto:
        night = _evening_of(p)
        if night is not None and night not in nights:
            nights[night] = p
    for night in sorted(nights, reverse=True)[1:NIGHTS_KEPT + 1]:
        keep.add(nights[night])
    removed = [p for p in auto if p not in keep]
    removed += list(backup_dir(journal_path).glob("*.sqlite.part"))  # a backup cut short by a kill
    for p in removed:
        p.unlink(missing_ok=True)
    return removed


def _evening_of(backup: Path) -> int | None:
    try:
        con = read_only(backup)
        try:
            row = con.execute("SELECT max(session) FROM plays").fetchone()  # the evening: see journal.SCHEMA
        finally:
            con.close()
    except DB_ERRORS:
        return None
    return int(row[0]) if row and isinstance(row[0], int) else None


def after_game(journal: Journal) -> Path:
    """At a game's end: fold the WAL into the main file, then back up and
    rotate.  After each finished game rather than at the night's end, because
    a games night has no end the Pi can see (the plug is pulled); a game's end
    is the last moment everything is settled, and it costs a few ms once per
    game, after the table has heard the result."""
    journal.checkpoint_wal()
    target = make_backup(journal)
    rotate(journal.path)
    return target


def after_round(journal: Journal) -> Path:
    """At a scored round's end, the game going on: a backup (through the WAL,
    which the backup API reads like any reader) and rotation.  A round is
    settled as a game is, and a failing card then costs at most the round in
    play; the WAL is left to the game's end.  ~3 KB a game, a few ms a round."""
    target = make_backup(journal)
    rotate(journal.path)
    return target


class GameEndBackups:
    """``after_game`` when a game ends, ``after_round`` when a round is
    scored and the game goes on (``after_input``, the loop's): inline on the journal's
    own connection (simulations: deterministic, and a crash VFS sees every
    write), or — the daemon — on a thread with connections of its own, so a
    slow SD card's fsyncs never hold up the next tap.  Failures are reported,
    never raised: the game itself is already safe in the journal."""

    def __init__(self, journal: Journal, report: Callable[[str], None], *, background: bool) -> None:
        self.journal, self.report, self.background = journal, report, background
        self._lock = threading.Lock()  # one backup at a time

    def after_input(self, outputs: Sequence[Output], game_ended: bool) -> None:
        """After each accepted input's outputs are out: which backup, if any, is
        due is decided here (a game's end, its result heard; a scored round)."""
        if game_ended:
            self()
        elif any(isinstance(o, Report) and o.event == ROUND_SCORED for o in outputs):
            self.round_end()

    def __call__(self) -> None:
        if self.background:
            threading.Thread(target=self._apart, daemon=True, name="backup").start()
        else:
            self._safely(lambda: after_game(self.journal))

    def round_end(self) -> None:
        if self.background:
            threading.Thread(target=self._apart, args=(False,), daemon=True, name="backup").start()
        else:
            self._safely(lambda: after_round(self.journal))

    def _apart(self, fold_wal: bool = True) -> None:
        def work() -> None:
            path = self.journal.path
            if fold_wal:
                db = sqlite3.connect(str(path), isolation_level=None)
                try:
                    checkpoint_without_waiting(db)  # a reader beside the daemon never holds up a tap
                finally:
                    db.close()
            reader = Journal(path, readonly=True)
            try:
                make_backup(reader)
            finally:
                reader.close()
            rotate(path)
        self._safely(work)

    def _safely(self, work: Callable[[], Any]) -> None:
        with self._lock:
            try:
                work()
            except (OSError, *DB_ERRORS) as e:
                self.report(f"backup after the round or game failed: {e}")


def restore_problem(journal_path: Path, source: Path) -> str | None:
    """Why ``source`` must not replace the journal (None: it may), found
    before anything is moved: a regular file (a FIFO would hang the open),
    not the journal itself (it would be moved aside under its own copy),
    sound to SQLite, and exactly a journal this release reads."""
    try:
        st = os.stat(source)
    except OSError as e:
        return f"it cannot be read ({e.strerror or e})"
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "special"
        return f"it is not a regular file ({kind})"
    try:
        itself = os.path.samestat(st, os.stat(journal_path))
    except OSError:  # no journal (yet): nothing to be the same as
        itself = False
    if itself:
        return "it is the journal itself: restore a backup of it (backups/ in the state directory)"
    return (file_problem(source, deep=True, tables=("meta", "inputs", "plays", "checkpoint"))
            or schema_problem(source))


def restore(journal_path: Path, source: Path) -> tuple[str, Path | None]:
    """Put ``source`` in place of the journal (refused while a daemon holds
    it); the journal it replaces is kept aside.  (what was restored, aside).
    Raises ``ValueError`` with ``restore_problem``'s reason, nothing changed."""
    if problem := restore_problem(journal_path, source):
        raise ValueError(f"{source}: {problem}")
    lock = StateLock(journal_path)  # StateLocked while the daemon runs
    try:
        aside = set_aside(journal_path, "replaced") if os.path.lexists(journal_path) else None
        src = read_only(source)
        try:
            n = src.execute("SELECT count(*) FROM inputs").fetchone()[0]
            p = src.execute("SELECT count(*) FROM plays").fetchone()[0]
            tmp = Journal(journal_path)
            src.backup(tmp.db)
            new_epoch(tmp.db)  # the seqs after the backup's are given again: new ids for what they publish
            tmp.db.execute("PRAGMA journal_mode=WAL")
            tmp.close()
        finally:
            src.close()
    finally:
        lock.release()
    return f"{n} inputs and {p} plays from {source}", aside


def _max_seq(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT coalesce(max(seq), 0) FROM inputs").fetchone()[0])
