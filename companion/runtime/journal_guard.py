"""Keeping the journal whole: one daemon per journal, a check at every
start, recovery from damage, a quarantine for unreadable rows, backups.

What a Pi beside a table meets: a second process on the same state
directory, an SD card that corrupts a page, a power cut, a file edited by
hand.  The rules here:

- **One writer.**  ``StateLock`` holds ``journal.sqlite.lock`` (``flock``)
  for the process's life; a second daemon is told who holds it.  Readers
  (``companion scores``, ``companion backup``) need no lock: WAL lets them in.
- **A damaged journal is never deleted and never a crash.**  It is renamed
  aside with a timestamp; what can be read from it (SQLite's ``.recover``
  when the ``sqlite3`` tool is installed, else row by row) is merged with the
  newest intact backup into a new journal; the table hears what happened and
  the log gets an ``error`` event with a plain sentence.
- **A bad row is not a bad journal.**  Rows that cannot be read (an unknown
  input, non-JSON, a checkpoint of the wrong shape) are moved to the
  ``quarantine`` table with the reason, and reported with their id.
- **Backups** go to ``backups/`` beside the journal through SQLite's online
  backup API after each finished game (see ``after_game`` for why then).
"""

from __future__ import annotations

import fcntl
import math
import os
import re
import sqlite3
import struct
import sys
import threading
import time
import types
import typing
import zlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

# shutil, subprocess and tempfile are imported where a recovery needs them:
# every start imports this module, and they cost it ~10 ms.
from companion.core.events import input_from_json
from companion.core.tags import printable
from companion.runtime.journal import Journal, JournalTooNew, _json, fsync_dir, read_only

__all__ = ["Notice", "StateLock", "StateLocked", "JournalTooNew", "open_journal"]

BACKUPS_KEPT = 3  # the newest automatic backups kept, plus the last one of each earlier night…
NIGHTS_KEPT = 3  # …for this many earlier games nights
# SQLite's own error text can quote a damaged page, and the stdlib raises
# UnicodeDecodeError decoding it: both mean "this file cannot be read".
DB_ERRORS = (sqlite3.Error, UnicodeDecodeError)
# journal-<inputs>-<time>-crc<CRC-32 of the file>.sqlite: the checksum in the name
# catches a flipped byte that SQLite's own check cannot (inside a row's text).
_BACKUP_NAME = re.compile(r"^(journal|manual)-(\d+)-.*?(?:-crc([0-9a-f]{8}))?\.sqlite$")


class StateLocked(Exception):
    """Another process holds the journal.  ``str()`` is one line for the terminal."""


@dataclass(frozen=True)
class Notice:
    """Something the table should hear (a ``journal.*`` line) and the log
    should get (an ``error`` event with ``message``)."""

    key: str | None
    params: dict[str, Any]
    message: str


# ------------------------------------------------------------------ the lock
class StateLock:
    """An exclusive ``flock`` on ``<journal>.lock`` for as long as this object
    lives; the file names its holder (pid and command line)."""

    def __init__(self, journal_path: Path) -> None:
        self.path = Path(str(journal_path) + ".lock")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o640)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(fd)
            os.close(fd)
            raise StateLocked(f"{journal_path} is in use by another companion ({holder}); "
                              "stop that one first, or give this one its own --state directory") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n{' '.join(sys.argv)}\n".encode())
        self.fd: int | None = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the flock
            self.fd = None


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace").splitlines()
    except OSError:
        text = []
    pid = text[0].strip() if text else "?"
    cmd = printable(text[1])[:200] if len(text) > 1 else "?"
    return f"pid {pid}: {cmd}"


def held_by(journal_path: Path) -> str | None:
    """Who holds the lock on this journal, or None if nobody does."""
    try:
        lock = StateLock(journal_path)
    except StateLocked as e:
        return str(e)
    lock.release()
    return None


