"""The MQTT tests' broker: reliability/broker.py's real mosquitto, and a
skip that says why where mosquitto is absent (CI installs it: test.sh)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reliability import broker as _broker
from reliability.broker import free_port

__all__ = ["Broker", "free_port", "password_broker", "needs_mosquitto_passwd", "USER", "PASSWORD"]


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
