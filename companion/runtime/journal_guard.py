"""Keeping the journal whole: one daemon per journal, a check at every
start, recovery from damage, a quarantine for unreadable rows, backups.

What a Pi beside a table meets: a second process on the same state
directory, an SD card that corrupts a page, a power cut, a file edited by
hand.  The rules, and the module that keeps each:

- **One writer** (``state_lock``).  ``StateLock`` holds ``journal.sqlite.lock`` (``flock``)
  for the process's life; a second daemon is told who holds it.  Readers
  (``companion scores``, ``companion backup``) need no lock: WAL lets them in.
- **A damaged journal is never deleted and never a crash** (here, with
  ``journal_check`` and ``salvage``).  It is renamed
  aside with a timestamp; what can be read from it (row by row, and page by
  page: ``salvage``, ``page_scan``) is merged with the newest intact backup
  and the journal's mirror (``mirror``) into a new journal; the table hears
  what happened and the log gets an ``error`` event with a plain sentence.
- **The longer history wins** (``mirror``).  A journal that lacks inputs
  its own mirror holds (cut short, missing) is rebuilt from the two; a
  mirror of another journal is never merged into it.
- **A bad row is not a bad journal** (``journal_check``).  Rows that cannot be read (an unknown
  input, non-JSON, a checkpoint of the wrong shape) are moved to the
  ``quarantine`` table with the reason, and reported with their id.
- **Backups** (``backups``) go to ``backups/`` beside the journal through SQLite's online
  backup API after each scored round and finished game (see ``after_game`` for why then).

This module opens a journal at start: checked, recovered if it must be,
its bad rows in quarantine.
"""

from __future__ import annotations

import os
from pathlib import Path

from companion.core.tags import printable
from companion.runtime import mirror_file, rebuilt
from companion.runtime.backups import newest_intact_backup
from companion.runtime.journal import EPOCH, Journal, _json, epoch_at, read_only
from companion.runtime.journal_check import DB_ERRORS, Notice, aside_name, diagnose, quarantine_bad_rows
from companion.runtime.journal_identity import identity_at
from companion.runtime.salvage import (
    Rows,
    empty_rows,
    keep_valid_inputs,
    merge_into,
    read_rows,
    salvage,
)

__all__ = ["open_journal"]


def open_journal(path: Path, journal_class: type[Journal] = Journal,
                 mirror: Path | None = None) -> tuple[Journal, list[Notice]]:
    """The journal, checked, recovered if it must be, its bad rows in
    quarantine; with what the table and the log should be told.  ``mirror``:
    the folder of its mirror (runtime.mirror), whose longer history wins.
    Raises JournalTooNew (a newer release's journal: refused, untouched)."""
    notices: list[Notice] = []
    rebuilt.finish(path)  # a recovery a kill interrupted after it was decided (runtime.rebuilt)
    problem = diagnose(path)
    # A readable journal is held against its own epoch's newest backup (none yet
    # after a restore); a damaged one, whose epoch cannot be read, against any.
    named: list[tuple[int, str | None]] = []  # every backup's last input and epoch: how far the journal went
    backup = newest_intact_backup(path, notices, epoch=epoch_at(path) if problem is None else None,
                                  identity=identity_at(path) if problem is None else None, seen=named)
    if problem is None and backup is not None:
        problem = _behind(path, backup)
    mirrored = _mirrored(path, mirror, problem is None, backup) if mirror is not None else None
    if problem is None and mirrored is not None:
        problem = (f"the journal file is missing; its mirror {mirrored[1]} holds {len(mirrored[0]['inputs'])} inputs"
                   if not os.path.lexists(path) else f"it lacks inputs that its mirror {mirrored[1]} holds")
    if problem is not None:
        _recover(path, problem, backup, mirrored, named)
    journal = journal_class(path)
    recovered = rebuilt.said(journal)
    notices += recovered
    # Rows salvaged from damaged pages are checked whole, not only past the checkpoint.
    notices += quarantine_bad_rows(journal, every_input=bool(recovered))
    return journal, notices


def _behind(path: Path, backup: Path) -> str | None:
    """The journal must hold everything its newest backup holds (a backup
    is a copy of an earlier journal, and inputs are only ever appended) —
    (``open_journal`` gives it a backup of its own epoch: one made before a
    restore is not the restored journal's past)."""
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


def _mirrored(path: Path, folder: Path, readable: bool, backup: Path | None = None) -> tuple[Rows, Path] | None:
    """The mirror's history as rows, with its file — when the journal may
    lack some of it: it is damaged, or its own mirror (runtime.mirror_file:
    named for its identity and epoch) goes on past its last input, agreeing
    with it there, by more than the one input a kill between a tap's mirror
    line and its COMMIT leaves (never acknowledged: runtime.mirror cuts it).
    None when the journal holds all of it, when the mirror went its own way
    (runtime.mirror sets it aside), or there is no mirror of this journal:
    another table's is never read.  Only a journal whose identity cannot be
    read, with no backup to tell it, takes a mirror it cannot check: that of
    the only journal the folder holds any of (runtime.mirror_file.found)."""
    epoch = epoch_at(path)
    ident = identity_at(path) or (identity_at(backup) if backup is not None and not readable else None)
    found = mirror_file.found(folder, ident, epoch)
    try:
        if found is None or not found.is_file():
            return None
        if readable and epoch is not None and ident is not None and not _goes_past(path, found):
            return None
        history = list(mirror_file.records(found))
    except (OSError, *DB_ERRORS):
        return None  # an unreadable mirror is the mirror's problem (said when it is opened), not the journal's
    return (mirror_file.as_rows(history, mirror_file.epoch_of(found)), found) if history else None


