"""The stick campaign: the journal's mirror on a USB stick as sticks really
go, each kind a few times over random Seven Knights scripts, in process on
the simulation (virtual time; the stick is a folder, or a small tmpfs for
a full one).

- ``foreign``: tonight's healthy journal started with a stick holding
  another table's longer mirror.
- ``shared``: two tables taking turns on one stick, each started again.
- ``killed``: the mirror holds one input past the journal (a kill between a
  tap's mirror line and its COMMIT: never acknowledged).
- ``torn``: the mirror's last line torn by a power cut (or its newline lost).
- ``full``: the stick fills up mid-game, is emptied, the table started again.
- ``hung``: the stick stops answering (its fsync never returns).
- ``unplugged``: the stick pulled out mid-game, plugged in again later.

Counted: tonight's inputs replaced by another table's, inputs never
acknowledged brought back, good mirror lines lost, taps that never got
their feedback (and the longest wait), whether an unplugged stick was
noticed before the next start, the lines said.  Runs on an older release
too (what it writes and reads is the mirror's own line format), which is
how the "before" figures were taken.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import subprocess
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.runtime import clock, mirror
from companion.runtime.journal import Journal
from qa.reliability.inproc import Runner, campaign_overrides, load_config
from qa.reliability.scripts import Step, generate

KINDS = ("foreign", "shared", "killed", "torn", "full", "hung", "unplugged")
HUNG_GIVE_UP_S = 20.0  # a tap still waiting after this long on a hung stick counts as never answered


@dataclass
class StickResult:
    seed: int
    kind: str
    inputs: int = 0
    replaced: int = 0  # the table's own inputs changed by a start
    resurrected: int = 0  # inputs never acknowledged, in the journal after a start
    gaps: int = 0  # the journal's inputs missing from its mirror at the end
    unanswered: int = 0  # taps with no feedback (a hung stick)
    longest_s: float = 0.0  # the longest a tap waited
    noticed: bool | None = None  # an unplugged stick noticed before the next start
    said: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (f"{self.inputs:>3} inputs: {self.replaced} replaced, {self.resurrected} brought back, "
                f"{self.gaps} missing from the stick, {self.unanswered} taps unanswered"
                + ("" if self.noticed is None else f", {'noticed' if self.noticed else 'not noticed'} that evening"))

    @property
    def ok(self) -> bool:
        return not (self.problems or damaged(self) or self.replaced or self.resurrected or self.gaps or self.unanswered
                    or self.noticed is False)


def cfg(folder: Path | None) -> dict[str, Any]:
    if folder is None:
        return load_config(campaign_overrides())
    folder.mkdir(parents=True, exist_ok=True)
    return load_config({**campaign_overrides(), "journal": {"mirror": str(folder)}})


def steps(seed: int) -> list[Step]:
    return generate(seed, games=["seven-knights"], wrong=0).steps


@contextlib.contextmanager
def another_evening() -> Iterator[None]:
    """On virtual time every table takes its first input at the same instant, which two real ones never do."""
    saved = clock.VIRTUAL_EPOCH
    clock.VIRTUAL_EPOCH = saved + 86400.0
    try:
        yield
    finally:
        clock.VIRTUAL_EPOCH = saved


def play(state: Path, config: dict[str, Any], todo: list[Step], events: list[dict[str, Any]]) -> None:
    r = Runner(state, config)
    try:
        for step in todo:
            r.run(step)
    finally:
        events.extend(r.events)
        r.close()


def inputs(state: Path) -> list[tuple[int, str]]:
    j = Journal(state / "journal.sqlite", readonly=True)
    try:
        return [tuple(row) for row in j.db.execute("SELECT seq, input FROM inputs ORDER BY seq")]  # type: ignore[misc]
    finally:
        j.close()


def changed(before: list[tuple[int, str]], after: list[tuple[int, str]]) -> int:
    now = dict(after)
    return sum(1 for seq, text in before if now.get(seq) != text)


def gaps(state: Path, folder: Path) -> int:
    held = {(r["seq"], r["input"]) for p in folder.glob("journal-*.jsonl") for r in mirror.records(p)}
    return sum(1 for row in inputs(state) if row not in held)


def last_line(folder: Path) -> tuple[Path, dict[str, Any]]:
    (found,) = folder.glob("journal-*.jsonl")
    record = mirror.parse(found.read_bytes().splitlines()[-1])
    assert record is not None
    return found, record


# ------------------------------------------------------------------ the kinds
def foreign(r: StickResult, tmp: Path, rng: random.Random, ev: list[dict[str, Any]]) -> None:
    stick, tonight = tmp / "stick", tmp / "tonight"
    play(tmp / "other", cfg(stick), steps(r.seed + 1)[:rng.randint(50, 90)], [])
    with another_evening():
        play(tonight, cfg(None), steps(r.seed)[:rng.randint(15, 40)], [])
    before = inputs(tonight)
    play(tonight, cfg(stick), [], ev)
    r.inputs, r.replaced = len(before), changed(before, inputs(tonight))


def shared(r: StickResult, tmp: Path, rng: random.Random, ev: list[dict[str, Any]]) -> None:
    stick, todo = tmp / "stick", {"a": steps(r.seed), "b": steps(r.seed + 1)}
    at = {"a": 0, "b": 0}
    for turn in range(5):
        for t in "ab":
            with another_evening() if t == "b" else contextlib.nullcontext():
                before = inputs(tmp / t) if turn else []
                n = rng.randint(3, 8)
                play(tmp / t, cfg(stick if turn else None), todo[t][at[t]:at[t] + n], ev)
                at[t] += n
            r.replaced += changed(before, inputs(tmp / t))
    r.inputs = len(inputs(tmp / "a")) + len(inputs(tmp / "b"))


def killed(r: StickResult, tmp: Path, rng: random.Random, ev: list[dict[str, Any]]) -> None:
    stick, state = tmp / "stick", tmp / "state"
    play(state, cfg(stick), steps(r.seed)[:rng.randint(8, 40)], [])
    before = inputs(state)
    found, last = last_line(stick)
    with open(found, "ab") as f:  # stage() wrote it; the COMMIT never came
        f.write(mirror.line({**last, "seq": last["seq"] + 1, "t": last["t"] + 1, "wall": last["wall"] + 1}))
    play(state, cfg(stick), [], ev)
    r.inputs = len(before)
    r.replaced, r.resurrected = changed(before, inputs(state)), len(inputs(state)) - len(before)


def torn(r: StickResult, tmp: Path, rng: random.Random, ev: list[dict[str, Any]]) -> None:
    stick, state = tmp / "stick", tmp / "state"
    todo = steps(r.seed)
    n = rng.randint(8, 40)
    play(state, cfg(stick), todo[:n], [])
    found, last = last_line(stick)
    data = found.read_bytes()
    if rng.random() < 0.25:
        found.write_bytes(data[:-1])  # the last line's newline lost
    else:
        more = mirror.line({**last, "seq": last["seq"] + 1})
        found.write_bytes(data + more[:rng.randint(1, len(more) - 1)])
    play(state, cfg(stick), todo[n:n + 6], ev)
    r.inputs, r.gaps = len(inputs(state)), gaps(state, stick)


def full(r: StickResult, tmp: Path, rng: random.Random, ev: list[dict[str, Any]]) -> None:
    stick, state = tmp / "stick", tmp / "state"
    stick.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(stick)],
                      capture_output=True, check=False).returncode != 0:
        r.problems.append("skipped: cannot mount a small tmpfs here (needs root)")
        return
    try:
        folder = stick / "companion"
        todo = steps(r.seed)
        play(state, cfg(folder), todo[:4], [])
        junk = stick / "holiday-photos.bin"
        with open(junk, "wb", buffering=0) as f:  # the stick filled by something else: what is left is the mirror file's last page
            with contextlib.suppress(OSError):
                while f.write(b"\0" * 4096):
                    pass
        play(state, cfg(folder), todo[4:rng.randint(40, 60)], ev)
        junk.unlink()  # emptied
        play(state, cfg(folder), todo[60:66], ev)
        r.inputs, r.gaps = len(inputs(state)), gaps(state, folder)
    finally:
        subprocess.run(["umount", "-l", str(stick)], capture_output=True, check=False)


def hung(r: StickResult, tmp: Path, rng: random.Random, ev: list[dict[str, Any]]) -> None:
    release = threading.Event()
    runner = Runner(tmp / "state", cfg(tmp / "stick"))
    todo = steps(r.seed)
    n = rng.randint(4, 20)
    waits: list[float] = []
    answered: list[Any] = []

    def go_on() -> None:
        for step in todo[n:n + 8]:
            t0 = time.monotonic()
            answered.append(runner.run(step)[0])
            waits.append(time.monotonic() - t0)

    try:
        for step in todo[:n]:
            runner.run(step)
        runner.sim.app.journal.mirror.sync = lambda fd: release.wait(600)
        playing = threading.Thread(target=go_on, daemon=True)
        playing.start()
        playing.join(HUNG_GIVE_UP_S)
        r.unanswered = 8 - len(answered)
        r.longest_s = HUNG_GIVE_UP_S if playing.is_alive() else max(waits, default=0.0)
    finally:
        release.set()
        playing.join(60)
        ev.extend(runner.events)
        runner.close()
    r.inputs = len(inputs(tmp / "state"))


def unplugged(r: StickResult, tmp: Path, rng: random.Random, ev: list[dict[str, Any]]) -> None:
    stick, state = tmp / "stick" / "companion", tmp / "state"
    runner = Runner(state, cfg(stick))
    todo = steps(r.seed)
    n = rng.randint(5, 25)
    try:
        for step in todo[:n]:
            runner.run(step)
        kept = tmp / "what-the-stick-kept"
        shutil.copytree(stick, kept)
        shutil.rmtree(stick.parent)
        for step in todo[n:n + 4]:
            runner.run(step)
        r.noticed = any(e["event"] == "say" and e["key"] == "journal.mirror_lost" for e in runner.events)
        shutil.copytree(kept, stick)
        for step in todo[n + 4:n + 10]:
            runner.run(step)
    finally:
        ev.extend(runner.events)
        runner.close()
    r.inputs, r.gaps = len(inputs(state)), gaps(state, stick)  # at the evening's end, before any start


RUNS: dict[str, Callable[[StickResult, Path, random.Random, list[dict[str, Any]]], None]] = {
    "foreign": foreign, "shared": shared, "killed": killed, "torn": torn, "full": full, "hung": hung,
    "unplugged": unplugged}


def stick_run(kind: str, seed: int) -> StickResult:
    r = StickResult(seed, kind)
    events: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix=f"companion-stick-{kind}-") as tmp:
        try:
            RUNS[kind](r, Path(tmp), random.Random(seed), events)
        except Exception:  # noqa: BLE001 - a traceback is a finding, not the campaign's end
            r.problems.append(traceback.format_exc(limit=3).strip().splitlines()[-1])
    for e in events:
        if e["event"] == "say" and e["key"].startswith("journal."):
            r.said[e["key"]] = r.said.get(e["key"], 0) + 1
    return r


def campaign(n: int, seed: int, progress: Callable[[StickResult], None] = lambda r: None,
             kinds: tuple[str, ...] = KINDS) -> tuple[list[StickResult], float]:
    """``n`` runs of each kind, seeds ``seed``, ``seed + 1``, …"""
    t0 = time.monotonic()
    results = []
    for kind in kinds:
        for i in range(n):
            results.append(stick_run(kind, seed + i))
            progress(results[-1])
    return results, time.monotonic() - t0


def damaged(r: StickResult) -> bool:
    """Every journal in these runs is healthy: a recovery at any start is one taken for damaged."""
    return bool(r.said.get("journal.recovered") or r.said.get("journal.started_fresh"))


def summary(results: list[StickResult], seconds: float) -> list[tuple[str, str]]:
    def of(kind: str) -> list[StickResult]:
        return [r for r in results if r.kind == kind]

    said: dict[str, int] = {}
    for r in results:
        for k, v in r.said.items():
            said[k] = said.get(k, 0) + v
    hung_runs = of("hung")
    longest = max((r.longest_s for r in hung_runs), default=0.0)
    return [
        ("runs", str(len(results))),
        ("foreign: tonight's inputs replaced", f"{sum(r.replaced for r in of('foreign'))} of "
                                               f"{sum(r.inputs for r in of('foreign'))}"),
        ("shared: inputs replaced at a start", f"{sum(r.replaced for r in of('shared'))} of "
                                               f"{sum(r.inputs for r in of('shared'))}"),
        ("healthy journals taken for damaged", f"{sum(1 for r in results if damaged(r))} of {len(results)}"),
        ("killed: inputs never acknowledged back", f"{sum(r.resurrected for r in of('killed'))} of "
                                                   f"{len(of('killed'))}"),
        ("torn: good lines lost", str(sum(r.gaps for r in of("torn")))),
        ("full: good lines lost", str(sum(r.gaps for r in of("full")))),
        ("hung: taps never answered", f"{sum(r.unanswered for r in hung_runs)} of {8 * len(hung_runs)}"),
        ("hung: longest tap", f"{longest:.2f} s" if longest < HUNG_GIVE_UP_S else f"none answered in {longest:.0f} s"),
        ("unplugged: noticed that evening", f"{sum(1 for r in of('unplugged') if r.noticed)} of "
                                            f"{len(of('unplugged'))}"),
        ("unplugged: inputs not on the stick", str(sum(r.gaps for r in of("unplugged")))),
        ("said", ", ".join(f"{k.removeprefix('journal.')} {v}" for k, v in sorted(said.items())) or "nothing"),
        ("other problems", str(sum(len(r.problems) for r in results))),
        ("time", f"{seconds:.0f} s"),
    ]
