#!/usr/bin/env python3
"""A ``systemctl`` for where systemd is not PID 1 (a container, the emulated
arm64 root of tools/pi-update-check.sh, the installer's tests): just what
systemd/install.sh and systemd/release.sh ask of it, for one ``Type=notify``
unit, done the way systemd does it.

``restart NAME`` stops the running main process (SIGTERM, then SIGKILL after
``TimeoutStopSec=``), starts the unit's ``ExecStart=`` as its ``User=`` in its
``WorkingDirectory=`` with its ``Environment=``, ``STATE_DIRECTORY`` and a
``NOTIFY_SOCKET``, and returns 0 once the process sends ``READY=1``; 1 if it
exits first or sends nothing within ``TimeoutStartSec=`` (then it is killed,
as systemd does).  ``is-active NAME`` says ``active`` while that process
lives.  ``daemon-reload``, ``enable`` and ``disable`` change nothing here (the
unit file is read at each start).

Settings: ``FAKE_SYSTEMCTL_DIR`` (pid files, the socket, each unit's output in
``NAME.log``; default /run/fake-systemctl), ``FAKE_SYSTEMCTL_UNITS`` (default
/etc/systemd/system), ``FAKE_SYSTEMCTL_STATE_ROOT`` (default /var/lib),
``FAKE_SYSTEMCTL_START_TIMEOUT`` (seconds, instead of the
unit's)."""

from __future__ import annotations

import os
import pwd
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

HOME = Path(os.environ.get("FAKE_SYSTEMCTL_DIR", "/run/fake-systemctl"))
UNITS = Path(os.environ.get("FAKE_SYSTEMCTL_UNITS", "/etc/systemd/system"))
STATE_ROOT = os.environ.get("FAKE_SYSTEMCTL_STATE_ROOT", "/var/lib")  # where StateDirectory= names are


def service_settings(name: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    section = ""
    for raw in (UNITS / name).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line.strip("[]")
        elif section == "Service" and "=" in line:
            key, _, value = line.partition("=")
            out.setdefault(key.strip(), []).append(value.strip())
    return out


def seconds(value: str, default: float) -> float:
    try:
        return float(value.rstrip("s"))
    except ValueError:
        return default


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def main_pid(name: str) -> int | None:
    try:
        pid = int((HOME / f"{name}.pid").read_text())
    except (OSError, ValueError):
        return None
    return pid if alive(pid) else None


def stop(name: str) -> None:
    pid = main_pid(name)
    (HOME / f"{name}.pid").unlink(missing_ok=True)
    if pid is None:
        return
    unit = service_settings(name) if (UNITS / name).exists() else {}
    limit = seconds(unit.get("TimeoutStopSec", ["5"])[-1], 5)
    os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + limit
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive(pid):
        os.killpg(pid, signal.SIGKILL)


def start(name: str) -> int:
    unit = service_settings(name)
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
    for value in unit.get("Environment", []):
        env.update(word.split("=", 1) for word in shlex.split(value) if "=" in word)
    for value in unit.get("StateDirectory", []):
        env["STATE_DIRECTORY"] = ":".join(f"{STATE_ROOT}/{d}" for d in value.split())
    user = unit.get("User", [""])[-1]
    ids = None
    known = {e.pw_name for e in pwd.getpwall()}
    if user and os.geteuid() == 0 and user != "root" and user in known:  # a test's prefix has no such user
        entry = pwd.getpwnam(user)
        ids = (entry.pw_uid, entry.pw_gid)
        env.update(HOME=entry.pw_dir, USER=user, LOGNAME=user)
    HOME.mkdir(parents=True, exist_ok=True)
    HOME.chmod(0o755)
    sock_path = HOME / f"{name}.notify"
    sock_path.unlink(missing_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(sock_path))
    sock_path.chmod(0o777)
    env["NOTIFY_SOCKET"] = str(sock_path)

    def become() -> None:
        if ids is not None:
            os.setgroups(os.getgrouplist(user, ids[1]))
            os.setgid(ids[1])
            os.setuid(ids[0])

    log = open(HOME / f"{name}.log", "ab")  # noqa: SIM115 - the child keeps it
    proc = subprocess.Popen(shlex.split(unit["ExecStart"][-1]), env=env, stdin=subprocess.DEVNULL,
                            stdout=log, stderr=log, cwd=unit.get("WorkingDirectory", ["/"])[-1],
                            start_new_session=True, preexec_fn=become)
    limit = float(os.environ.get("FAKE_SYSTEMCTL_START_TIMEOUT") or
                  seconds(unit.get("TimeoutStartSec", ["90"])[-1], 90))
    deadline = time.monotonic() + limit
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                print(f"Job for {name} failed: the main process exited with {proc.returncode} before READY=1",
                      file=sys.stderr)
                return 1
            sock.settimeout(0.2)
            try:
                message = sock.recv(4096).decode("utf-8", "replace")
            except TimeoutError:
                continue
            if "READY=1" in message.splitlines():
                (HOME / f"{name}.pid").write_text(str(proc.pid))
                return 0
        print(f"Job for {name} failed: no READY=1 within {limit:g} s (timeout); killed", file=sys.stderr)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return 1
    finally:
        sock.close()
        sock_path.unlink(missing_ok=True)


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("-")]
    if not args:
        print("fake systemctl: a command, please", file=sys.stderr)
        return 2
    verb, names = args[0], [n if n.endswith(".service") else f"{n}.service" for n in args[1:]]
    if verb in ("daemon-reload", "enable", "disable"):
        return 0
    if verb == "is-active":
        active = all(main_pid(n) is not None for n in names)
        print("active" if active else "inactive")
        return 0 if active else 3
    if verb == "stop":
        for n in names:
            stop(n)
        return 0
    if verb in ("start", "restart"):
        status = 0
        for n in names:
            if verb == "restart" or main_pid(n) is None:
                stop(n)
                status = status or start(n)
        return status
    print(f"fake systemctl: {verb} is not emulated", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
