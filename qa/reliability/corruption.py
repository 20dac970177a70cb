"""The corruption campaign: random damage to the journal, its WAL and its
backups, then the table started the production way.

Each run plays part of a random script (``qa.reliability.scripts``) in a forked
child that then exits as abruptly as a SIGKILL, so the WAL and its index are
left as a crash leaves them, and the backups made after each finished game
are there.  A pristine copy is kept as the oracle.  One damage is then done
to one file — bytes flipped, whole 4 KiB pages overwritten (a failing microSD
card), a truncation, a deletion, or the wrong type (a directory, text, an
empty file, random bytes) — and the table is started twice.  Checked:

- no start raises (no traceback) and the second start succeeds too (no crash loop);
- the damage is reported at the first start (an ``error`` event, in plain
  words) and not again at the second (reported once);
- nothing is invented: every input in the journal after recovery is the
  oracle's input of that number;
- everything a surviving backup held is in the recovered journal, and any
  input lost beyond it was reported;
- a damage that was not reported changed nothing (the journal is the oracle's).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import sqlite3
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qa.reliability.powercut import fork_play

TARGETS = ("journal", "wal", "newest backup", "older backup")
KINDS = ("flip bytes", "truncate", "delete", "directory", "text", "empty", "random bytes", "pages", "cut tail")
# Damages of one kind of file: a WAL's 32-byte header; an SQLite file's page-size field.
KINDS_OF = {"wal": ("wal header",), "journal": ("page size",), "newest backup": ("page size",),
            "older backup": ("page size",)}
PAGE = 4096  # what a failing microSD card loses: whole pages (1 to 4 of them), overwritten
LOST = re.compile(r"journal: (\d+) inputs between 1 and \d+ are missing")


@dataclass
class DamageResult:
    seed: int
    target: str
    kind: str
    inputs: int = 0  # in the journal before the damage
    recovered: int = 0  # oracle inputs in the journal after the first start
    backup_held: int = 0  # inputs the newest surviving backup held
    reported: int = 0  # error events at the first start
    lost_said: int = 0  # inputs the first start said could not be recovered
    again: int = 0  # error events at the second start
    changed: bool = False  # the journal differs from the oracle after the first start
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _rows(path: Path) -> dict[int, str]:
    """seq → input of the table's inputs (housekeeping left out: a start may add its own)."""
    if not path.is_file():
        return {}
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {s: i for s, i in con.execute("SELECT seq, input FROM inputs") if not i.startswith('{"table"')}
    except sqlite3.Error:
        return {}
    finally:
        con.close()


def _seqs(path: Path) -> set[int]:
    """Every input's number, housekeeping too (what a recovery counts)."""
    if not path.is_file():
        return set()
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {s for (s,) in con.execute("SELECT seq FROM inputs")}
    except sqlite3.Error:
        return set()
    finally:
        con.close()


