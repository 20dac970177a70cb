"""The MQTT tests' broker: reliability/broker.py's real mosquitto, and a
skip that says why where mosquitto is absent (CI installs it: test.sh)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reliability import broker as _broker
from reliability.broker import free_port

__all__ = ["Broker", "free_port"]


class Broker(_broker.Broker):
    def __init__(self, root: Path, *args: Any, **kwargs: Any) -> None:
        try:
            super().__init__(root, *args, **kwargs)
        except _broker.BrokerMissing as e:
            pytest.skip(str(e))
