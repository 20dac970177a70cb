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
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from companion.events import input_from_json
from companion.pretty import printable
from companion.store import Journal, JournalTooNew, _json, fsync_dir, play_problem

__all__ = ["Notice", "StateLock", "StateLocked", "JournalTooNew", "open_journal"]

BACKUPS_KEPT = 3  # the newest automatic backups kept, plus the last one of each earlier night…
NIGHTS_KEPT = 3  # …for this many earlier games nights
_BACKUP_NAME = re.compile(r"^(journal|manual)-(\d+)-.*\.sqlite$")


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
    if not os.path.lexists(path):
        wal = Path(str(path) + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            return "the journal file is missing but its write-ahead log is there"
        return None
    if path.is_symlink() or not path.is_file():
        return "it is not a regular file" + (" (a directory)" if path.is_dir() else "")
    problem = wal_problem(Path(str(path) + "-wal"))
    if problem:
        return problem
    return file_problem(path, deep=deep, tables=("meta", "inputs", "plays", "checkpoint"))


def file_problem(path: Path, *, deep: bool = False, tables: tuple[str, ...] = ()) -> str | None:
    """SQLite's own check of one file (quick_check, or integrity_check when
    ``deep``), and that ``tables`` are there; None if it passes."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as e:
        return f"it cannot be opened ({e})"
    try:
        rows = con.execute("PRAGMA integrity_check" if deep else "PRAGMA quick_check").fetchall()
        if [r[0] for r in rows] != ["ok"]:
            return f"SQLite finds it damaged ({printable(str(rows[0][0]))}{'…' if len(rows) > 1 else ''})"
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        missing = [t for t in tables if t not in have]
        if missing and have:
            return f"it is not a companion journal (no {', '.join(missing)} table)"
    except sqlite3.Error as e:
        return f"it cannot be read ({printable(str(e))})"
    finally:
        con.close()
    return None


def wal_problem(wal: Path) -> str | None:
    """Damage SQLite would silently step over in a write-ahead log: it stops
    reading at the first frame whose checksum fails, so a flipped byte would
    quietly drop every input after it.  Frames of an earlier generation (other
    salts) left behind a reset are normal and ignored."""
    try:
        data = wal.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"its write-ahead log cannot be read ({e.strerror or e})"
    if not data:
        return None
    if len(data) < 32:
        return "its write-ahead log is cut short"
    magic, _version, page_size, _ckpt, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    if magic not in (0x377F0682, 0x377F0683) or page_size < 512 or page_size & (page_size - 1):
        return "its write-ahead log has a damaged header"
    order = ">" if magic & 1 else "<"
    s = _wal_sum(data[:24], order, 0, 0)
    if s != (c1, c2):
        return "its write-ahead log has a damaged header"
    frame = 24 + page_size
    at = 32
    while at + frame <= len(data):
        _pgno, _commit, fs1, fs2, fc1, fc2 = struct.unpack(">6I", data[at:at + 24])
        if (fs1, fs2) != (salt1, salt2):
            return None  # the rest is an earlier generation
        s = _wal_sum(data[at + 24:at + frame], order, *_wal_sum(data[at:at + 8], order, *s))
        if s != (fc1, fc2):
            return f"its write-ahead log is damaged at frame {(at - 32) // frame + 1}"
        at += frame
    if at < len(data) and data[at + 8:at + 16] == data[16:24]:
        return "its write-ahead log is cut short in the middle of a frame"
    return None


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
    with tempfile.TemporaryDirectory(prefix="companion-salvage-") as tmp:
        copy = Path(tmp) / "damaged.sqlite"
        if main.is_file():
            shutil.copyfile(main, copy)
        else:
            copy.touch()
        if wal is not None and wal.is_file():
            shutil.copyfile(wal, Path(str(copy) + "-wal"))
        rows = _empty_rows()
        recovered = Path(tmp) / "recovered.sqlite"
        if _sqlite_recover(copy, recovered):
            _merge_into(rows, _read_rows(recovered))
            _merge_into(rows, _lost_and_found(recovered))
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
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error:
        return rows
    budget = [20000]  # queries: a damaged b-tree root could otherwise send us down 2^31 ranges
    try:
        for table, cols in _COLUMNS.items():
            try:
                top = con.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0]
            except sqlite3.Error:
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
        except sqlite3.Error:
            pass
        if lo < hi:
            mid = (lo + hi) // 2
            stack += [(mid + 1, hi), (lo, mid)]


def _lost_and_found(path: Path) -> Rows:
    """Rows ``.recover`` could not place (the schema page was lost), told
    apart by their number of columns."""
    rows = _empty_rows()
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error:
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
    except sqlite3.Error:
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
    """The backup recovery would use; damaged ones met on the way are set
    aside (renamed, never deleted) and reported — unless ``look_only`` (doctor)."""
    for candidate in backups(journal_path):
        problem = file_problem(candidate, tables=("inputs",))
        if problem is None:
            return candidate
        if look_only:
            continue
        aside = set_aside(candidate)
        if notices is not None:
            notices.append(Notice(None, {}, f"backup {candidate.name} is damaged ({problem}); "
                                  f"kept as {aside.name}, not used"))
    return None


def backup_name(seq: int, kind: str = "journal") -> str:
    return f"{kind}-{seq:09d}-{time.strftime('%Y%m%d-%H%M%S')}.sqlite"


def make_backup(journal: Journal, target: Path | None = None, *, kind: str = "journal") -> Path:
    folder = backup_dir(journal.path)
    if target is None:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / backup_name(_max_seq(journal.db), kind)
    journal.backup_to(target)
    return target


def rotate(journal_path: Path) -> list[Path]:
    """Keep the newest BACKUPS_KEPT automatic backups and the newest one of
    each of the NIGHTS_KEPT nights before; manual backups stay.  Returns
    what was removed (superseded copies, not damage: those are kept)."""
    auto = [p for p in backups(journal_path) if p.name.startswith("journal-")]
    keep = set(auto[:BACKUPS_KEPT])
    nights: dict[int, Path] = {}
    for p in auto:
        night = _session_of(p)
        if night is not None and night not in nights:
            nights[night] = p
    for night in sorted(nights, reverse=True)[1:NIGHTS_KEPT + 1]:
        keep.add(nights[night])
    removed = [p for p in auto if p not in keep]
    for p in removed:
        p.unlink(missing_ok=True)
    return removed


def _session_of(backup: Path) -> int | None:
    try:
        con = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT max(session) FROM plays").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
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


def restore(journal_path: Path, source: Path) -> tuple[str, Path | None]:
    """Put ``source`` in place of the journal (refused while a daemon holds
    it); the journal it replaces is kept aside.  (what was restored, aside)."""
    if problem := file_problem(source, deep=True, tables=("meta", "inputs", "plays", "checkpoint")):
        raise ValueError(f"{source}: {problem}")
    lock = StateLock(journal_path)  # StateLocked while the daemon runs
    try:
        aside = set_aside(journal_path) if os.path.lexists(journal_path) else None
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, isolation_level=None)
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
def set_aside(path: Path) -> Path:
    """Rename a damaged file (and its WAL and index) out of the way, with a
    timestamp; nothing is deleted."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while os.path.lexists(aside):
        n += 1
        aside = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
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
        b = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
        j = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            last = b.execute("SELECT seq, input FROM inputs ORDER BY seq DESC LIMIT 1").fetchone()
            if last is None:
                return None
            mine = j.execute("SELECT seq, input FROM inputs WHERE seq=?", (last[0],)).fetchone()
        finally:
            b.close()
            j.close()
    except sqlite3.Error as e:
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
    from companion.session import GATHERING, IDLE, PLAYING, Session, TableState

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
        Session().restore(state)
    except Exception as e:  # noqa: BLE001 - any way it fails to restore is the row's fault
        return f"cannot be restored ({type(e).__name__})"
    return None


def _input_problem(t: Any, wall: Any, data: Any) -> str | None:
    for name, v in (("t", t), ("wall", wall)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return f"{name} is not a time ({printable(repr(v))[:40]})"
    parsed = _json(data)
    if parsed is None:
        return "not JSON"
    try:
        input_from_json(parsed)
    except ValueError:
        return f"not an input the table knows: {printable(str(data))[:60]}"
    return None


def quarantine_bad_rows(journal: Journal, *, now: Callable[[], float] = time.time) -> list[Notice]:
    """Move every row the table cannot replay or show into ``quarantine``
    (source, row id, data, problem), in one transaction; one notice each.
    Checked: the checkpoint, the inputs after it (all of them if it goes),
    the meta seed, and the plays (what ``companion scores`` shows)."""
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
    for pid, data in db.execute("SELECT id, play FROM plays"):
        if problem := play_problem(_json(data)):
            bad.append(("plays", pid, data, f"not a play record ({problem})"))
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
