"""Rebuilding the table from its journal (on start, and after a journal
write failed): the checkpoint, then every input journaled after it."""

from __future__ import annotations

from collections.abc import Callable

from companion.core import events as ev
from companion.core.table import Table
from companion.runtime.journal import Journal
from companion.runtime.plays import game_started


def replay(table: Table, journal: Journal, error: Callable[[str], None]) -> tuple[int, float | None]:
    """Replay ``journal`` into ``table``: the inputs replayed, and the table time
    (the journal's t) the last game begun in them began, if one did.  An input
    the rules no longer take (an old journal) is logged and skipped."""
    seq, cp = journal.checkpoint()
    n, game_start = 0, None
    for entry, result in table.replay(cp, journal.entries(after=seq)):
        if isinstance(result, ev.Refusal):
            error(f"journal input {entry.seq} no longer applies: {result.reason}")
            continue
        if game_started(result):
            game_start = entry.t
        n += 1
    return n, game_start
