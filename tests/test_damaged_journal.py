"""A failing microSD card overwrites whole pages of the journal: what the next
start keeps.  Measured before: a Seven Knights game in round 2 with round 1
scored, four 4 KiB pages of ``journal.sqlite`` overwritten, and the next start
"recovered 0 inputs" and began a new table — round 1's scores gone.

Goal: without a mirror, at most the round in progress is lost; with one, nothing."""

from __future__ import annotations

import os
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
from qa.reliability.inproc import Runner, campaign_overrides, load_config  # noqa: E402
from qa.reliability.scripts import generate, tap  # noqa: E402

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


# ------------------------------------------------------------------ the mirror
def with_mirror(folder: Path) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    return load_config({**campaign_overrides(), "journal": {"mirror": str(folder)}})


def journal_rows(state: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Everything the table is rebuilt from, and everything it publishes."""
    db = sqlite3.connect(state / "journal.sqlite")
    try:
        return {"inputs": db.execute("SELECT * FROM inputs ORDER BY seq").fetchall(),
                "plays": db.execute("SELECT * FROM plays ORDER BY id").fetchall(),
                "checkpoint": db.execute("SELECT * FROM checkpoint").fetchall(),
                "outbox": db.execute("SELECT * FROM outbox ORDER BY seq, k").fetchall(),
                "epoch": db.execute("SELECT value FROM meta WHERE key='epoch'").fetchall()}
    finally:
        db.close()


def destroy(state: Path) -> None:
    """The card is gone: the journal, its WAL and every backup."""
    for p in state.iterdir():
        if p.name.startswith("journal.sqlite") and p.name != "journal.sqlite.lock":
            p.unlink()
    shutil.rmtree(state / "backups", ignore_errors=True)


def test_a_mirror_alone_rebuilds_a_destroyed_journal_in_the_same_state(tmp_path: Path) -> None:
    """A whole game and round 1 of the next, with MQTT's outbox rows: the
    journal and every backup destroyed, the mirror brings back the same
    rows — the same scores, the same step, the same ids to publish."""
    state, cfg = tmp_path / "state", with_mirror(tmp_path / "stick" / "companion")
    cfg["mqtt"]["broker"] = "127.0.0.1:9"  # only for the outbox rows: nothing listens, nothing waits for it
    r = Runner(state, cfg)
    try:
        for step in generate(41, games=["seven-knights"], wrong=0).steps:
            r.run(step)
    finally:
        r.close()
    before = in_round_two(state, cfg)
    rows = journal_rows(state)
    assert rows["plays"] and rows["outbox"] and rows["checkpoint"]
    destroy(state)
    play, events = restarted(state, cfg)
    assert journal_rows(state) == rows
    assert play == before
    assert any("mirror" in e["message"] for e in events if e["event"] == "error")


@pytest.mark.parametrize("seed", range(4))
def test_with_a_mirror_four_overwritten_pages_lose_nothing(tmp_path: Path, seed: int) -> None:
    """The measurement again, with a mirror: not even the round in play is lost."""
    state = tmp_path / "state"
    cfg = with_mirror(tmp_path / "stick")
    before = in_round_two(state, cfg)
    held = inputs_held(state)
    journal = state / "journal.sqlite"
    overwrite(journal, four_pages(journal, seed), seed)
    play, _ = restarted(state, cfg)
    assert inputs_held(state) == held
    assert play == before


class NightNoted(list):  # type: ignore[type-arg]
    """The event log, each event marked with whether eyes were closed then."""

    table: Any = None

    def append(self, event: Any) -> None:
        super().append({**event, "_night": bool(self.table is not None and self.table.eyes_closed)})


class NightRunner(Runner):
    def __init__(self, state: Path, cfg: dict[str, Any]) -> None:
        from companion.app.simulate import Simulation

        self.state, self.events = state, NightNoted()
        self.sim = Simulation(cfg, state, self.events.append)
        self.events.table = self.sim.app.loop.table


def test_a_mirror_unplugged_at_night_is_said_once_after_the_night_and_the_table_goes_on(tmp_path: Path) -> None:
    state, folder = tmp_path / "state", tmp_path / "stick"
    r = NightRunner(state, with_mirror(folder))
    failed_at_night: list[bool] = []

    def unplugged(fd: int) -> None:
        failed_at_night.append(r.sim.app.loop.table.eyes_closed)
        raise OSError(5, "Input/output error")

    try:
        for step in generate(7, games=["one-night"], wrong=0).steps:
            r.run(step)
            if r.sim.app.loop.table.eyes_closed and not failed_at_night:
                r.sim.app.journal.mirror.sync = unplugged  # the stick is pulled out mid-night
        assert failed_at_night and failed_at_night[0], "the mirror did not fail by night"
        said = [e for e in r.events if e["event"] == "say" and e["key"] == "journal.mirror_lost"]
        assert len(said) == 1 and not said[0]["_night"]
        assert len([e for e in r.events if e["event"] == "error" and "mirror" in e["message"]]) == 1
        assert any(e["event"] == "onw_result" for e in r.events)  # the table went on to the end
        n = len(inputs_held_open(r))
    finally:
        r.close()
    assert n == len(inputs_held(state))


def inputs_held_open(r: Runner) -> list[tuple[Any, ...]]:
    return r.sim.app.journal.db.execute("SELECT seq FROM inputs").fetchall()


def test_a_mirror_missing_at_start_is_said_once_and_the_table_goes_on(tmp_path: Path) -> None:
    state = tmp_path / "state"
    cfg = with_mirror(tmp_path / "stick")
    cfg["journal"]["mirror"] = str(tmp_path / "stick" / "not-mounted")
    r = Runner(state, cfg)
    try:
        for step in generate(40, games=["seven-knights"], wrong=0).steps[:8]:
            resp, _ = r.run(step)
            assert resp is None or resp.get("reason") != "could not save; tap again"
        said = [e for e in r.events if e["event"] == "say" and e["key"] == "journal.mirror_lost"]
        errs = [e["message"] for e in r.events if e["event"] == "error" and "mirror" in e["message"]]
        assert len(said) == 1 and len(errs) == 1 and "not-mounted" in errs[0]
    finally:
        r.close()
    assert not (tmp_path / "stick" / "not-mounted").exists()  # never made: it would be on the SD card


def test_the_mirror_setting_is_checked_with_its_file_and_line(tmp_path: Path) -> None:
    from companion.app import config

    bad = tmp_path / "companion.yaml"
    bad.write_text("language: en\njournal:\n  mirror: usb-stick\n")
    with pytest.raises(config.ConfigError, match=rf"^{bad}:3: journal.mirror .*absolute path"):
        config.load([bad])
    good = tmp_path / "good.yaml"
    good.write_text("journal:\n  mirror: /media/usb/companion\n")
    assert config.load([good])["journal"]["mirror"] == "/media/usb/companion"


def test_doctor_reports_the_mirror(tmp_path: Path) -> None:
    from companion.app import doctor

    state = tmp_path / "state"
    env = doctor.Env()
    assert doctor.check_mirror({"journal": {"mirror": None}}, state, env).status == doctor.SKIP
    gone = doctor.check_mirror({"journal": {"mirror": str(tmp_path / "stick")}}, state, env)
    assert gone.status == doctor.FAIL and "is not there" in gone.detail and "mkdir" in gone.fix
    (tmp_path / "stick").mkdir()
    same = doctor.check_mirror({"journal": {"mirror": str(tmp_path / "stick")}}, state, env)
    assert same.status == doctor.FAIL and "same device" in same.detail
    import tempfile

    # a device other than tmp_path's: memory where the tests' folders are on the disk, and the reverse
    devices = [d for d in ("/dev/shm", "/var/tmp", tempfile.gettempdir())
               if os.path.isdir(d) and os.stat(d).st_dev != os.stat(tmp_path).st_dev]
    if not devices:
        pytest.skip("no second device here")
    with tempfile.TemporaryDirectory(dir=devices[0]) as other:
        in_round_two(state, with_mirror(Path(other)))
        ok = doctor.check_mirror({"journal": {"mirror": other}}, state, env)
        assert ok.status == doctor.OK and f"holds inputs up to {len(inputs_held(state))}" in ok.detail, ok


@pytest.mark.parametrize("how", ["commit-fails", "rolled-back-unseen"])
def test_an_input_the_journal_did_not_take_is_not_left_in_the_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   how: str) -> None:
    """The mirror's line is written inside the input's transaction (its sync
    beside the COMMIT's): when the COMMIT fails the line is taken back, so a
    refused input never comes back from the mirror at the next start."""
    from companion.runtime import journal as journal_mod
    from companion.runtime import mirror

    failing = {"n": 0}

    class Tx(journal_mod._Tx):
        def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
            if exc_type is None and failing["n"]:
                failing["n"] -= 1
                if how == "commit-fails":
                    self._rollback()  # what _Tx does when COMMIT raises
                else:
                    self.db.execute("ROLLBACK")  # a rollback the mirror is not told of
                raise journal_mod.JournalError("journal commit failed: disk I/O error (injected)")
            super().__exit__(exc_type, exc, tb)

    monkeypatch.setattr(journal_mod, "_Tx", Tx)
    folder = tmp_path / "stick"
    r = Runner(tmp_path / "state", with_mirror(folder))
    try:
        steps = generate(40, games=["seven-knights"], wrong=0).steps
        for step in steps[:3]:
            r.run(step)
        failing["n"] = 1
        refused = r.step(tap("lang/ja"))  # an input the script does not tap again: its seq goes to the next one
        assert refused is not None and refused.get("reason") == "could not save; tap again", refused
        for step in steps[3:8]:
            r.run(step)
        held = [row[0] for row in r.sim.app.journal.db.execute("SELECT input FROM inputs ORDER BY seq")]
        lines = [rec["input"] for rec in mirror.records(next(folder.glob("journal-*.jsonl")))]
        assert lines == held
    finally:
        r.close()


def test_a_mirror_set_up_later_is_brought_up_to_the_whole_journal_at_start(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A stick added to a table with a history: the next start writes it all
    there (a few inputs at a time), then every new input."""
    from companion.runtime import mirror

    monkeypatch.setattr(mirror, "CATCH_UP", 7)
    state, folder = tmp_path / "state", tmp_path / "stick"
    r = Runner(state)
    try:
        for step in generate(41, games=["seven-knights"], wrong=0).steps:
            r.run(step)
    finally:
        r.close()
    in_round_two(state, with_mirror(folder))
    (found,) = folder.glob("journal-*.jsonl")
    assert [(rec["seq"], rec["input"]) for rec in mirror.records(found)] == [(s, i) for s, _t, _w, i in inputs_held(state)]
