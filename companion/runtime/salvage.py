"""Reading what can be read from a damaged journal: its WAL's committed
frames, SQLite's ``.recover`` where the ``sqlite3`` tool has it, row by row
through SQLite, then every page decoded by hand (``page_scan``: what
``.recover`` does, where the tool lacks it — Debian's does).  The rows come
out as plain tuples per table, to be merged with a backup and written into a
new journal."""

# shutil, subprocess and tempfile are imported where a recovery needs them:
# every start imports the journal modules, and they cost ~10 ms.
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from companion.runtime.journal import PAGE_SIZE, Journal, read_only
from companion.runtime.journal_check import DB_ERRORS
from companion.runtime.page_scan import scan
from companion.runtime.wal_format import committed_frames

Rows = dict[str, dict[Any, tuple[Any, ...]]]  # table → row id (the outbox's: its place) → the other columns
_COLUMNS = {"meta": "key, value", "inputs": "t, wall, input", "plays": "seq, session, game, play",
            "checkpoint": "seq, state", "outbox": "seq, k, id, topic, payload"}
_KEY = {"meta": "key", "inputs": "seq", "plays": "id", "checkpoint": "id", "outbox": "rowid"}
_SINCE_V2 = {"outbox"}  # a journal (or backup) of version 1 or older has none: nothing to read there


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
        rows = empty_rows()
        if wal is not None and wal.is_file():
            shutil.copyfile(wal, Path(str(copy) + "-wal"))
            # The WAL's committed pages written into a copy of the main file by
            # hand: what SQLite would read, even where the main file lost its header.
            patched = Path(tmp) / "patched.sqlite"
            shutil.copyfile(copy, patched)
            main_pages = patched.stat().st_size // PAGE_SIZE
            size, pages, db_pages = committed_frames(wal.read_bytes(), main_pages)
            with open(patched, "r+b") as f:
                for pgno, image in sorted(pages.items()):
                    f.seek((pgno - 1) * size)
                    f.write(image)
                if db_pages:
                    f.truncate(db_pages * size)
            merge_into(rows, read_rows(patched))
            merge_into(rows, scan(patched))
        recovered = Path(tmp) / "recovered.sqlite"
        if _sqlite_recover(copy, recovered):
            merge_into(rows, read_rows(recovered))
            merge_into(rows, _lost_and_found(recovered))
        try:  # let SQLite recover the copy's WAL (read-only connections cannot)
            sqlite3.connect(copy).close()
        except DB_ERRORS:
            pass
        merge_into(rows, read_rows(copy))  # row by row: also where the tool is missing
        merge_into(rows, scan(copy))  # past a lost page 1, schema or interior page
    return rows


def empty_rows() -> Rows:
    return {t: {} for t in _COLUMNS}


def merge_into(rows: Rows, more: Rows, *, prefer_new: bool = False) -> None:
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
        if dump.returncode != 0 or not dump.stdout:  # a tool without sqlite_dbpage fails here, damage or not
            return False
        subprocess.run([tool, str(out)], input=dump.stdout, capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.exists()


def read_rows(path: Path) -> Rows:
    """Rows of each journal table, read in ranges of row ids that halve
    around the damage, so one bad page costs only the rows on it."""
    rows = empty_rows()
    try:
        con = read_only(path)
    except DB_ERRORS:
        return rows
    budget = [20000]  # queries: a damaged b-tree root could otherwise send us down 2^31 ranges
    try:
        for table, cols in _COLUMNS.items():
            try:
                top = con.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0]
            except DB_ERRORS as e:
                if table in _SINCE_V2 and "no such table" in str(e):
                    continue
                top = 1 << 31
            if top is None:
                continue
            _read_range(con, table, cols, 1, int(top), rows[table], budget)
    finally:
        con.close()
    # an outbox row is known by its place (seq, k), not by a row id another file gives another row
    rows["outbox"] = {(v[0], v[1]): v for v in rows["outbox"].values() if len(v) == 5}
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
    rows = empty_rows()
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
                elif nfield == 5 and isinstance(values[4], str) and rowid is not None and isinstance(values[2], str):
                    rows["outbox"].setdefault((values[0], values[1]), tuple(values[0:5]))  # its third column: the id
                elif nfield == 5 and isinstance(values[4], str) and rowid is not None:
                    rows["plays"].setdefault(rowid, tuple(values[1:5]))
    except DB_ERRORS:
        pass
    finally:
        con.close()
    return rows


def keep_valid_inputs(rows: Rows) -> None:
    """Salvage from a damaged page can be garbage: keep inputs whose
    columns have the right types (their content is checked by the quarantine)."""
    rows["inputs"] = {k: v for k, v in rows["inputs"].items()
                      if isinstance(k, int) and k > 0 and len(v) == 3 and isinstance(v[2], str)
                      and all(isinstance(x, (int, float)) for x in v[:2])}


def write_rows(path: Path, rows: Rows) -> None:
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
        db.executemany("INSERT OR IGNORE INTO outbox (seq, k, id, topic, payload) VALUES (?, ?, ?, ?, ?)",
                       [v for _, v in sorted(rows["outbox"].items()) if len(v) == 5 and isinstance(v[0], int)
                        and isinstance(v[1], int) and all(isinstance(x, str) for x in v[2:])])
        cp = rows["checkpoint"].get(1)
        if cp is not None and len(cp) == 2 and isinstance(cp[0], int) and isinstance(cp[1], str):
            db.execute("INSERT OR REPLACE INTO checkpoint VALUES (1, ?, ?)", cp)
        db.execute("COMMIT")
    finally:
        journal.close()
