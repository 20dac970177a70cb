"""Power cuts below SQLite: a crash-simulating VFS (APSW hosts it in Python).

The method.  A random table script (``qa.reliability.scripts.generate``) is
played in a forked child on the real loop, table and journal — only the
journal's connection goes through ``CrashVFS`` (APSW; the production path
stays on the stdlib ``sqlite3``).  The VFS passes every call to the real
files and remembers, per file, what was on disk at its last ``xSync``.  At
the chosen operation (one write, sync, truncate or delete, counted from the
start) the power goes: every file is put back to its content at its last
sync — every write not yet fsynced is lost — and the write in progress (or
the last unsynced one) lands *torn*: a random whole number of its 512-byte
sectors, possibly none.  The child then ``os._exit``s on the spot, so nothing
after the cut happens (no close, no checkpoint).  The events it printed
before the cut went out unbuffered on a pipe.

The parent then starts the table on that state directory the production way
(stdlib ``sqlite3``, ``open_journal``'s checks) and checks:

- the start does not fail (no exception, the table says where it is);
- every input the table acknowledged (``accepted``) before the cut is in the
  journal, in order; at most one more (a commit that was durable when the
  power went, before its ``accepted`` was printed);
- a power cut is not mistaken for damage (no "kept as" recovery notice).

Simplifications, stated: file creation and deletion count as durable at once
(SQLite fsyncs the directory where it matters; this VFS does not model
directory entries); unsynced writes are all lost rather than some kept in
any order (the worst case for "accepted"; reordered survivals could only add
data that was never acknowledged); the child uses ``locking_mode=EXCLUSIVE``,
since an APSW Python VFS file offers no shared-memory index (the WAL file it
writes is the same).
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qa.reliability.inproc import same_input

SECTOR = 512


def kept(printed: list[str], journal: list[str]) -> int:
    """How many of the acknowledged inputs, in order, the journal holds: a
    public label may name its entry by a pattern (``skb/*`` for a slipped
    tile), which the journaled identity fits."""
    common = 0
    while common < min(len(printed), len(journal)) and same_input(printed[common], journal[common]):
        common += 1
    return common


def available() -> bool:
    try:
        import apsw  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------ the VFS
def _make_vfs() -> Any:
    import apsw

    class CrashFile(apsw.VFSFile):  # type: ignore[misc]
        def __init__(self, vfs: Any, path: str | None, name: Any, flags: list[int]) -> None:
            super().__init__("", name, flags)
            self.vfs, self.path = vfs, path

        def xWrite(self, data: bytes, offset: int) -> None:  # noqa: N802 - the VFS's own names
            if self.path is not None:
                self.vfs.last_write = (self.path, offset, bytes(data))
                self.vfs.tick()
            super().xWrite(data, offset)

        def xSync(self, flags: int) -> None:  # noqa: N802
            if self.path is not None:
                self.vfs.tick()
                if self.vfs.sync_delay is not None:  # a modeled card: its sync, in place of this disk's
                    time.sleep(self.vfs.sync_delay())
                    return
            super().xSync(flags)
            if self.path is not None:
                self.vfs.synced(self.path)

        def xTruncate(self, size: int) -> None:  # noqa: N802
            if self.path is not None:
                self.vfs.tick()
            super().xTruncate(size)

    class CrashVFS(apsw.VFS):  # type: ignore[misc]
        """Counts writes/syncs/truncates/deletes; at ``cut_after`` it cuts the
        power (None: never, and what was synced need not be remembered);
        ``sync_delay()``: a modeled card — each sync takes that many seconds
        instead of going to this machine's disk (whose own stalls would blur
        the model); None: the real sync."""

        def __init__(self, cut_after: int | None, rng: random.Random, on_cut: Callable[[], None],
                     sync_delay: Callable[[], float] | None = None) -> None:
            self.vfs_name = f"crash-{os.getpid()}-{id(self)}"
            super().__init__(self.vfs_name, "")
            self.ops = 0
            self.cut_after, self.rng, self.on_cut = cut_after, rng, on_cut
            self.sync_delay = sync_delay
            self.durable: dict[str, bytes | None] = {}  # path → content at its last sync (None: absent)
            self.last_write: tuple[str, int, bytes] | None = None
            self.torn = 0  # bytes of the torn write that landed

        def xOpen(self, name: Any, flags: list[int]) -> Any:  # noqa: N802
            path = name.filename() if isinstance(name, apsw.URIFilename) else name
            if path is not None and path not in self.durable and self.cut_after is not None:
                self.durable[path] = Path(path).read_bytes() if os.path.exists(path) else None
            return CrashFile(self, path, name, flags)

        def xDelete(self, filename: str, syncdir: bool) -> None:  # noqa: N802
            self.tick()
            super().xDelete(filename, syncdir)
            self.durable[filename] = None

        def synced(self, path: str) -> None:
            if self.cut_after is not None:
                self.durable[path] = Path(path).read_bytes()
            if self.last_write is not None and self.last_write[0] == path:
                self.last_write = None

        def tick(self) -> None:
            self.ops += 1
            if self.cut_after is not None and self.ops >= self.cut_after:
                self.cut()

        def cut(self) -> None:
            for path, content in self.durable.items():
                if content is None:
                    Path(path).unlink(missing_ok=True)
                else:
                    with open(path, "wb") as f:
                        f.write(content)
            if self.last_write is not None:
                path, offset, data = self.last_write
                keep = self.rng.randrange(0, len(data) // SECTOR + 1) * SECTOR
                if keep:
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
                    try:
                        os.pwrite(fd, data[:keep], offset)
                    finally:
                        os.close(fd)
                self.torn = keep
            self.on_cut()

    return CrashVFS


class _Rows:
    def __init__(self, rows: list[tuple[Any, ...]], lastrowid: int) -> None:
        self.rows, self.lastrowid = rows, lastrowid

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows

    def __iter__(self) -> Any:
        return iter(self.rows)


class ApswConnection:
    """The part of ``sqlite3.Connection`` the journal uses, on APSW through
    the crash VFS; APSW's errors come out as ``sqlite3`` ones."""

    def __init__(self, path: Path, vfs_name: str) -> None:
        import apsw

        self.apsw = apsw
        self.con = apsw.Connection(str(path), vfs=vfs_name)
        self.con.execute("PRAGMA locking_mode=EXCLUSIVE")

    def execute(self, sql: str, params: Any = ()) -> _Rows:
        try:
            rows = list(self.con.execute(sql, params))
        except self.apsw.Error as e:
            raise sqlite3.OperationalError(str(e)) from e
        return _Rows(rows, self.con.last_insert_rowid())

    def executemany(self, sql: str, rows: Any) -> None:
        for params in rows:
            self.execute(sql, params)

    def executescript(self, sql: str) -> None:
        self.execute(sql)

    @property
    def in_transaction(self) -> bool:
        return bool(self.con.in_transaction)

    def backup(self, dest: sqlite3.Connection) -> None:
        """Into the file ``dest`` has open (the backup API across the two libraries)."""
        target = dest.execute("PRAGMA database_list").fetchone()[2]
        out = self.apsw.Connection(target)
        try:
            with out.backup("main", self.con, "main") as b:
                b.step()
        finally:
            out.close()

    def close(self) -> None:
        self.con.close()


# ------------------------------------------------------------ a slow card
SD_SYNC_MS = (7.0, 76.0)  # one fsync on the microSD cards measured: the fastest and the slowest


def sd_card_journal(seed: int = 0, sync_ms: tuple[float, float] = SD_SYNC_MS) -> type[Any]:
    """A ``Journal`` on a modeled SD card: its connection through the crash
    VFS, never cut, every sync taking a draw from ``sync_ms`` (uniform,
    seeded) in place of this disk's: what a table on a Pi waits for before
    its feedback (qa/bench/tap_feedback.py)."""
    from companion.runtime.journal import Journal

    rng = random.Random(seed)
    drawn: list[float] = []

    def sync_s() -> float:
        drawn.append(rng.uniform(*sync_ms))
        return drawn[-1] / 1000

    vfs = _make_vfs()(None, rng, lambda: None, sync_delay=sync_s)

    class SdCardJournal(Journal):
        card = vfs  # registered with SQLite for as long as it is referenced
        syncs_ms = drawn  # every sync the card made, in ms: what one sync costs, beside what a tap waits

        def _connect(self) -> Any:
            return ApswConnection(self.path, vfs.vfs_name)

    return SdCardJournal


def modeled_sync(seed: int = 0, sync_ms: tuple[float, float] = SD_SYNC_MS) -> Callable[[int], None]:
    """An fsync on a modeled card (a USB stick taken to be as slow as the
    microSD): a draw from ``sync_ms`` in place of this disk's, as the journal's
    VFS above — for the journal's mirror (runtime.mirror.Mirror.sync)."""
    rng = random.Random(seed)

    def sync(fd: int) -> None:
        time.sleep(rng.uniform(*sync_ms) / 1000)
    return sync


# ---------------------------------------------------------------- one cut
@dataclass
class CutResult:
    seed: int
    cut_after: int | None
    acknowledged: int = 0  # accepted before the cut
    lost: int = 0
    failed_start: bool = False
    false_alarm: bool = False
    torn: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.failed_start or self.false_alarm or self.problems)


def _play_in_child(state: Path, seed: int, cut_after: int | None, write: int, cut_seed: int,
                   unsafe: bool = False, steps: int | None = None,
                   overrides: dict[str, Any] | None = None) -> None:
    """In the forked child: the script through the crash VFS until the power
    goes (``cut_after``), or — ``steps`` given — its first ``steps`` steps on
    the production journal, then an exit as abrupt as a SIGKILL."""
    import companion.app.start
    from companion.runtime.journal import Journal
    from qa.reliability.inproc import Runner, load_config
    from qa.reliability.scripts import generate

    vfs: Any = None

    def emit(obj: dict[str, Any]) -> None:
        os.write(write, (json.dumps(obj) + "\n").encode())

    def power_off() -> None:
        emit({"event": "_cut", "ops": vfs.ops, "torn": vfs.torn})
        os._exit(0)

    vfs = _make_vfs()(cut_after, random.Random(cut_seed), power_off)

    class VfsJournal(Journal):
        def __init__(self, path: Path, **kw: Any) -> None:
            super().__init__(path, **kw)
            if unsafe:  # the harness's self-test: commits that are not fsynced must be caught losing inputs
                self.db.execute("PRAGMA synchronous=OFF")

        def _connect(self) -> Any:
            return ApswConnection(self.path, vfs.vfs_name)

    if steps is None:
        companion.app.start.Journal = VfsJournal  # type: ignore[misc]  # this child only; it never returns

    class Log(list[dict[str, Any]]):
        def append(self, ev: dict[str, Any]) -> None:
            super().append(ev)
            if ev["event"] in ("accepted", "error"):
                emit(ev)

    runner = Runner(state, load_config(overrides) if overrides is not None else None)
    runner.events = Log()
    runner.sim.app.sinks["log"].log = runner.events.append
    for step in generate(seed).steps[:steps]:
        runner.run(step)
    emit({"event": "_end", "ops": vfs.ops})
    os._exit(0)


def fork_play(state: Path, seed: int, cut_after: int | None, cut_seed: int,
              unsafe: bool = False, steps: int | None = None,
              overrides: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """``overrides``: the config the child's table runs with (default: the campaign's)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read)
        try:
            _play_in_child(state, seed, cut_after, write, cut_seed, unsafe, steps, overrides)
        except BaseException as e:  # noqa: BLE001 - report, and leave without running the parent's code
            os.write(write, (json.dumps({"event": "_crash", "error": f"{type(e).__name__}: {e}"}) + "\n").encode())
        os._exit(1)
    os.close(write)
    chunks = []
    with os.fdopen(read, "rb") as f:
        for chunk in iter(lambda: f.read(65536), b""):
            chunks.append(chunk)
    os.waitpid(pid, 0)
    return [json.loads(line) for line in b"".join(chunks).decode().splitlines() if line.strip()]


def count_ops(seed: int, overrides: dict[str, Any] | None = None) -> int:
    """Operations the whole script makes through the VFS (the range cuts are drawn from)."""
    with tempfile.TemporaryDirectory(prefix="companion-powercut-") as tmp:
        events = fork_play(Path(tmp), seed, None, 0, overrides=overrides)
    end = [e for e in events if e["event"] in ("_end", "_crash")]
    if not end or end[0]["event"] != "_end":
        raise RuntimeError(f"seed {seed}: the uncut run failed: {end}")
    return int(end[0]["ops"])


def cut_run(seed: int, cut_after: int, cut_seed: int, workdir: Path | None = None, *,
            unsafe: bool = False) -> CutResult:
    """One cut; ``unsafe``: the journal commits without fsync (the harness's self-test)."""
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="companion-powercut-") as tmp:
            return cut_run(seed, cut_after, cut_seed, Path(tmp), unsafe=unsafe)
    from qa.reliability.crash import _nontimer_labels
    from qa.reliability.inproc import Runner

    res = CutResult(seed, cut_after)
    state = workdir / "state"
    state.mkdir(parents=True)
    events = fork_play(state, seed, cut_after, cut_seed, unsafe)
    if crash := [e for e in events if e["event"] == "_crash"]:
        res.problems.append(f"the run before the cut failed: {crash[0]['error']}")
        return res
    cut = [e for e in events if e["event"] == "_cut"]
    res.torn = cut[0]["torn"] if cut else 0
    printed = [e["input"] for e in events if e["event"] == "accepted" and e["input"] != "repeat"]
    res.acknowledged = len(printed)
    try:
        runner = Runner(state)
    except Exception as e:  # noqa: BLE001 - the finding itself
        res.failed_start = True
        res.problems.append(f"start failed: {type(e).__name__}: {e}")
        return res
    try:
        said = [e["key"] for e in runner.events if e["event"] == "say"]
        if not said or not said[0].startswith("table."):
            res.problems.append(f"after the cut the table first said {said[:2]}")
        alarms = [e["message"] for e in runner.events if e["event"] == "error" and "kept as" in e["message"]]
        if alarms:
            res.false_alarm = True
            res.problems.append(f"a power cut taken for damage: {alarms[0]}")
    finally:
        runner.close()
    now = _nontimer_labels(state)
    common = kept(printed, now)
    res.lost = len(printed) - common
    if res.lost:
        res.problems.append(f"acknowledged but lost: {printed[common:common + 3]}… (journal: {now[common:common + 3]})")
    if len(now) - len(printed) > 1:
        res.problems.append(f"{len(now) - len(printed)} journaled inputs the table never acknowledged")
    return res


def campaign(cuts: int, seed: int, *, per_script: int = 10,
             progress: Callable[[CutResult], None] | None = None) -> tuple[list[CutResult], float]:
    """``cuts`` power cuts, ``per_script`` at random operations of each script."""
    t0 = time.monotonic()
    results: list[CutResult] = []
    rng = random.Random(seed)
    script = seed
    while len(results) < cuts:
        total = count_ops(script)
        for _ in range(min(per_script, cuts - len(results))):
            r = cut_run(script, rng.randint(1, total), rng.randrange(1 << 30))
            results.append(r)
            if progress:
                progress(r)
        script += 1
    return results, time.monotonic() - t0


def summary(results: list[CutResult], seconds: float) -> list[tuple[str, str]]:
    return [
        ("power cuts", str(len(results))),
        ("scripts", str(len({r.seed for r in results}))),
        ("torn writes landed", str(sum(r.torn > 0 for r in results))),
        ("inputs acknowledged", str(sum(r.acknowledged for r in results))),
        ("acknowledged lost", str(sum(r.lost for r in results))),
        ("failed starts", str(sum(r.failed_start for r in results))),
        ("cut taken for damage", str(sum(r.false_alarm for r in results))),
        ("failed cuts", str(sum(not r.ok for r in results))),
        ("time", f"{seconds:.0f} s"),
    ]
