"""``companion voice`` — the voice's tools (``voice.prerender``: prerender,
render, engines), with the daemon's settings loaded here, where the config
lives, so the cache keys match what the daemon will look up."""

from __future__ import annotations

import argparse

from companion.app import catalogue, config
from voice import prerender


def configure_parser(parser: argparse.ArgumentParser) -> None:
    prerender.configure_parser(parser)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "voice_config", None) is None:
        args.settings = config.load(config.default_paths() + list(getattr(args, "config", None) or []))
    if getattr(args, "line_folders", None) is None:  # the shared lines and every game's
        args.line_folders = catalogue.line_folders()
    return prerender.run(args)
