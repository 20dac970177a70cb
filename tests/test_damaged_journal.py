"""A failing microSD card overwrites whole pages of the journal: what the next
start keeps.  Measured before: a Seven Knights game in round 2 with round 1
scored, four 4 KiB pages of ``journal.sqlite`` overwritten, and the next start
"recovered 0 inputs" and began a new table — round 1's scores gone.

Goal: without a mirror, at most the round in progress is lost; with one, nothing."""

from __future__ import annotations

import random
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from companion.runtime import backups  # noqa: E402
from companion.runtime.journal import Journal  # noqa: E402
from reliability.inproc import Runner  # noqa: E402
from reliability.scripts import generate  # noqa: E402

PAGE = 4096


def in_round_two(state: Path, cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play a Seven Knights game until round 1 is scored and round 2 is under
    way; the table's public view of the game then (its rounds, its step)."""
    r = Runner(state, cfg)
    try:
        steps = generate(40, games=["seven-knights"], wrong=0).steps
        for i, step in enumerate(steps):
            r.run(step)
            if any(e["event"] == "round_scored" for e in r.events):
                for more in steps[i + 1:i + 6]:  # a few inputs into round 2
                    r.run(more)
                break
        play = dict(r.sim.app.loop.table.public_view()["play"])
    finally:
        r.close()
    assert play["round"] == 2 and len(play["rounds"]) == 1, play
    return play


def inputs_held(state: Path) -> list[tuple[Any, ...]]:
    j = Journal(state / "journal.sqlite")
    try:
        return j.db.execute("SELECT seq, t, wall, input FROM inputs ORDER BY seq").fetchall()
    finally:
        j.close()


def pages_of(path: Path, table: str) -> set[int]:
    """The pages (0-based) a table's b-tree lies on (SQLite's dbstat)."""
    db = sqlite3.connect(path)
    try:
        return {p - 1 for (p,) in db.execute("SELECT pageno FROM dbstat WHERE name=?", (table,))}
    finally:
        db.close()


def overwrite(path: Path, pages: list[int], seed: int) -> None:
    """What a failing card does: whole 4 KiB pages replaced by garbage."""
    rng = random.Random(seed)
    with open(path, "r+b") as f:
        for p in pages:
            f.seek(p * PAGE)
            f.write(rng.randbytes(PAGE))


def four_pages(path: Path, seed: int, *, spare: set[int] = frozenset()) -> list[int]:  # type: ignore[assignment]
    n = path.stat().st_size // PAGE
    return sorted(random.Random(seed).sample([p for p in range(n) if p not in spare], 4))


def restarted(state: Path, cfg: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    r = Runner(state, cfg)
    try:
        return dict(r.sim.app.loop.table.public_view().get("play") or {}), r.events
    finally:
        r.close()


@pytest.mark.parametrize("seed", range(8))
def test_finding_four_overwritten_pages_keep_round_one_scores(tmp_path: Path, seed: int) -> None:
    """The measurement: round 1 scored, round 2 in progress, four pages of the
    journal overwritten.  Whatever the four pages, round 1's scores survive
    (from what the damaged file still holds, or the backup made when round 1
    was scored) and the table is in the same game."""
    state = tmp_path / "state"
    before = in_round_two(state)
    journal = state / "journal.sqlite"
    overwrite(journal, four_pages(journal, seed), seed)
    play, events = restarted(state)
    assert play.get("rounds", [])[:1] == before["rounds"], [e.get("message") for e in events if e["event"] == "error"]
    # the same game: in round 2, or — when the damage took round 2's first inputs
    # with it — at round 1's end, where the backup was made (the round in play is lost)
    assert (play["round"], play["step"]) == (2, before["step"]) or (play["round"], play["step"]) == (1, "round_over")


@pytest.mark.parametrize("seed", range(6))
def test_finding_salvage_reads_every_input_a_damaged_file_still_holds(tmp_path: Path, seed: int) -> None:
    """No backup at all: four pages overwritten, the inputs' own pages spared
    (the schema, the indexes, the other tables may be hit, page 1 too): every
    input is read back from the file, and the table is where it was."""
    state = tmp_path / "state"
    before = in_round_two(state)
    held = inputs_held(state)
    shutil.rmtree(state / "backups", ignore_errors=True)
    journal = state / "journal.sqlite"
    overwrite(journal, four_pages(journal, seed, spare=pages_of(journal, "inputs")), seed)
    play, _ = restarted(state)
    assert inputs_held(state) == held
    assert play["rounds"] == before["rounds"] and play["step"] == before["step"]


def test_finding_a_backup_is_made_when_a_round_is_scored(tmp_path: Path) -> None:
    """A round's end is settled like a game's: a backup then holds it."""
    state = tmp_path / "state"
    in_round_two(state)
    found = backups.backups(state / "journal.sqlite")
    assert found, "no backup after round 1"
    b = sqlite3.connect(found[0])
    try:
        scored = [row for (row,) in b.execute("SELECT input FROM inputs")]
    finally:
        b.close()
    assert len(scored) >= len(inputs_held(state)) - 5  # all but the few inputs into round 2
