"""``companion run``: the daemon.  Once its config is read, its journal is
opened on a thread of its own (``app.start``), and only then is the rest of
the daemon imported (``app.daemon``): the check of a long journal runs while
the table, its loop, the panel's library and the pages are imported and made."""

from __future__ import annotations

import argparse
from pathlib import Path

from companion.app import config as configmod
from companion.app.start import begin


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--simulate", action="store_true", help="simulated reader and panel, driven from this terminal")
    p.add_argument("--state", type=Path, help="state directory (journal, voice cache); default: "
                   "state_dir from the config, else $STATE_DIRECTORY (systemd), else ./state")
    p.add_argument("--lang", choices=("en", "ja"), help="narration language (overrides `language:`; "
                   "a lang/en or lang/ja card still switches it at the table)")
    p.add_argument("--voice", choices=("tts", "console", "silent"), help="override voice.backend")
    p.add_argument("--json", action="store_true", help="--simulate: print the JSON event log instead of the readable view")
    p.add_argument("--no-input", action="store_true", help="--simulate: don't read commands from stdin (benchmarks)")
    p.add_argument("--web", metavar="HOST:PORT", help="serve the table's pages there (overrides `web: listen:`; "
                   "off: no pages); with --simulate the page is also a virtual reader and panel")
    p.add_argument("--mqtt", metavar="HOST[:PORT]", help="publish the table on this MQTT broker (overrides "
                   "`mqtt: broker:`; off: not at all)")


def run(args: argparse.Namespace) -> int:
    cfg = configmod.for_command(args)
    if args.simulate:
        cfg["panel"] = {**cfg["panel"], "backend": "mock"}
    start = begin(cfg)
    try:
        from companion.app import daemon

        return daemon.serve(args, cfg, start)
    except BaseException:
        if not start.built:  # failed before the app held the journal and the lock: they are let go here
            start.let_go()
        raise
