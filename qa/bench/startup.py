"""The real daemon as systemd starts it: ``companion run --simulate --json
--no-input --state DIR`` (the console script of ExecStart=), with
``NOTIFY_SOCKET`` pointing at our own AF_UNIX datagram socket.

* start → ready: from just before the process is spawned to the READY=1
  datagram (sent once the journal is replayed and the loop is about to run);
* peak RSS: ``VmHWM`` from /proc/<pid>/status just before we stop it;
* idle CPU: utime+stime from /proc/<pid>/stat over a quiet window (the loop
  waits on its queue, the simulated reader is connected, nothing is tapped);
* import cost: the same start with ``python -X importtime``, folded to the
  third-party and standard modules the project's own modules pull in.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qa.bench.stats import COMPANION, PYTHON, ROOT, daemon_env

READY_TIMEOUT_S = 30.0
PROJECT = ("companion", "hardware", "voice")
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Daemon:
    proc: subprocess.Popen[bytes]
    ready_s: float
    stderr: Path
    notices: list[str] = field(default_factory=list)  # datagrams after READY=1 (WATCHDOG=1 …)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def hwm_mb(self) -> float:
        """Peak resident set so far (VmHWM), in MiB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmHWM in /proc status")

    def cpu_s(self) -> float:
        """utime + stime of every thread so far, in seconds."""
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        return (int(fields[11]) + int(fields[12])) / TICKS

    def stop(self) -> int:
        """SIGTERM, as systemd stops it; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("the daemon did not stop on SIGTERM within 10 s") from None


@contextlib.contextmanager
def notify_socket() -> Iterator[tuple[socket.socket, str]]:
    with tempfile.TemporaryDirectory(prefix="bench-notify-") as tmp:
        path = os.path.join(tmp, "notify")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        try:
            yield sock, path
        finally:
            sock.close()


def _command(state: Path, importtime: bool = False, extra: Sequence[str] = (), module: bool = False) -> list[str]:
    # The console script when the venv has one, as ExecStart= runs it; ``module``: the
    # CLI's module instead (a checkout found first on the path, ``root``, runs the same way).
    entry = [str(COMPANION)] if COMPANION.exists() and not module else [str(PYTHON), "-m", "companion.app.cli"]
    cmd = [*entry, "run", "--simulate", "--json", "--no-input", "--state", str(state), *extra]
    if not importtime:
        return cmd
    return [str(PYTHON), "-X", "importtime", *(cmd[1:] if cmd[0] == str(PYTHON) else cmd)]


@contextlib.contextmanager
def daemon(state: Path, importtime: bool = False, extra: Sequence[str] = (),
           root: Path | None = None) -> Iterator[Daemon]:
    """Start the daemon on ``state`` (``extra``: more arguments to ``run``;
    ``root``: another checkout's, its modules first on the path, through the
    CLI's module); yields it once READY=1 arrived; stops it."""
    env = daemon_env() if root is None else daemon_env(
        PYTHONPATH=str(root), COMPANION_CONFIG=str(Path(root) / "config" / "companion.yaml"))
    with notify_socket() as (sock, path), tempfile.NamedTemporaryFile(prefix="bench-stderr-") as err:
        started = time.monotonic()
        proc = subprocess.Popen(_command(state, importtime, extra, module=root is not None),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                cwd=root or ROOT, env={**env, "NOTIFY_SOCKET": path})
        try:
            deadline = started + READY_TIMEOUT_S
            while True:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                try:
                    message = sock.recv(4096).decode()
                except TimeoutError:
                    raise RuntimeError(f"no READY=1 within {READY_TIMEOUT_S} s: "
                                       f"{Path(err.name).read_text()[-2000:]}") from None
                if "READY=1" in message.split("\n"):
                    break
            d = Daemon(proc, time.monotonic() - started, Path(err.name))
            # Read on, as systemd does: an unread datagram socket fills up and
            # the daemon's next sd_notify would block.
            stop = threading.Event()
            reader = threading.Thread(target=_drain, args=(sock, stop, d.notices), daemon=True)
            reader.start()
            try:
                yield d
            finally:
                if proc.poll() is None:
                    d.stop()
                stop.set()
                reader.join()
        finally:
            if proc.poll() is None:
                Daemon(proc, 0.0, Path(err.name)).stop()


def _drain(sock: socket.socket, stop: threading.Event, into: list[str]) -> None:
    sock.settimeout(0.1)
    while not stop.is_set():
        try:
            into.append(sock.recv(4096).decode())
        except TimeoutError:
            continue
        except OSError:
            return


def start_ready(state: Path, extra: Sequence[str] = (), root: Path | None = None) -> tuple[float, float]:
    """(seconds to READY=1, peak RSS MiB at that moment) for one start on ``state``
    (``root``: by another checkout, as ``daemon``)."""
    with daemon(state, extra=extra, root=root) as d:
        return d.ready_s, d.hwm_mb()


@dataclass
class Idle:
    cpu_pct: list[float] = field(default_factory=list)  # one per window
    peak_rss_mb: float = 0.0
    watchdog_per_s: float = 0.0  # WATCHDOG=1 datagrams while idle (no WatchdogSec= set)


def idle(state: Path, windows: int, window_s: float) -> Idle:
    out = Idle()
    with daemon(state) as d:
        time.sleep(0.5)  # the start-up's own work (and the ready LED's blink thread) is over
        seen, begun = len(d.notices), time.monotonic()
        for _ in range(windows):
            c0, t0 = d.cpu_s(), time.monotonic()
            time.sleep(window_s)
            c1, t1 = d.cpu_s(), time.monotonic()
            out.cpu_pct.append(100.0 * (c1 - c0) / (t1 - t0))
        out.peak_rss_mb = d.hwm_mb()
        watchdogs = sum(1 for n in d.notices[seen:] if "WATCHDOG=1" in n.split("\n"))
        out.watchdog_per_s = watchdogs / (time.monotonic() - begun)
    return out


# ------------------------------------------------------------ import cost
@dataclass
class Imported:
    name: str
    self_us: int
    cumulative_us: int
    level: int
    children: list[Imported] = field(default_factory=list)


def parse_importtime(text: str) -> list[Imported]:
    """The tree ``-X importtime`` prints (children first, indented by level)."""
    roots: list[Imported] = []
    pending: dict[int, list[Imported]] = {}
    for line in text.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line.split(":", 1)[1].split("|")
        name = name[1:]  # one space after the bar, then two per level
        level = (len(name) - len(name.lstrip())) // 2
        node = Imported(name.strip(), int(self_us), int(cum_us), level, pending.pop(level + 1, []))
        pending.setdefault(level, []).append(node)
    for level in sorted(pending):
        roots.extend(pending[level])
    return roots


def _is_project(name: str) -> bool:
    return name.split(".")[0] in PROJECT


@dataclass(frozen=True)
class Offender:
    module: str
    importer: str  # the project module that imported it first, else when it was imported
    ms: float  # cumulative import time


def offenders(roots: list[Imported]) -> list[Offender]:
    """Outside modules pulled in by the project's modules, with their whole
    subtree's time.  A top-level entry before the first project module is the
    interpreter's own start-up (``site``); one after it was imported inside a
    function at run time (a lazy import: the project chose to defer it)."""
    found: list[Offender] = []
    project_seen = False

    def walk(node: Imported, importer: str) -> None:
        if _is_project(node.name):
            for child in node.children:
                walk(child, node.name)
        else:
            found.append(Offender(node.name, importer, node.cumulative_us / 1000))

    for root in roots:
        project_seen = project_seen or _is_project(root.name)
        walk(root, "(lazy, at run time)" if project_seen else "(python start-up)")
    return sorted(found, key=lambda o: -o.ms)


def import_profile(state: Path) -> tuple[float, list[Offender], dict[str, float]]:
    """(total import ms, outside modules by cost, project modules' own ms)."""
    with daemon(state, importtime=True) as d:
        text = d.stderr.read_text()
    roots = parse_importtime(text)
    own: dict[str, float] = {}

    def visit(node: Imported) -> None:
        if _is_project(node.name):
            own[node.name] = node.self_us / 1000
        for child in node.children:
            visit(child)

    for root in roots:
        visit(root)
    return sum(r.cumulative_us for r in roots) / 1000, offenders(roots), own


def import_rss_mb(module: str) -> float:
    """Peak RSS of an interpreter that imports only ``module`` (MiB)."""
    code = ("import importlib, sys; importlib.import_module(sys.argv[1]); "
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])")
    out = subprocess.run([str(PYTHON), "-c", code, module], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=daemon_env())
    return int(out.stdout.strip()) / 1024


def bare_python_rss_mb() -> float:
    return import_rss_mb("sys")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        print(start_ready(Path(tmp) / "a"))
        total, offs, own = import_profile(Path(tmp) / "b")
        print(total)
        for o in offs[:10]:
            print(o, import_rss_mb(o.module))
        print(sorted(own.items(), key=lambda kv: -kv[1])[:8])
        print(bare_python_rss_mb())
