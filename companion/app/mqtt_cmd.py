"""``companion mqtt`` — the table on the broker (``mqtt.forget``: ``forget``
removes its Home Assistant device), with the config's ``mqtt:`` part loaded
and checked here, where the config lives."""

from __future__ import annotations

import argparse

from companion.app import config
from mqtt import forget


def configure_parser(parser: argparse.ArgumentParser) -> None:
    forget.configure_parser(parser)


def run(args: argparse.Namespace) -> int:
    cfg = config.load(config.default_paths() + list(getattr(args, "config", None) or []))
    return forget.run(args, cfg.get("mqtt") or {})
