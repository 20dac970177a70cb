"""The real daemon in a child process: ``companion run --simulate --json
--state DIR``, fed one command at a time over stdin, its event log read back
from stdout, and killed with SIGKILL whenever the campaign says so.

stdout also carries what is meant for people (the console voice's lines and
the terminal's ``> `` prompt), so each line is searched for a JSON object
rather than taken as one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def python() -> str:
    """The project's venv interpreter if there is one (the daemon needs its packages)."""
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def companion_cmd(*args: str) -> list[str]:
    return [python(), "-m", "companion.app.cli", *args]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["COMPANION_CONFIG"] = str(ROOT / "qa" / "reliability" / "no-such-config.yaml")  # ignore /etc
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("NOTIFY_SOCKET", None)
    env.pop("WATCHDOG_USEC", None)
    return env


_DECODER = json.JSONDecoder()


def parse_event(line: str) -> dict[str, Any] | None:
    """The event-log object in one stdout line, if it holds one."""
    i = line.find("{")
    if i < 0:
        return None
    try:
        obj, _ = _DECODER.raw_decode(line, i)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) and "event" in obj else None


class Daemon:
    """One run of ``companion run --simulate --json``."""

    def __init__(self, state: Path, config: Path | None = None, extra: tuple[str, ...] = ()) -> None:
        pre = ("--config", str(config)) if config is not None else ()
        self.cmd = companion_cmd(*pre, "run", "--simulate", "--json", "--state", str(state), *extra)
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, encoding="utf-8",
                                     errors="replace", bufsize=1, cwd=str(ROOT), env=child_env())
        self.events: list[dict[str, Any]] = []
        self.other: list[str] = []  # stdout lines that are not events
        self.stderr: list[str] = []
        self.eof = False
        self.killed = False
        self._cond = threading.Condition()
        self._out = threading.Thread(target=self._read_stdout, daemon=True, name="daemon-stdout")
        self._err = threading.Thread(target=self._read_stderr, daemon=True, name="daemon-stderr")
        self._out.start()
        self._err.start()

    # ------------------------------------------------------------ reading
    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            ev = parse_event(line)
            with self._cond:
                if ev is None:
                    self.other.append(line.rstrip("\n"))
                else:
                    self.events.append(ev)
                self._cond.notify_all()
        with self._cond:
            self.eof = True
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip("\n"))

    def wait_event(self, pred: Callable[[dict[str, Any]], bool], start: int = 0,
                   timeout: float = 10.0) -> tuple[int, dict[str, Any] | None]:
        """The first event at index >= ``start`` matching ``pred``: (index, event),
        or (-1, None) once the process is gone or ``timeout`` has passed."""
        deadline = time.monotonic() + timeout
        i = start
        with self._cond:
            while True:
                while i < len(self.events):
                    if pred(self.events[i]):
                        return i, self.events[i]
                    i += 1
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    return -1, None
                self._cond.wait(left)

    def response(self, start: int, timeout: float = 10.0) -> tuple[int, dict[str, Any] | None]:
        return self.wait_event(lambda e: e["event"] in ("accepted", "rejected"), start, timeout)

    def mark(self) -> int:
        with self._cond:
            return len(self.events)

    # ------------------------------------------------------------ writing
    def send(self, line: str) -> bool:
        """Write one command; False if the daemon is gone."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def kill(self) -> None:
        """SIGKILL, whatever the daemon is doing."""
        self.killed = True
        try:
            os.kill(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def alive(self) -> bool:
        return self.proc.poll() is None

    def quit(self, timeout: float = 15.0) -> int | None:
        """``quit``, then the exit code (None if it would not stop: then killed)."""
        self.send("quit")
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.proc.wait()
            rc = None
        self.finish()
        return rc

    def finish(self) -> None:
        """Wait for a dead process and for its output to be read."""
        self.proc.wait()
        self._out.join(5)
        self._err.join(5)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass

    def traceback(self) -> str | None:
        text = "\n".join(self.stderr)
        return text if "Traceback" in text else None
