"""``companion backup [FILE]`` and ``companion restore FILE``.

``backup`` copies the journal through SQLite's online backup API — safe
beside the running daemon, and it includes what still lives only in the WAL
(copying ``journal.sqlite`` alone would not).  Without FILE it goes to
``backups/`` in the state directory, named ``manual-…`` so the automatic
rotation never removes it.  ``restore`` puts a backup in the journal's place
(refused while a daemon holds the journal); the journal it replaces is
renamed aside, never deleted."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from companion.app.start import state_dir


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state", type=Path, help="state directory holding journal.sqlite")
    # one module, two commands: each --help describes its own FILE
    if p.prog.split()[-1] == "restore":
        p.description = ("Put a backup in the journal's place. The backup is checked first; the daemon must be "
                         "stopped; the journal it replaces is renamed journal.sqlite.replaced-<time>, never deleted.")
        p.add_argument("file", type=Path, nargs="?",
                       help="the backup to restore (from backups/ in the state directory, or one `companion backup` wrote)")
    else:
        p.add_argument("file", type=Path, nargs="?",
                       help="where to write (default: backups/manual-….sqlite in the state directory)")


def run(args: argparse.Namespace) -> int:
    from companion.app.config import for_command
    from companion.runtime import backups
    from companion.runtime.journal import Journal

    path = state_dir(for_command(args)) / "journal.sqlite"
    if args.command == "restore":
        if args.file is None:
            print("companion restore: name the backup to restore (see backups/ in the state directory)",
                  file=sys.stderr)
            return 2
        try:
            what, aside = backups.restore(path, args.file)
        except ValueError as e:
            print(f"companion restore: {e}; nothing changed", file=sys.stderr)
            return 1
        print(f"Restored {what}" + (f"; the journal it replaces is kept as {aside.name}" if aside else ""))
        return 0
    if not path.is_file():
        print(f"companion backup: no journal at {path}", file=sys.stderr)
        return 1
    try:
        journal = Journal(path, readonly=True)
        try:
            target = backups.make_backup(journal, args.file, kind="manual")
            n = journal.count_inputs()
        finally:
            journal.close()
    except (sqlite3.Error, OSError) as e:
        print(f"companion backup: could not back up {path}: {e}", file=sys.stderr)
        return 1
    print(f"Backed up {n} inputs to {target}")
    return 0