# ------------------------------------------------------------- diagnosis
def diagnose(path: Path, *, deep: bool = False) -> str | None:
    """Why this journal cannot be trusted, in plain words; None if it can
    (or does not exist yet).  Opens it read-only: nothing is changed."""
    wal = Path(str(path) + "-wal")
    if not os.path.lexists(path):
        if wal.exists() and wal.stat().st_size > 0:
            return "the journal file is missing but its write-ahead log is there"
        return None
    if path.is_symlink() or not path.is_file():
        return "it is not a regular file" + (" (a directory)" if path.is_dir() else "")
    if os.path.lexists(wal) and not wal.is_file():
        return "its write-ahead log is not a regular file" + (" (a directory)" if wal.is_dir() else "")
    if path.stat().st_size < 100 and wal.is_file():
        # Without its header the main file no longer says "WAL mode", and SQLite
        # would ignore (and then overwrite) a WAL that holds the data.
        _size, pages, _n = committed_frames(wal.read_bytes())
        if pages:
            return f"the journal file is empty or cut short, while its write-ahead log holds {len(pages)} pages"
    problem = wal_problem(wal)
    if problem:
        return problem
    return file_problem(path, deep=deep, tables=("meta", "inputs", "plays", "checkpoint"), allow_empty=True)


def file_problem(path: Path, *, deep: bool = False, tables: tuple[str, ...] = (),
                 allow_empty: bool = False) -> str | None:
    """SQLite's own check of one file (quick_check, or integrity_check when
    ``deep``), and that ``tables`` are there; None if it passes."""
    import shutil
    import tempfile

    problem = _file_problem(path, deep, tables, allow_empty)
    if problem is None or "readonly" not in problem:
        return problem
    # A WAL that needs recovering (a power cut at the very first start) cannot
    # be read read-only: check a copy instead, leaving the files as they are.
    with tempfile.TemporaryDirectory(prefix="companion-check-") as tmp:
        copy = Path(tmp) / "journal.sqlite"
        shutil.copyfile(path, copy)
        if Path(f"{path}-wal").is_file():
            shutil.copyfile(f"{path}-wal", f"{copy}-wal")
        try:
            sqlite3.connect(copy).close()  # recovers the WAL into the copy's index
        except DB_ERRORS as e:
            return f"it cannot be opened ({printable(str(e))})"
        return _file_problem(copy, deep, tables, allow_empty)


def _file_problem(path: Path, deep: bool, tables: tuple[str, ...], allow_empty: bool) -> str | None:
    try:
        con = read_only(path)
    except DB_ERRORS as e:
        return f"it cannot be opened ({e})"
    try:
        rows = con.execute("PRAGMA integrity_check" if deep else "PRAGMA quick_check").fetchall()
        if [r[0] for r in rows] != ["ok"]:
            return f"SQLite finds it damaged ({printable(str(rows[0][0]))}{'…' if len(rows) > 1 else ''})"
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        missing = [t for t in tables if t not in have]
        if missing and allow_empty and have <= {*tables, "quarantine"} and not any(
                con.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() for t in have & {"inputs", "plays"}):
            missing = []  # a fresh journal, or its schema cut short by a power cut: completed on open
        if missing:  # a backup is never empty
            return f"it is not a companion journal (no {', '.join(missing)} table)"
    except DB_ERRORS as e:
        return f"it cannot be read ({printable(str(e))})"
    finally:
        con.close()
    return None