def _goes_past(path: Path, found: Path) -> bool:
    """Does this journal's mirror hold inputs past the journal's last one
    (read from the mirror's end: cheap at every start), and the journal's
    last input as the journal holds it?"""
    last = mirror_file.last_record(found)
    db = read_only(path)
    try:
        top = int(db.execute("SELECT coalesce(max(seq), 0) FROM inputs").fetchone()[0])
        if last is None or last["seq"] <= top + 1:
            return False
        mine = db.execute("SELECT input FROM inputs WHERE seq=?", (top,)).fetchone()
    finally:
        db.close()
    theirs = mirror_file.last_record(found, top)
    return mine is not None and theirs is not None and theirs["seq"] == top and theirs["input"] == mine[0]


def _with_backup(rows: Rows, theirs: Rows) -> Rows:
    """The salvage together with a backup (or the mirror): the journal's own
    past, unless both say which epoch they are and differ (a backup from
    before a restore: another history).  Together: every input either holds,
    the checked copy's row where both hold one (a row salvaged from a damaged
    page may be damaged itself).  Apart: whichever holds more inputs.  Never
    fewer inputs than either."""
    mine, other = rows["meta"].get("epoch"), theirs["meta"].get("epoch")
    if mine is None or mine == (other or ("epoch", "")):
        merge_into(rows, theirs, prefer_new=True)
        return rows
    return theirs if len(theirs["inputs"]) >= len(rows["inputs"]) else rows


def _drop_a_checkpoint_past_the_inputs(rows: Rows) -> None:
    """A checkpoint is the state after its input: one past the last input
    recovered would hide every input taken from now on (they get the next
    seqs, below it).  Without it the table is replayed from the first input."""
    cp = rows["checkpoint"].get(1)
    if cp is not None and (not isinstance(cp[0], int) or cp[0] > max(rows["inputs"], default=0)):
        del rows["checkpoint"][1]


def _recover(path: Path, problem: str, backup: Path | None, mirrored: tuple[Rows, Path] | None,
             named: list[tuple[int, str | None]]) -> None:
    """Read what can be read, merge it with the backup and the mirror, and
    put it in place — resumably, with what the table must hear (runtime.rebuilt)."""
    aside: Path | None = None
    rows = empty_rows()
    wal = Path(str(path) + "-wal")
    if os.path.lexists(path) or os.path.lexists(wal):
        aside = aside_name(path)
        rows = salvage(path, wal)  # read where it lies: nothing is moved until the recovery is written
    keep_valid_inputs(rows)
    from_journal = len(rows["inputs"])
    used = None
    if backup is not None:
        before = set(rows["inputs"])
        theirs = read_rows(backup)
        rows = _with_backup(rows, theirs)
        if len(theirs["inputs"]):
            used = backup
        from_backup = len(set(rows["inputs"]) - before)
        from_journal = len(set(rows["inputs"]) & before)
    else:
        from_backup = 0
    from_mirror = 0
    exact = False
    if mirrored is not None:
        before = set(rows["inputs"])
        rows = _with_backup(rows, mirrored[0])
        from_mirror = len(set(rows["inputs"]) - before)
        # The mirror's whole history and nothing else: the journal it mirrored, seqs and epoch as they were.
        exact = rows["inputs"] == mirrored[0]["inputs"]
    top = _last_seq_known(rows, named)
    _drop_a_checkpoint_past_the_inputs(rows)
    total = len(rows["inputs"])
    lost = top - total  # gaps, and a tail as far as the numbering shows
    kept = f"kept as {aside.name}" if aside else "nothing to keep"
    source = (f"{from_journal} from it" + (f", {from_backup} more from backup {used.name}" if used else "")
              + (f", {from_mirror} more from its mirror {mirrored[1]}" if mirrored is not None else ""))
    message = (f"journal {path.name}: {problem}; {kept}; recovered {total} inputs ({source})"
               + (f"; {lost} inputs could not be recovered" if lost else "") + "; the table goes on from there")
    notices = [Notice("journal.started_fresh", {}, message) if total == 0
               else Notice("journal.recovered", {"count": total}, message)]
    if lost:
        notices.append(Notice("journal.lost_some", {"count": lost},
                              f"journal: {lost} inputs between 1 and {top} are missing after recovery"))
    rebuilt.write_beside(path, rows, notices, aside, fresh_epoch=not exact)
    rebuilt.finish(path)


def _last_seq_known(rows: Rows, named: list[tuple[int, str | None]]) -> int:
    """The highest input number anything still shows this journal reached:
    its inputs, the seqs its plays, checkpoint and MQTT outbox rows carry
    (written with their input), and the numbers in the names of its backups
    (``backups``: damaged ones too) of the same epoch — a lost tail counted as
    far as the numbering goes.  Past that nothing can be counted."""
    def told(seq: object, text: object) -> bool:  # a row read from a damaged page: whole, or not counted
        return isinstance(seq, int) and isinstance(_json(text), dict)

    seqs = [*rows["inputs"], 0]
    seqs += [v[0] for v in rows["plays"].values() if len(v) == 4 and told(v[0], v[3])]
    seqs += [v[0] for v in rows["checkpoint"].values() if len(v) == 2 and told(v[0], v[1])]
    seqs += [v[0] for v in rows["outbox"].values() if len(v) == 5 and told(v[0], v[4])]
    epoch = rows["meta"].get(EPOCH, (EPOCH, ""))[1]
    seqs += [seq for seq, theirs in named if theirs == epoch]
    return max(seqs)
