"""The MQTT tests' broker: qa/reliability/broker.py's real mosquitto, and a
skip that says why where mosquitto is absent (CI installs it: test.sh)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from qa.reliability import broker as _broker
from qa.reliability.broker import free_port

__all__ = ["Broker", "free_port", "password_broker", "documented_broker", "needs_mosquitto_passwd", "USER", "PASSWORD"]


class Broker(_broker.Broker):
    def __init__(self, root: Path, *args: Any, **kwargs: Any) -> None:
        try:
            super().__init__(root, *args, **kwargs)
        except _broker.BrokerMissing as e:
            pytest.skip(str(e))


USER, PASSWORD = "table", "s3cret"
needs_mosquitto_passwd = pytest.mark.skipif(not shutil.which("mosquitto_passwd"),
                                            reason="mosquitto_passwd is not installed")


def password_broker(root: Path, files: Path) -> Broker:
    """A mosquitto that lets in only ``USER`` with ``PASSWORD``; ``files``: a
    folder the broker can read (the ``readable`` fixture: run as root,
    mosquitto drops to its own user, which cannot enter pytest's tmp_path)."""
    subprocess.run(["mosquitto_passwd", "-b", "-c", str(files / "passwd"), USER, PASSWORD], check=True,
                   capture_output=True)
    (files / "passwd").chmod(0o644)
    return Broker(root / "broker", extra=[f"password_file {files / 'passwd'}", "allow_anonymous false"]).start()


DOCUMENTED = Path(__file__).resolve().parent.parent / "docs" / "mqtt"
# What the test's Broker decides itself: where it listens, what it keeps and where it logs.
OWN = ("listener", "persistence", "autosave", "log_")


def documented_broker(root: Path, files: Path, users: dict[str, str], extra: list[str] | None = None) -> Broker:
    """A mosquitto run with docs/mqtt/companion.conf as the README says to
    install it — its ACL (docs/mqtt/acl) and a password file made with
    mosquitto_passwd for ``users`` (name → password) — on a loopback port:
    every line of the file but those naming the port and persistence.
    ``files``: a folder the broker can read (see ``password_broker``)."""
    if not shutil.which("mosquitto_passwd"):
        pytest.skip("mosquitto_passwd is not installed (Debian: mosquitto)")
    passwd = files / "passwd"
    for i, (user, password) in enumerate(users.items()):
        subprocess.run(["mosquitto_passwd", *(["-c"] if i == 0 else []), "-b", str(passwd), user, password],
                       check=True, capture_output=True)
    passwd.chmod(0o644)
    lines = []
    for line in (DOCUMENTED / "companion.conf").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#") or line.startswith(OWN):
            continue
        lines.append(line.replace("/etc/mosquitto/companion.passwd", str(passwd))
                     .replace("/etc/mosquitto/companion.acl", str(DOCUMENTED / "acl")))
    stay = ["user root"] if os.geteuid() == 0 else []  # as root mosquitto would become mosquitto and not read them
    return Broker(root, extra=[*lines, *stay, *(extra or [])]).start()