def wal_problem(wal: Path, page_size: int = 4096) -> str | None:
    """Damage SQLite would silently step over in a write-ahead log.  SQLite
    reads frames up to the first one whose checksum fails and drops the rest
    without a word: right after a power cut that is an unfinished write
    (nothing in it was accepted), but if *genuine* frames follow — two in a
    row of this generation whose checksums chain — a frame that was once
    durable has been damaged, and every input after it would be lost.
    (Damage inside the WAL's last transaction is indistinguishable from a
    power cut and is not reported: README, reliability.)"""
    shm = Path(str(wal)[:-4] + "-shm")
    missing = False
    try:
        data = wal.read_bytes()
    except FileNotFoundError:
        data, missing = b"", True
    except OSError as e:
        return f"its write-ahead log cannot be read ({e.strerror or e})"
    if len(data) < 32:  # no frame can be read (a header cut short by a power cut holds none)
        index = _shm_frames(shm, None)
        if index is not None and index[0] > index[1]:
            return (f"its write-ahead log is {'missing' if missing else 'empty' if not data else 'cut short'}: its index says "
                    f"{index[0] - index[1]} committed frames were in it, not yet in the main file")
        return None
    magic, _version, size, _ckpt, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    if 512 <= size <= 65536 and not size & (size - 1):
        page_size = size
    frame = 24 + page_size
    n = (len(data) - 32) // frame

    def head(k: int) -> tuple[int, ...]:
        return struct.unpack(">6I", data[32 + k * frame:56 + k * frame])

    def chains(k: int, start: tuple[int, ...], order: str) -> bool:
        at = 32 + k * frame
        s0, s1 = _wal_sum(data[at:at + 8], order, start[0], start[1])
        return _wal_sum(data[at + 24:at + frame], order, s0, s1) == head(k)[4:6]

    orders = [">" if magic & 1 else "<"] if magic in (0x377F0682, 0x377F0683) else ["<", ">"]
    header_ok = magic in (0x377F0682, 0x377F0683) and _wal_sum(data[:24], orders[0], 0, 0) == (c1, c2)
    first_bad = -1  # the header
    if header_ok:
        salts: tuple[int, ...] = (salt1, salt2)
        s: tuple[int, ...] = (c1, c2)
        first_bad = n
        for k in range(n):
            if head(k)[2:4] != salts or not chains(k, s, orders[0]):
                first_bad = k
                break
            s = head(k)[4:6]
        index = _shm_frames(shm, salts)
        if index is not None and index[0] > first_bad:
            return (f"its write-ahead log is damaged at frame {first_bad + 1}: its index says {index[0]} frames "
                    f"were committed, only {first_bad} can be read")
        if first_bad == n or head(first_bad)[2:4] != salts:
            return None  # all read, or the rest is an earlier generation
    else:
        index = _shm_frames(shm, None)
        if index is not None and index[0] > index[1]:
            return (f"its write-ahead log has a damaged header: its index says {index[0] - index[1]} committed "
                    "frames were in it, not yet in the main file")
        if not n:
            return None
        salts = head(0)[2:4]
    for k in range(first_bad + 1, n - 1):
        if head(k)[2:4] == salts == head(k + 1)[2:4] and any(chains(k + 1, head(k)[4:6], o) for o in orders):
            where = "its header" if first_bad < 0 else f"frame {first_bad + 1}"
            return f"its write-ahead log is damaged at {where}; the {n - first_bad - 1} frames after it would be lost"
    return None


def committed_frames(data: bytes) -> tuple[int, dict[int, bytes], int]:
    """What SQLite would take from a WAL: (page size, page number → its
    newest committed image, database size in pages at the last commit) —
    the frames up to the last commit frame before the first bad one."""
    if len(data) < 32:
        return 4096, {}, 0
    magic, _version, size, _ckpt, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    if magic not in (0x377F0682, 0x377F0683) or not (512 <= size <= 65536 and not size & (size - 1)):
        return 4096, {}, 0
    order = ">" if magic & 1 else "<"
    if _wal_sum(data[:24], order, 0, 0) != (c1, c2):
        return size, {}, 0
    frame, at, s = 24 + size, 32, (c1, c2)
    pages: dict[int, bytes] = {}
    pending: dict[int, bytes] = {}
    db_pages = 0
    while at + frame <= len(data):
        pgno, commit, fs1, fs2, fc1, fc2 = struct.unpack(">6I", data[at:at + 24])
        s = _wal_sum(data[at + 24:at + frame], order, *_wal_sum(data[at:at + 8], order, *s))
        if (fs1, fs2) != (salt1, salt2) or s != (fc1, fc2):
            break
        pending[pgno] = data[at + 24:at + frame]
        if commit:
            pages.update(pending)
            pending.clear()
            db_pages = commit
        at += frame
    return size, pages, db_pages


