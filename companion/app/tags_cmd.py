"""``companion tags`` — provisioning NFC tags (``hardware.provision``), with
the settings it needs loaded and checked here, where the config lives."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from companion.app import config
from companion.games import component_sets
from hardware import provision


def configure_parser(parser: argparse.ArgumentParser) -> None:
    provision.configure_parser(parser, component_sets())


def load_tag_map(path: Path | str, extra_players: Iterable[str] = ()) -> dict[str, str]:
    """The tag map as the daemon reads it: a missing file is empty; a bad one
    raises ConfigError with its line, and is never overwritten."""
    return config.load_tag_map(path, extra_players)


def settings(args: argparse.Namespace) -> provision.Settings:
    cfg = config.load(config.default_paths() + list(getattr(args, "config", None) or []))
    return provision.Settings(device=cfg["reader"]["device"], tag_map=Path(cfg["reader"]["tag_map"]),
                              extra_players=tuple(cfg["players"]["extra"]), load_tag_map=load_tag_map,
                              sets=component_sets())


def run(args: argparse.Namespace, **kwargs: Any) -> int:
    return provision.run(args, settings(args), **kwargs)
