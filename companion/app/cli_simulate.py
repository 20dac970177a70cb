"""``companion simulate SCRIPT`` — see companion.app.simulate."""

from __future__ import annotations

import argparse
from pathlib import Path


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", type=Path, help="a table script (YAML)")
    p.add_argument("--pretty", action="store_true", help="a readable view instead of JSON lines")
    p.add_argument("--state", type=Path, help="keep the journal in DIR (default: a temporary one)")
    p.add_argument("--lang", choices=("en", "ja"), help="narration language (overrides the script)")


def run(args: argparse.Namespace) -> int:
    from companion.app.simulate import run_script

    overrides = {"language": args.lang} if args.lang else None
    return run_script(args.script, state=args.state, pretty=args.pretty, overrides=overrides,
                      config_paths=args.config)