def _shm_frames(shm: Path, salts: tuple[int, ...] | None) -> tuple[int, int] | None:
    """(frames committed, frames already copied into the main file) as the
    wal-index (``-shm``) has them, if it holds a valid header — for this
    generation of the WAL when ``salts`` are given.  Sound after a kill and
    after a power cut alike: SQLite fsyncs a commit's frames before the index
    counts them, so a durable index never counts more frames than were durable."""
    try:
        with open(shm, "rb") as f:
            raw = f.read(136)
    except OSError:
        return None
    if len(raw) < 100 or raw[:48] != raw[48:96]:
        return None  # absent, or caught mid-update: nothing to go by
    order = "<" if sys.byteorder == "little" else ">"
    _version, _unused, _change, is_init, _big, _page, mx_frame, _npage, _f1, _f2, _s1, _s2, k1, k2 = struct.unpack(
        f"{order}3IBBH8I", raw[:48])
    copied = struct.unpack(">2I", raw[32:40])  # the salts are the WAL header's bytes, copied as they are
    if not is_init or _wal_sum(raw[:40], order, 0, 0) != (k1, k2) or (salts is not None and copied != salts):
        return None
    (backfilled,) = struct.unpack(f"{order}I", raw[96:100])
    return int(mx_frame), int(backfilled)


def _wal_sum(buf: bytes, order: str, s0: int, s1: int) -> tuple[int, int]:
    words = struct.unpack(f"{order}{len(buf) // 4}I", buf)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


# -------------------------------------------------------------- salvage
Rows = dict[str, dict[Any, tuple[Any, ...]]]  # table → row id → the other columns
_COLUMNS = {"meta": "key, value", "inputs": "t, wall, input", "plays": "seq, session, game, play",
            "checkpoint": "seq, state"}
_KEY = {"meta": "key", "inputs": "seq", "plays": "id", "checkpoint": "id"}


def salvage(main: Path, wal: Path | None = None) -> Rows:
    """Every row that can still be read from a damaged journal (and its WAL),
    worked on a copy so the damaged files stay exactly as they were."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="companion-salvage-") as tmp:
        copy = Path(tmp) / "damaged.sqlite"
        if main.is_file():
            shutil.copyfile(main, copy)
        else:
            copy.touch()
        rows = _empty_rows()
        if wal is not None and wal.is_file():
            shutil.copyfile(wal, Path(str(copy) + "-wal"))
            # The WAL's committed pages written into a copy of the main file by
            # hand: what SQLite would read, even where the main file lost its header.
            patched = Path(tmp) / "patched.sqlite"
            shutil.copyfile(copy, patched)
            size, pages, db_pages = committed_frames(wal.read_bytes())
            with open(patched, "r+b") as f:
                for pgno, image in sorted(pages.items()):
                    f.seek((pgno - 1) * size)
                    f.write(image)
                if db_pages:
                    f.truncate(db_pages * size)
            _merge_into(rows, _read_rows(patched))
        recovered = Path(tmp) / "recovered.sqlite"
        if _sqlite_recover(copy, recovered):
            _merge_into(rows, _read_rows(recovered))
            _merge_into(rows, _lost_and_found(recovered))
        try:  # let SQLite recover the copy's WAL (read-only connections cannot)
            sqlite3.connect(copy).close()
        except DB_ERRORS:
            pass
        _merge_into(rows, _read_rows(copy))  # row by row: also where the tool is missing
    return rows


def _empty_rows() -> Rows:
    return {t: {} for t in _COLUMNS}


def _merge_into(rows: Rows, more: Rows, *, prefer_new: bool = False) -> None:
    for table, got in more.items():
        for key, value in got.items():
            if prefer_new or key not in rows[table]:
                rows[table][key] = value


def _sqlite_recover(damaged: Path, out: Path) -> bool:
    """SQLite's own ``.recover`` (the sqlite3 tool, 3.29+) into ``out``."""
    import shutil
    import subprocess

    tool = shutil.which("sqlite3")
    if tool is None:
        return False
    try:
        dump = subprocess.run([tool, str(damaged), ".recover"], capture_output=True, timeout=120, check=False)
        if not dump.stdout:
            return False
        subprocess.run([tool, str(out)], input=dump.stdout, capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.exists()


def _read_rows(path: Path) -> Rows:
    """Rows of each journal table, read in ranges of row ids that halve
    around the damage, so one bad page costs only the rows on it."""
    rows = _empty_rows()
    try:
        con = read_only(path)
    except DB_ERRORS:
        return rows
    budget = [20000]  # queries: a damaged b-tree root could otherwise send us down 2^31 ranges
    try:
        for table, cols in _COLUMNS.items():
            try:
                top = con.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0]
            except DB_ERRORS:
                top = 1 << 31
            if top is None:
                continue
            _read_range(con, table, cols, 1, int(top), rows[table], budget)
    finally:
        con.close()
    return rows


