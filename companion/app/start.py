"""The first part of a daemon's start: the state directory locked to this
process and its journal opened on a thread of its own.

SQLite lets go of the interpreter while it checks a journal (a long one: a
tenth of a second and more), and the rest of a start holds it (importing the
table, its loop, the panel's library, the pages; making them): begun once the
config is read, before any of that is imported (``companion.app.run_cmd``),
the check runs while it is made, and a start waits for the longer of the two
rather than for both.  ``wiring.build`` finishes the start.  Only the
journal's own modules are imported here."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from companion import threads
from companion.runtime.journal import Journal
from companion.runtime.journal_check import Notice
from companion.runtime.journal_guard import open_journal
from companion.runtime.state_lock import StateLock

if TYPE_CHECKING:
    from hardware.panel import Panel


def state_dir(cfg: dict[str, Any]) -> Path:
    return Path(cfg["state_dir"] or os.environ.get("STATE_DIRECTORY", "").split(":")[0] or "state")


class Start:
    """A start's lock and its journal's opening (``begin``)."""

    def __init__(self, path: Path, journal_class: type[Journal], mirror_dir: Path | None) -> None:
        self.lock = StateLock(path)  # one daemon per journal: StateLocked names the other one
        self.mirror_dir = mirror_dir
        self.built = False  # the app has the journal and the lock (wiring.build): its close lets them go
        self._let_go = False
        # checked, recovered (from its mirror too), bad rows quarantined
        self._opening = threads.Beside("journal-open", open_journal, path, journal_class, mirror_dir)

    def journal(self) -> tuple[Journal, list[Notice]]:
        """The journal and what the table and the log should be told (waits for the check)."""
        journal, notices = self._opening.result()
        return journal, notices

    def let_go(self, made: Sequence[Panel] = ()) -> None:
        """The start failed (the journal could not be opened, or a part made beside it
        could not be made): the journal once its thread is done, the panel's pins and the
        lock are let go (once).  The first error is the one raised; these are moot."""
        if self._let_go:
            return
        self._let_go = True
        try:
            journal, _notices = self.journal()
        except Exception:  # noqa: BLE001 - the journal's own error, raised by the caller
            pass
        else:
            journal.close()
        for panel in made:
            panel.close()
        self.lock.release()


def begin(cfg: dict[str, Any], journal_path: Path | None = None, journal_class: type[Journal] | None = None) -> Start:
    """The lock taken (StateLocked if another companion has the journal) and the
    journal's opening begun: ``journal_path`` by default the state directory's."""
    mirror_dir = Path(cfg["journal"]["mirror"]) if cfg["journal"]["mirror"] else None
    return Start(journal_path or state_dir(cfg) / "journal.sqlite", journal_class or Journal, mirror_dir)
