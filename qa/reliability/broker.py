"""A real mosquitto broker on a free loopback port, in a directory of its
own, never as a service: started, killed and restarted by whoever owns it —
the MQTT tests (the ``broker`` fixture, conftest.py), the fault
campaign (qa/reliability/mqtt_faults.py) and the bench (qa/bench/mqtt_tables.py).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

MOSQUITTO = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None)


class BrokerMissing(RuntimeError):
    """No mosquitto on this machine."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Broker:
    """One mosquitto on ``127.0.0.1:port``; ``extra``: more config lines
    (an ACL file, a password file), written beside its own; ``persist``: it
    keeps its sessions and queued messages on disk across a restart, saved
    after every change (a venue's queue survives the broker's SIGKILL)."""

    def __init__(self, root: Path, extra: Iterable[str] = (), port: int | None = None,
                 persist: bool = False) -> None:
        if MOSQUITTO is None:
            raise BrokerMissing("mosquitto is not installed (Debian: apt install mosquitto; test.sh does it as root)")
        self.root, self.port = root, port or free_port()
        self.host = "127.0.0.1"
        root.mkdir(parents=True, exist_ok=True)
        self.conf = root / "mosquitto.conf"
        keep = [f"persistence_location {root}/", "autosave_interval 1", "autosave_on_changes true"]
        if os.geteuid() == 0:  # mosquitto would drop to its own user, which cannot write ``root``: no save would ever succeed
            keep.append("user root")
        lines = [f"listener {self.port} 127.0.0.1", *(["persistence true", *keep] if persist else ["persistence false"]),
                 "log_dest stderr", "log_type error", "log_type warning"]
        extra = list(extra)
        if not any(line.startswith(("allow_anonymous", "password_file")) for line in extra):
            lines.append("allow_anonymous true")
        self.conf.write_text("\n".join([*lines, *extra]) + "\n", encoding="utf-8")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self, timeout_s: float = 10.0) -> Broker:
        assert MOSQUITTO is not None
        self.log = open(self.root / "mosquitto.log", "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.conf)], stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited {self.proc.returncode}: "
                                   + (self.root / "mosquitto.log").read_text(errors="replace")[-500:])
            try:
                socket.create_connection((self.host, self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"mosquitto did not listen on {self.address} within {timeout_s} s")

    def stop(self, kill: bool = False) -> None:
        if self.proc is None:
            return
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None
        self.log.close()

    def restart(self) -> None:
        self.stop()
        self.start()