def _read_range(con: sqlite3.Connection, table: str, cols: str, lo: int, hi: int,
                out: dict[Any, tuple[Any, ...]], budget: list[int]) -> None:
    stack = [(lo, hi)]
    key = _KEY[table]
    while stack and budget[0] > 0:
        lo, hi = stack.pop()
        budget[0] -= 1
        try:
            for row in con.execute(f"SELECT {key}, {cols} FROM {table} WHERE rowid BETWEEN ? AND ?", (lo, hi)):
                out.setdefault(row[0], tuple(row[1:]))
            continue
        except DB_ERRORS:
            pass
        if lo < hi:
            mid = (lo + hi) // 2
            stack += [(mid + 1, hi), (lo, mid)]


def _lost_and_found(path: Path) -> Rows:
    """Rows ``.recover`` could not place (the schema page was lost), told
    apart by their number of columns."""
    rows = _empty_rows()
    try:
        con = read_only(path)
    except DB_ERRORS:
        return rows
    try:
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for name in have:
            if not name.startswith("lost_and_found"):
                continue
            for r in con.execute(f"SELECT * FROM {name}"):
                nfield, rowid, values = r[2], r[3], r[4:]
                if nfield == 4 and isinstance(values[3], str) and rowid is not None:
                    rows["inputs"].setdefault(rowid, tuple(values[1:4]))
                elif nfield == 5 and isinstance(values[4], str) and rowid is not None:
                    rows["plays"].setdefault(rowid, tuple(values[1:5]))
    except DB_ERRORS:
        pass
    finally:
        con.close()
    return rows


# -------------------------------------------------------------- backups
def backup_dir(journal_path: Path) -> Path:
    return journal_path.parent / "backups"


def backups(journal_path: Path) -> list[Path]:
    """Backups of this journal, the one holding the most inputs first."""
    folder = backup_dir(journal_path)
    try:
        found = [(int(m.group(2)), p) for p in folder.iterdir() if (m := _BACKUP_NAME.match(p.name))]
    except OSError:
        return []
    return [p for _, p in sorted(found, key=lambda sp: (sp[0], sp[1].stat().st_mtime), reverse=True)]


def newest_intact_backup(journal_path: Path, notices: list[Notice] | None = None, *,
                         look_only: bool = False) -> Path | None:
    """The backup recovery would use.  Every backup is checked (a few small
    files): damaged ones are set aside (renamed, never deleted) and reported
    — unless ``look_only`` (doctor)."""
    best = None
    for candidate in backups(journal_path):
        problem = backup_problem(candidate)
        if problem is None:
            best = best or candidate
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
    auto = [p for p in backups(journal_path) if p.name.startswith("journal-")]
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


