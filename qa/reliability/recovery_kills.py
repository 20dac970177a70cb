"""The kill campaign during recovery: a damaged journal (one damage of the
corruption campaign, ``corruption.damaged_state``) is recovered by a start
that is killed just before its k-th file operation (a rename, a replace, an
unlink, a link, an fsync, a truncate: each step that changes what the next
start finds), for every k until the start gets through.  After each kill the
table is started again, the production way (``open_journal``), and checked:

- the start does not raise;
- it holds exactly the inputs the uninterrupted recovery holds;
- it says it recovered (a ``journal.recovered`` or ``journal.started_fresh``
  line: the killed start never told the table);
- the damaged files are kept (a ``.damaged-`` file, when the uninterrupted
  recovery kept one);
- the start after it is quiet and changes nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FILE_STEPS = ("rename", "replace", "unlink", "link", "fsync", "truncate")
MAX_STEPS = 120  # a recovery takes a few dozen; more is a runaway, reported as such
SAID = ("journal.recovered", "journal.started_fresh")


def killed_at(state: Path, k: int, start: Callable[[Path], Any]) -> bool:
    """``start(state)`` in a child killed (``os._exit``: nothing flushed,
    nothing closed) just before its ``k``-th file operation; True if it
    finished before reaching it.  Raises if the start itself raised."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        count = [0]

        def counted(real: Any) -> Any:
            def step(*a: Any, **kw: Any) -> Any:
                count[0] += 1
                if count[0] == k:
                    os._exit(9)
                return real(*a, **kw)
            return step

        for name in FILE_STEPS:
            setattr(os, name, counted(getattr(os, name)))
        tempfile.tempdir = str(state.parent)  # a kill leaves the salvage's copies here, not in /tmp
        try:
            start(state)
        except BaseException:
            traceback.print_exc()
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 9):
        raise RuntimeError(f"the start raised (exit {code}) with a kill at file step {k}")
    return code == 0


def start(state: Path) -> tuple[list[tuple[Any, ...]], list[str], list[str]]:
    """One start the production way: (inputs, what was said, the log's lines)."""
    from companion.runtime.journal_guard import open_journal

    journal, notices = open_journal(state / "journal.sqlite")
    try:
        return (journal.db.execute("SELECT seq, t, wall, input FROM inputs ORDER BY seq").fetchall(),
                [n.key for n in notices if n.key], [n.message for n in notices])
    finally:
        journal.close()


def kept(state: Path) -> bool:
    return any(".damaged-" in p.name for p in state.iterdir())


@dataclass
class KillResult:
    seed: int
    target: str = "?"
    kind: str = "?"
    recovered: bool = False  # the damage made a recovery (else nothing to kill)
    kills: int = 0  # kills that landed inside the start
    bad_kills: int = 0  # of them, kills after which a check failed
    inputs: int = 0  # what the uninterrupted recovery holds
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def kill_run(seed: int, workdir: Path | None = None) -> KillResult:
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="companion-recovery-kills-") as tmp:
            return kill_run(seed, Path(tmp))
    from qa.reliability.corruption import damaged_state

    damage, state = damaged_state(seed, workdir / "damaged")
    res = KillResult(seed, damage.target, damage.kind)
    whole = workdir / "whole"
    shutil.copytree(state, whole)
    want, keys, _ = start(whole)
    res.inputs = len(want)
    res.recovered = any(k in SAID for k in keys)
    if not res.recovered:
        return res
    keeps = kept(whole)
    for k in range(1, MAX_STEPS + 1):
        run = workdir / f"kill-{k}"
        shutil.copytree(state, run)
        try:
            if killed_at(run, k, start):
                break
            res.kills += 1
            got, keys, messages = start(run)
        except Exception as e:  # noqa: BLE001 - the finding itself
            res.problems.append(f"kill at step {k}: the next start raised {type(e).__name__}: {e}")
            res.bad_kills += 1
            break
        before = len(res.problems)
        if got != want:
            res.problems.append(f"kill at step {k}: {len(got)} inputs, the uninterrupted recovery {len(want)}")
        if not any(key in SAID for key in keys):
            res.problems.append(f"kill at step {k}: the next start did not say it recovered ({messages[:1]})")
        if keeps and not kept(run):
            res.problems.append(f"kill at step {k}: the damaged files are gone")
        again, keys, messages = start(run)
        if again != got or keys or messages:
            res.problems.append(f"kill at step {k}: the start after it was not quiet ({messages[:1]})")
        shutil.rmtree(run)
        res.bad_kills += len(res.problems) > before
    else:
        res.problems.append(f"the start did not finish within {MAX_STEPS} file steps")
    return res


def campaign(n: int, seed: int, progress: Any = None) -> tuple[list[KillResult], float]:
    t0 = time.monotonic()
    results = []
    for i in range(n):
        try:
            r = kill_run(seed + i)
        except Exception as e:  # noqa: BLE001 - the harness must report, not die
            r = KillResult(seed + i, problems=[f"harness error: {type(e).__name__}: {e}"])
        results.append(r)
        if progress:
            progress(r)
    return results, time.monotonic() - t0


def summary(results: list[KillResult], seconds: float) -> list[tuple[str, str]]:
    made = [r for r in results if r.recovered]
    return [
        ("damages", str(len(results))),
        ("  making a recovery", str(len(made))),
        ("kills during recovery", str(sum(r.kills for r in made))),
        ("  a check failed after", str(sum(r.bad_kills for r in made))),
        ("inputs held (uninterrupted)", str(sum(r.inputs for r in made))),
        ("  next start differs", str(sum(sum("inputs, the uninterrupted" in p for p in r.problems) for r in made))),
        ("  next start silent", str(sum(sum("did not say" in p for p in r.problems) for r in made))),
        ("  damaged files gone", str(sum(sum("are gone" in p for p in r.problems) for r in made))),
        ("failed runs", str(sum(not r.ok for r in results))),
        ("time", f"{seconds:.0f} s"),
    ]
