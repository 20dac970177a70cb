"""A journal with 10,000 finished games and one in progress, built fast, for
the resume benchmark (start-up to READY=1 on that state directory).

The rows are the daemon's own: one Seven Knights and one One Night game are
played through ``Simulation`` (the real loop, table, engines and journal;
virtual time, with an unhurried 2.37 s between steps so the stored times are
the fractional values a real table writes).  Their inputs and plays are then
copied pair after pair with SQL, shifted in sequence number and time, and the
checkpoint a replay would reach is written (per-game standings scale with the
number of pairs).  That shortcut is checked on every build: a small journal
made the same way is replayed from its first input by a fresh ``Session``,
and must reach the same checkpoint.  Finally the game in progress is played
into the big journal through ``Simulation`` again, so the daemon resumes a
Seven Knights game in its second round.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qa.bench import flows
from qa.bench.stats import config

PAUSE_S = 2.37  # between steps of the played games (virtual time)
DATE = "%Y-%m-%d %H:%M:%S"


def _play(state: Path, steps: list[flows.Step]) -> None:
    from companion.app.simulate import Simulation

    sim = Simulation(config(), state, lambda ev: None)
    try:
        flows.play(sim, steps, PAUSE_S)
    finally:
        sim.close()


def in_progress() -> list[flows.Step]:
    """Seven Knights up to the middle of round 2's election."""
    flow = flows.seven_knights()
    cut = next(i for i, (kind, value) in enumerate(flow) if (kind, value) == ("tap", "player/black"))
    return flow[: cut - 4]


def _scaled_checkpoint(state: dict[str, Any], pairs: int) -> dict[str, Any]:
    """The checkpoint after ``pairs`` copies of the two games: per-game totals
    and the games counter add up; everything else is as after one pair."""
    out = json.loads(json.dumps(state))
    out["games_started"] = state["games_started"] * pairs
    out["standings"] = {game: {p: pts * pairs for p, pts in totals.items()}
                        for game, totals in state["standings"].items()}
    return out


def _replicate(db: sqlite3.Connection, pairs: int) -> None:
    inputs = db.execute("SELECT seq, t, wall, input FROM inputs ORDER BY seq").fetchall()
    plays = db.execute("SELECT seq, session, game, play FROM plays ORDER BY id").fetchall()
    (cp_seq, cp_state), = db.execute("SELECT seq, state FROM checkpoint").fetchall()
    n = len(inputs)
    if cp_seq != n or len(plays) != 2:
        raise RuntimeError(f"the played pair left {len(plays)} plays and a checkpoint at {cp_seq}/{n}")
    span = inputs[-1][1] - inputs[0][1] + 600.17  # ten minutes between games
    db.execute("BEGIN")
    for k in range(1, pairs):
        shift = k * span
        db.executemany("INSERT INTO inputs (seq, t, wall, input) VALUES (?, ?, ?, ?)",
                       [(seq + k * n, t + shift, wall + shift, data) for seq, t, wall, data in inputs])
        rows = []
        for seq, session, game, play in plays:
            record = json.loads(play)
            start = datetime.strptime(record["playDate"], DATE).replace(tzinfo=UTC).timestamp()
            record["playDate"] = datetime.fromtimestamp(start + shift, UTC).strftime(DATE)
            rows.append((seq + k * n, session, game, json.dumps(record, sort_keys=True)))
        db.executemany("INSERT INTO plays (seq, session, game, play) VALUES (?, ?, ?, ?)", rows)
    state = _scaled_checkpoint(json.loads(cp_state), pairs)
    db.execute("INSERT OR REPLACE INTO checkpoint VALUES (1, ?, ?)",
               (pairs * n, json.dumps(state, sort_keys=True)))
    db.execute("COMMIT")


def _replay_from_scratch(journal_path: Path) -> dict[str, Any]:
    """The checkpoint a replay of every input reaches (ignoring the stored one)."""
    from companion.core.table import Table
    from companion.games import ENGINES
    from companion.runtime.journal import Journal

    cfg = config()
    journal = Journal(journal_path)
    try:
        table = Table(ENGINES, lang=cfg["language"], options=cfg["games"], names=cfg["players"]["names"])
        for entry in journal.entries():
            table.handle(entry.input)
        return table.checkpoint()
    finally:
        journal.close()


