"""Is a journal file to be trusted?  The checks made at every start (the
file, its WAL and index — read by their format in runtime.wal_format — row
by row), the quarantine for rows that cannot be read, and setting a bad file
aside (renamed, never deleted)."""

from __future__ import annotations

import functools
import math
import os
import sqlite3
import tempfile
import time
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from companion.core.events import input_from_json
from companion.core.tags import printable
from companion.runtime.journal import SCHEMA_VERSION, TABLES_SINCE, Journal, _json, fsync_dir, read_only
from companion.runtime.wal_format import committed_frames, wal_problem

# SQLite's own error text can quote a damaged page, and the stdlib raises
# UnicodeDecodeError decoding it: both mean "this file cannot be read".
DB_ERRORS = (sqlite3.Error, UnicodeDecodeError)


@dataclass(frozen=True)
class Notice:
    """Something the table should hear (a ``journal.*`` line) and the log
    should get (an ``error`` event with ``message``)."""

    key: str | None
    params: dict[str, Any]
    message: str


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
        if missing and allow_empty and have <= {*tables, *TABLES_SINCE} and not any(
                con.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() for t in have & {"inputs", "plays"}):
            missing = []  # a fresh journal, or its schema cut short by a power cut: completed on open
        if missing:  # a backup is never empty
            return f"it is not a companion journal (no {', '.join(missing)} table)"
    except DB_ERRORS as e:
        return f"it cannot be read ({printable(str(e))})"
    finally:
        con.close()
    return None


Schema = frozenset[tuple[str, str, str, str | None]]  # (type, name, table, its SQL, blanks collapsed)


def _schema(con: sqlite3.Connection) -> Schema:
    rows = con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return frozenset((t, n, tbl, " ".join(sql.split()) if isinstance(sql, str) else None) for t, n, tbl, sql in rows)


@functools.lru_cache(maxsize=1)
def fresh_schema() -> Schema:
    """What ``Journal`` creates: the one schema a journal may have."""
    with tempfile.TemporaryDirectory(prefix="companion-schema-") as tmp:
        journal = Journal(Path(tmp) / "journal.sqlite")
        try:
            return _schema(journal.db)
        finally:
            journal.close()


def schema_problem(path: Path) -> str | None:
    """Why ``path`` is not exactly a journal this release reads (None: it
    is): a version it knows, and the tables, columns and constraints a fresh
    journal of that version has — nothing more.  A trigger can delete every
    input the table then acknowledges; a table with the journal's name and
    other columns restores, then fails at every start."""
    try:
        con = read_only(path)
        try:
            version = int(con.execute("PRAGMA user_version").fetchone()[0])
            have = _schema(con)
        finally:
            con.close()
    except DB_ERRORS as e:
        return f"it cannot be read ({printable(str(e))})"
    if version > SCHEMA_VERSION:
        return (f"it was written by a newer companion (journal version {version}; this one reads up to "
                f"{SCHEMA_VERSION}): restore it with that release")
    if version < 0:
        return f"its journal version {version} is not one companion writes"
    want = frozenset(row for row in fresh_schema() if TABLES_SINCE.get(row[2], 0) <= version)
    tables = {row[1] for row in want if row[0] == "table"}
    for kind in ("trigger", "view", "index", "table"):
        if extra := sorted(printable(row[1])[:60] for row in have - want if row[0] == kind
                           and (kind != "table" or row[1] not in tables)):
            return f"it holds {'an' if kind == 'index' else 'a'} {kind} a journal never has ({', '.join(extra)})"
    if missing := sorted(t for t in tables if t not in {row[1] for row in have if row[0] == "table"}):
        return f"it is not a companion journal (no {', '.join(missing)} table)"
    if differ := sorted({row[2] for row in have ^ want}):
        return (f"its {', '.join(differ)} {'table is' if len(differ) == 1 else 'tables are'} not the journal's "
                "(other columns or constraints)")
    return None


def set_aside(path: Path, why: str = "damaged") -> Path:
    """Rename a file (and its WAL and index) out of the way as
    ``<name>.<why>-<time>``; nothing is deleted."""
    aside = aside_name(path, why)
    move_aside(path, aside)
    return aside


def aside_name(path: Path, why: str = "damaged") -> Path:
    """A name ``set_aside`` would give ``path`` now: ``<name>.<why>-<time>``, not taken."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.{why}-{stamp}")
    n = 1
    while any(os.path.lexists(f"{aside}{suffix}") for suffix in ("", "-wal", "-shm")):
        n += 1
        aside = path.with_name(f"{path.name}.{why}-{stamp}-{n}")
    return aside


def move_aside(path: Path, aside: Path) -> None:
    """Rename what is left of ``path``, its WAL and index, to ``aside``'s:
    again after a kill, the rest follows (a piece already there is never
    overwritten).  The main file goes last, so a WAL is never left beside a
    file that is not its own."""
    for suffix in ("-wal", "-shm", ""):
        part, to = Path(f"{path}{suffix}"), Path(f"{aside}{suffix}")
        if not os.path.lexists(part):
            continue
        n = 1
        while os.path.lexists(to):
            n += 1
            to = Path(f"{aside}-{n}{suffix}")
        os.rename(part, to)
    fsync_dir(path.parent)


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


def quarantine_bad_rows(journal: Journal, *, now: Callable[[], float] = time.time,
                        every_input: bool = False) -> list[Notice]:
    """Move every row the table cannot replay or show into ``quarantine``
    (source, row id, data, problem), in one transaction; one notice each.
    Checked: the checkpoint, the inputs after it (all of them if it goes, or
    ``every_input``: just recovered, rows read from damaged pages may be
    anywhere), the meta seed, and the plays."""
    db = journal.db
    bad: list[tuple[str, int | str, Any, str]] = []
    after = 0
    row = db.execute("SELECT seq, state FROM checkpoint WHERE id=1").fetchone()
    if row is not None:
        problem = ("its input number is not a number" if not isinstance(row[0], int)
                   else checkpoint_problem(_json(row[1])) if _json(row[1]) is not None else "not JSON")
        if problem:
            bad.append(("checkpoint", 1, row[1], f"checkpoint {problem}"))
        elif not every_input:
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
