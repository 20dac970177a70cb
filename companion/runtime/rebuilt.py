"""A recovered journal put in place so that a kill at any moment is finished
at the next start, or said — never a silent empty table.

Recovery used to rename the damaged journal aside first and write the
recovered one after: a kill in between left no journal, and the next start
began an empty table without a word (the data only in the ``.damaged-*``
copy).  Now, in this order, each step durable before the next:

1. the recovered journal is written beside, as ``<journal>.recovering``
   (read from the damaged files where they lie; nothing of them changes),
   with what the table must be told in it (``meta`` ``recovery``) and the
   name the damaged files will be kept as;
2. it is synced and renamed ``<journal>.recovered``: from here on the
   recovery is decided, and any start finishes it (``finish``);
3. the damaged journal, its WAL and index are renamed aside (never deleted),
   and the recovered journal renamed into their place;
4. the first start that opens it says what happened (``said``), once.

Killed before 2, the next start finds the damaged journal untouched and
recovers it again (the unfinished ``.recovering`` is discarded).  Killed
after, it finishes the switch and says the recovery.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from companion.runtime.journal import Journal, fsync_dir, new_epoch
from companion.runtime.journal_check import Notice, aside_name, move_aside
from companion.runtime.salvage import Rows, write_rows

REPORT = "recovery"  # meta key: the recovery's notices, until a start has said them


def beside(path: Path, what: str) -> Path:
    return path.with_name(f"{path.name}.{what}")


def write_beside(path: Path, rows: Rows, notices: list[Notice], aside: Path | None, *, fresh_epoch: bool) -> None:
    """Steps 1 and 2: the recovered journal beside ``path``, synced, then
    renamed ``<journal>.recovered`` — the moment the recovery is decided."""
    part = beside(path, "recovering")
    _discard(part)
    write_rows(part, rows)
    report = {"aside": aside.name if aside is not None else None,
              "notices": [[n.key, n.params, n.message] for n in notices]}
    db = sqlite3.connect(str(part), isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        if fresh_epoch:  # seqs after what was recovered are given again: new ids for what they publish
            new_epoch(db)
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (REPORT, json.dumps(report)))
        db.execute("COMMIT")
        db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file: no WAL to rename with it
    finally:
        db.close()
    with open(part, "rb") as f:
        os.fsync(f.fileno())
    os.replace(part, beside(path, "recovered"))
    fsync_dir(path.parent)


def finish(path: Path) -> bool:
    """Step 3, for this start's recovery or one a kill interrupted: the
    damaged files renamed aside as the recovered journal names them, it in
    their place.  True if there was a recovery to finish.  An unfinished
    ``.recovering`` (killed before step 2) is discarded: the damaged journal
    is still where it was, and is recovered again."""
    _discard(beside(path, "recovering"))
    done = beside(path, "recovered")
    if not done.is_file():
        return False
    named = _report(done).get("aside")
    if any(os.path.lexists(f"{path}{suffix}") for suffix in ("", "-wal", "-shm")):
        # Nothing of the journal that was here is read with the new one, and nothing is deleted.
        move_aside(path, path.with_name(named) if isinstance(named, str) and named and Path(named).name == named
                   else aside_name(path))
    os.replace(done, path)
    fsync_dir(path.parent)
    return True


def said(journal: Journal) -> list[Notice]:
    """Step 4: what a recovery must tell the table, taken out of the journal
    as it is handed over (said once).  Empty for a journal not just recovered."""
    row = journal.db.execute("SELECT value FROM meta WHERE key=?", (REPORT,)).fetchone()
    if row is None:
        return []
    journal.db.execute("DELETE FROM meta WHERE key=?", (REPORT,))
    try:
        notices = json.loads(row[0])["notices"]
        return [Notice(k, dict(p), str(m)) for k, p, m in notices]
    except (ValueError, KeyError, TypeError):
        return [Notice("journal.recovered", {"count": journal.count_inputs()},
                       f"journal {journal.path.name}: recovered {journal.count_inputs()} inputs after a stop")]


def _report(done: Path) -> dict[str, object]:
    try:
        db = sqlite3.connect(f"file:{done}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key=?", (REPORT,)).fetchone()
        finally:
            db.close()
        report = json.loads(row[0]) if row else {}
    except (sqlite3.Error, ValueError):
        return {}
    return report if isinstance(report, dict) else {}


def _discard(part: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{part}{suffix}").unlink(missing_ok=True)