def _damage(path: Path, kind: str, rng: random.Random) -> None:
    if kind == "flip bytes":
        data = bytearray(path.read_bytes())
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= rng.randint(1, 255)
        path.write_bytes(bytes(data))
    elif kind == "truncate":
        os.truncate(path, rng.randrange(path.stat().st_size))
    elif kind == "delete":
        path.unlink()
    elif kind == "directory":
        path.unlink()
        path.mkdir()
    elif kind == "text":
        path.write_text("journal, see the other notebook\n" * rng.randint(1, 300))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "cut tail":  # whole pages (or WAL frames) lost from the end
        os.truncate(path, max(0, path.stat().st_size - rng.randint(1, 4) * PAGE))
    elif kind == "wal header":
        data = bytearray(path.read_bytes())
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(min(32, len(data)))] ^= rng.randint(1, 255)
        path.write_bytes(bytes(data))
    elif kind == "page size":
        with open(path, "r+b") as f:
            f.seek(16)
            f.write(rng.choice([512, 1024, 2048, 8192, 16384, 32768]).to_bytes(2, "big"))
    elif kind == "pages":
        pages = max(1, path.stat().st_size // PAGE)
        with open(path, "r+b") as f:
            for page in rng.sample(range(pages), min(pages, rng.randint(1, 4))):
                f.seek(page * PAGE)
                f.write(rng.randbytes(PAGE))
    else:
        path.write_bytes(os.urandom(max(1, path.stat().st_size)))


def damaged_state(seed: int, workdir: Path) -> tuple[DamageResult, Path]:
    """Part of a random script played into ``workdir/state`` by a child that
    exits as a kill leaves it, copied to ``workdir/oracle``, then one damage
    done: (its result so far, the state directory)."""
    from companion.runtime.backups import backups
    from qa.reliability.scripts import generate

    rng = random.Random(seed * 104729 + 3)
    script = 1000 + seed % 97  # a few dozen scripts, cut at different steps
    steps = len(generate(script).steps)
    state, oracle = workdir / "state", workdir / "oracle"
    state.mkdir(parents=True)
    fork_play(state, script, None, 0, steps=rng.randint(steps // 3, steps))
    shutil.copytree(state, oracle)
    journal = state / "journal.sqlite"
    files = {"journal": journal, "wal": Path(f"{journal}-wal")}
    found = backups(journal)
    if found:
        files["newest backup"] = found[0]
    if len(found) > 1:
        files["older backup"] = rng.choice(found[1:])
    present = [t for t in TARGETS if t in files and files[t].is_file() and files[t].stat().st_size > 0]
    target = rng.choice(present)
    kind = rng.choice(KINDS + KINDS_OF[target])
    _damage(files[target], kind, rng)
    return DamageResult(seed, target, kind), state


def damage_run(seed: int, workdir: Path | None = None) -> DamageResult:
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="companion-corruption-") as tmp:
            return damage_run(seed, Path(tmp))
    from companion.runtime.backups import backup_problem, backups
    from qa.reliability.inproc import Runner

    res, state = damaged_state(seed, workdir)
    oracle, journal = workdir / "oracle", state / "journal.sqlite"
    want = _rows(oracle / "journal.sqlite")
    res.inputs = len(want)
    surviving = [b for b in backups(journal) if backup_problem(b) is None]
    held = _rows(surviving[0]) if surviving else {}
    res.backup_held = len(held)

    try:
        r = Runner(state)
    except Exception as e:  # noqa: BLE001 - the finding itself
        res.problems.append(f"traceback at start: {type(e).__name__}: {e}")
        return res
    res.reported = sum(e["event"] == "error" for e in r.events)
    first = [e["message"] for e in r.events if e["event"] == "error"]
    res.lost_said = sum(int(m.group(1)) for line in first if (m := LOST.match(line)))
    r.close()
    got = _rows(journal)
    try:
        r = Runner(state)
        res.again = sum(e["event"] == "error" for e in r.events)
        r.close()
    except Exception as e:  # noqa: BLE001
        res.problems.append(f"crash loop: the second start failed: {type(e).__name__}: {e}")
    if res.again:
        res.problems.append(f"reported again at the second start: {res.again} errors")
    invented = [s for s, i in got.items() if want.get(s) != i]
    if invented:
        res.problems.append(f"inputs not in the oracle: {invented[:5]}")
    res.recovered = len(set(got) & set(want))
    if res.lost_said > (really := len(_seqs(oracle / "journal.sqlite") - _seqs(journal))):
        res.problems.append(f"said {res.lost_said} inputs could not be recovered; {really} were lost")
    res.changed = got != want
    if missing_held := sorted(set(held) - set(got)):
        res.problems.append(f"lost {len(missing_held)} inputs a surviving backup held")
    if res.changed and not res.reported:
        res.problems.append(f"silent: {len(set(want) - set(got))} inputs gone and nothing said")
    if res.reported and not any(m.strip() and "Traceback" not in m for m in first):
        res.problems.append("a report without words")
    return res


def campaign(n: int, seed: int, progress: Any = None) -> tuple[list[DamageResult], float]:
    t0 = time.monotonic()
    results = []
    for i in range(n):
        try:
            r = damage_run(seed + i)
        except Exception as e:  # noqa: BLE001 - the harness must report, not die
            r = DamageResult(seed + i, "?", "?", problems=[f"harness error: {type(e).__name__}: {e}"])
        results.append(r)
        if progress:
            progress(r)
    return results, time.monotonic() - t0


def summary(results: list[DamageResult], seconds: float) -> list[tuple[str, str]]:
    by = Counter(r.target for r in results)
    return [
        ("damages", str(len(results))),
        *((f"  to the {t}", str(by[t])) for t in TARGETS if by[t]),
        ("tracebacks", str(sum(any("traceback" in p for p in r.problems) for r in results))),
        ("crash loops", str(sum(any("crash loop" in p for p in r.problems) for r in results))),
        ("reported (first start)", str(sum(r.reported > 0 for r in results))),
        ("reported again", str(sum(r.again > 0 for r in results))),
        ("harmless, nothing said", str(sum(not r.reported and not r.changed for r in results))),
        ("silent changes", str(sum(r.changed and not r.reported for r in results))),
        ("inputs before damage", str(sum(r.inputs for r in results))),
        ("inputs recovered", str(sum(r.recovered for r in results))),
        ("inputs lost (reported)", str(sum(r.inputs - r.recovered for r in results if r.reported))),
        ("  how many said", str(sum(r.lost_said for r in results))),
        ("  losing, no count said", str(sum(r.inputs > r.recovered and not r.lost_said for r in results))),
        ("backup-held inputs lost", str(sum(any("backup held" in p for p in r.problems) for r in results))),
        ("failed damages", str(sum(not r.ok for r in results))),
        ("time", f"{seconds:.0f} s"),
    ]