class GameEndBackups:
    """``after_game`` for the loop's ``on_game_end``: inline on the journal's
    own connection (simulations: deterministic, and a crash VFS sees every
    write), or — the daemon — on a thread with connections of its own, so a
    slow SD card's fsyncs never hold up the next tap.  Failures are reported,
    never raised: the game itself is already safe in the journal."""

    def __init__(self, journal: Journal, report: Callable[[str], None], *, background: bool) -> None:
        self.journal, self.report, self.background = journal, report, background
        self._lock = threading.Lock()  # one backup at a time

    def __call__(self) -> None:
        if self.background:
            threading.Thread(target=self._apart, daemon=True, name="backup").start()
        else:
            self._safely(lambda: after_game(self.journal))

    def _apart(self) -> None:
        def work() -> None:
            path = self.journal.path
            db = sqlite3.connect(str(path), timeout=10, isolation_level=None)
            try:
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
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
                self.report(f"backup after the game failed: {e}")


def restore(journal_path: Path, source: Path) -> tuple[str, Path | None]:
    """Put ``source`` in place of the journal (refused while a daemon holds
    it); the journal it replaces is kept aside.  (what was restored, aside)."""
    if problem := file_problem(source, deep=True, tables=("meta", "inputs", "plays", "checkpoint")):
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
            tmp.db.execute("PRAGMA journal_mode=WAL")
            tmp.close()
        finally:
            src.close()
    finally:
        lock.release()
    return f"{n} inputs and {p} plays from {source}", aside