def build(state: Path, games: int) -> dict[str, Any]:
    """Fill ``state`` with ``games`` finished games and one in progress;
    returns facts about the journal (sizes, rows)."""
    if games % 2:
        raise ValueError("games come in pairs (Seven Knights, One Night)")
    pairs = games // 2
    _play(state, flows.seven_knights() + flows.one_night())
    path = state / "journal.sqlite"
    check = state.parent / (state.name + "-check")
    check.mkdir()
    _play(check, flows.seven_knights() + flows.one_night())
    db = sqlite3.connect(path, isolation_level=None)
    try:
        base_inputs = db.execute("SELECT count(*) FROM inputs").fetchone()[0]
        _replicate(db, pairs)
    finally:
        db.close()
    db = sqlite3.connect(check / "journal.sqlite", isolation_level=None)
    try:
        _replicate(db, 3)
        stored = json.loads(db.execute("SELECT state FROM checkpoint").fetchone()[0])
    finally:
        db.close()
    if _replay_from_scratch(check / "journal.sqlite") != stored:
        raise RuntimeError("copied games do not replay to the copied checkpoint: the flows now "
                           "depend on the game number; build the journal game by game instead")
    size = path.stat().st_size
    _play(state, in_progress())
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT count(*) FROM inputs").fetchone()[0]
        played = db.execute("SELECT count(*) FROM plays").fetchone()[0]
    finally:
        db.close()
    if played != games:
        raise RuntimeError(f"{played} plays in the journal, not {games}")
    return {"bytes_per_game": size / games, "inputs": rows, "inputs_per_game": base_inputs / 2,
            "plays": played, "bytes": path.stat().st_size}


# What a start does to a journal before READY=1, each timed where the daemon calls it.
PARTS = (("quick_check", "companion.runtime.journal_guard", "diagnose"),  # SQLite's quick_check of the file
         ("backup_crc", "companion.runtime.journal_guard", "newest_intact_backup"),  # each backup's CRC-32 read
         ("quarantine", "companion.runtime.journal_guard", "quarantine_bad_rows"),  # the rows past the checkpoint
         ("replay", "companion.runtime.loop", "replay"))  # the checkpoint, then the inputs after it


def parts(state: Path, runs: int = 3) -> dict[str, float]:
    """Where a start on ``state`` spends its time, in this process (imports
    done): the daemon's own build and start (``Simulation``, on a copy each
    run), each of ``PARTS`` timed by a wrapper where it is called, and
    ``rest_of_build`` (the table, the loop, the panel...).  Seconds, the
    median of ``runs``; ``in_process`` is their sum."""
    import importlib
    import shutil
    import tempfile
    import time

    from companion.app.simulate import Simulation
    from qa.bench.stats import percentile

    spent: dict[str, list[float]] = {name: [] for name, _m, _f in PARTS}
    spent["in_process"] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="bench-resume-parts-") as tmp:
            copy = Path(tmp) / "state"
            shutil.copytree(state, copy)
            took = dict.fromkeys(spent, 0.0)
            saved = []
            for name, module, func in PARTS:
                mod = importlib.import_module(module)
                real = getattr(mod, func)

                def timed(*a: Any, _real: Any = real, _name: str = name, _took: dict[str, float] = took,
                          **k: Any) -> Any:
                    t0 = time.perf_counter()
                    try:
                        return _real(*a, **k)
                    finally:
                        _took[_name] += time.perf_counter() - t0

                saved.append((mod, func, real))
                setattr(mod, func, timed)
            try:
                t0 = time.perf_counter()
                sim = Simulation(config(), copy, lambda ev: None)
                took["in_process"] = time.perf_counter() - t0
                sim.close()
            finally:
                for mod, func, real in saved:
                    setattr(mod, func, real)
            for name, s in took.items():
                spent[name].append(s)
    out = {name: round(percentile(v, 50), 4) for name, v in spent.items()}
    out["rest_of_build"] = round(out["in_process"] - sum(out[name] for name, _m, _f in PARTS), 4)
    return out


if __name__ == "__main__":
    import sys
    import tempfile
    import time

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        facts = build(Path(tmp) / "state", int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
        print(facts, time.monotonic() - t0)
        print(parts(Path(tmp) / "state"))