def _max_seq(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT coalesce(max(seq), 0) FROM inputs").fetchone()[0])


# -------------------------------------------------------------- set aside
def set_aside(path: Path, why: str = "damaged") -> Path:
    """Rename a file (and its WAL and index) out of the way as
    ``<name>.<why>-<time>``; nothing is deleted."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.{why}-{stamp}")
    n = 1
    while os.path.lexists(aside):
        n += 1
        aside = path.with_name(f"{path.name}.{why}-{stamp}-{n}")
    for suffix in ("-wal", "-shm"):
        part = Path(str(path) + suffix)
        if os.path.lexists(part):
            os.rename(part, str(aside) + suffix)
    if os.path.lexists(path):
        os.rename(path, aside)
    fsync_dir(path.parent)
    return aside


# -------------------------------------------------------------- opening
def open_journal(path: Path, journal_class: type[Journal] = Journal) -> tuple[Journal, list[Notice]]:
    """The journal, checked, recovered if it must be, its bad rows in
    quarantine; with what the table and the log should be told.
    Raises JournalTooNew (a newer release's journal: refused, untouched)."""
    notices: list[Notice] = []
    problem = diagnose(path)
    backup = newest_intact_backup(path, notices)
    if problem is None and backup is not None:
        problem = _behind(path, backup)
    if problem is not None:
        _recover(path, problem, backup, notices)
    journal = journal_class(path)
    notices += quarantine_bad_rows(journal)
    return journal, notices


def _behind(path: Path, backup: Path) -> str | None:
    """The journal must hold everything its newest backup holds (a backup
    is a copy of an earlier journal, and inputs are only ever appended)."""
    if not path.exists():
        return "the journal file is missing (a backup exists)"
    try:
        b = read_only(backup)
        j = read_only(path)
        try:
            last = b.execute("SELECT seq, input FROM inputs ORDER BY seq DESC LIMIT 1").fetchone()
            if last is None:
                return None
            mine = j.execute("SELECT seq, input FROM inputs WHERE seq=?", (last[0],)).fetchone()
        finally:
            b.close()
            j.close()
    except DB_ERRORS as e:
        return f"it cannot be read ({printable(str(e))})"
    if mine != last:
        return f"it lacks inputs that backup {backup.name} holds (cut short or replaced)"
    return None


def _recover(path: Path, problem: str, backup: Path | None, notices: list[Notice]) -> None:
    aside: Path | None = None
    rows = _empty_rows()
    if os.path.lexists(path) or os.path.lexists(str(path) + "-wal"):
        aside = set_aside(path)
        rows = salvage(aside, Path(str(aside) + "-wal"))
    _keep_valid_inputs(rows)
    from_journal = len(rows["inputs"])
    used = None
    if backup is not None:
        before = set(rows["inputs"])
        theirs = _read_rows(backup)
        _merge_into(rows, theirs, prefer_new=True)  # a checked backup beats salvage from damage
        if len(theirs["inputs"]):
            used = backup
        from_backup = len(set(rows["inputs"]) - before)
    else:
        from_backup = 0
    _write_rows(path, rows)
    total = len(rows["inputs"])
    top = max(rows["inputs"], default=0)
    lost = top - total  # gaps in the sequence; what came after the last readable input cannot be counted
    kept = f"kept as {aside.name}" if aside else "nothing to keep"
    source = f"{from_journal} from it" + (f", {from_backup} more from backup {used.name}" if used else "")
    message = (f"journal {path.name}: {problem}; {kept}; recovered {total} inputs ({source})"
               + (f"; {lost} inputs could not be recovered" if lost else "") + "; the table goes on from there")
    if total == 0:
        notices.append(Notice("journal.started_fresh", {}, message))
    else:
        notices.append(Notice("journal.recovered", {"count": total}, message))
    if lost:
        notices.append(Notice("journal.lost_some", {"count": lost},
                              f"journal: {lost} inputs between 1 and {top} are missing after recovery"))


def _keep_valid_inputs(rows: Rows) -> None:
    """Salvage from a damaged page can be garbage: keep inputs whose
    columns have the right types (their content is checked by the quarantine)."""
    rows["inputs"] = {k: v for k, v in rows["inputs"].items()
                      if isinstance(k, int) and k > 0 and len(v) == 3 and isinstance(v[2], str)
                      and all(isinstance(x, (int, float)) for x in v[:2])}


def _write_rows(path: Path, rows: Rows) -> None:
    journal = Journal(path)
    db = journal.db
    try:
        db.execute("BEGIN IMMEDIATE")
        for key, (value,) in ((k, v[1:]) for k, v in rows["meta"].items() if len(v) == 2 and isinstance(v[0], str)):
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
        db.executemany("INSERT OR REPLACE INTO inputs VALUES (?, ?, ?, ?)",
                       [(k, *v) for k, v in sorted(rows["inputs"].items())])
        db.executemany("INSERT OR REPLACE INTO plays VALUES (?, ?, ?, ?, ?)",
                       [(k, *v) for k, v in sorted(rows["plays"].items())
                        if isinstance(k, int) and len(v) == 4 and isinstance(v[3], str)])
        cp = rows["checkpoint"].get(1)
        if cp is not None and len(cp) == 2 and isinstance(cp[0], int) and isinstance(cp[1], str):
            db.execute("INSERT OR REPLACE INTO checkpoint VALUES (1, ?, ?)", cp)
        db.execute("COMMIT")
    finally:
        journal.close()


# ------------------------------------------------------------ quarantine
def _fits(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    base = origin or hint
    if base is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, base)


def checkpoint_problem(state: Any) -> str | None:
    """Why a stored checkpoint is not the table's state between games (None: it is)."""
    from companion.core.table import GATHERING, IDLE, PLAYING, Table, TableState

    if not isinstance(state, dict):
        return "not a JSON object"
    hints = typing.get_type_hints(TableState)
    known = {f.name for f in fields(TableState)}
    if "phase" not in state or state["phase"] not in (IDLE, GATHERING, PLAYING):
        return "no table phase in it"
    for name, value in state.items():
        if name in known and not _fits(value, hints[name]):
            return f"{name} is {type(value).__name__}"
    try:
        Table({}).restore(state)
    except Exception as e:  # noqa: BLE001 - any way it fails to restore is the row's fault
        return f"cannot be restored ({type(e).__name__})"
    return None


def _input_problem(t: Any, wall: Any, data: Any) -> str | None:
    for name, v in (("t", t), ("wall", wall)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return f"{name} is not a time ({printable(repr(v))[:40]})"
    # The row itself is kept in the quarantine, never put in the message: the
    # log is public, and a damaged row can still name a card someone tapped.
    parsed = _json(data)
    if parsed is None:
        return "not JSON"
    try:
        input_from_json(parsed)
    except ValueError:
        return "not an input the table knows"
    return None


def quarantine_bad_rows(journal: Journal, *, now: Callable[[], float] = time.time) -> list[Notice]:
    """Move every row the table cannot replay or show into ``quarantine``
    (source, row id, data, problem), in one transaction; one notice each.
    Checked: the checkpoint, the inputs after it (all of them if it goes),
    the meta seed, and the plays."""
    db = journal.db
    bad: list[tuple[str, int | str, Any, str]] = []
    after = 0
    row = db.execute("SELECT seq, state FROM checkpoint WHERE id=1").fetchone()
    if row is not None:
        problem = ("its input number is not a number" if not isinstance(row[0], int)
                   else checkpoint_problem(_json(row[1])) if _json(row[1]) is not None else "not JSON")
        if problem:
            bad.append(("checkpoint", 1, row[1], f"checkpoint {problem}"))
        else:
            after = row[0]
    for seq, t, wall, data in db.execute("SELECT seq, t, wall, input FROM inputs WHERE seq > ?", (after,)):
        if problem := _input_problem(t, wall, data):
            bad.append(("inputs", seq, data, problem))
    seed = db.execute("SELECT value FROM meta WHERE key='seed'").fetchone()
    if seed is not None and not (isinstance(seed[0], str) and seed[0].isdigit()):
        bad.append(("meta", "seed", seed[0], "the stored seed is not a number"))
    # The plays in C, as the history can be long (10,000 games: a quarter of a
    # second in Python); ``companion scores`` also skips any play_problem.
    for pid, data in db.execute(
            "SELECT id, play FROM plays WHERE NOT json_valid(play) OR json_type(play, '$.players') IS NOT 'array'"
            " OR json_type(play, '$.playDate') IS NOT 'text' OR json_type(play, '$.durationMin') IS NOT 'integer'"):
        bad.append(("plays", pid, data, "not a play record"))
    if not bad:
        return []
    key_col = {"checkpoint": "id", "inputs": "seq", "plays": "id", "meta": "key"}
    db.execute("BEGIN IMMEDIATE")
    try:
        for source, rid, data, problem in bad:
            db.execute("INSERT INTO quarantine (source, row_id, data, problem, wall) VALUES (?, ?, ?, ?, ?)",
                       (source, rid if isinstance(rid, int) else 0,
                        data if isinstance(data, str) else repr(data), problem, now()))
            db.execute(f"DELETE FROM {source} WHERE {key_col[source]}=?", (rid,))
        db.execute("COMMIT")
    except sqlite3.Error:
        db.execute("ROLLBACK")
        raise
    notices = [Notice(None, {}, f"journal {source} row {rid}: {problem}; moved to the quarantine table")
               for source, rid, _data, problem in bad[:10]]
    if len(bad) > 10:
        notices.append(Notice(None, {}, f"journal: {len(bad) - 10} more unreadable rows moved to the quarantine"))
    notices.append(Notice("journal.rows_set_aside", {"count": len(bad)},
                          f"journal: {len(bad)} unreadable rows set aside; the table goes on without them"))
    return notices
