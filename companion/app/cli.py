"""``companion`` — the command line.  Each subcommand lives in its own module;
this file only wires them, importing each lazily so start-up stays fast."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

# name → (module, help); the module offers configure_parser(parser) and run(args) -> int
COMMANDS = {
    "simulate": ("companion.app.cli_simulate", "replay a table script; the event log to stdout"),
    "run": ("companion.app.run_cmd", "run the daemon (--simulate: simulated hardware from this terminal)"),
    "scores": ("companion.app.scores", "the current game, tonight's totals and the history; --export"),
    "tags": ("companion.app.tags_cmd", "write, learn, read and check NFC tags"),
    "voice": ("companion.app.voice_cmd", "voice tools: prerender the WAV cache, render a line, list the engines"),
    "backup": ("companion.app.backup_cmd", "copy the journal safely (also while the daemon runs)"),
    "restore": ("companion.app.backup_cmd", "put a backup in the journal's place (the daemon must be stopped)"),
    "web": ("companion.app.web_app", "the table's pages: `web qr -o card.svg` writes a QR card to print"),
    "doctor": ("companion.app.doctor", "check reader, audio, GPIO, config and state; say what to fix"),
    "mqtt": ("companion.app.mqtt_cmd", "the table on the MQTT broker: `mqtt forget` removes it from Home Assistant"),
    "update": ("companion.app.update_cmd", "install the checkout as a new release, back to the last unless it starts; --rollback"),
    "venue": ("venue.cli", "the venue's board and league: every table on the broker (--mqtt HOST[:PORT])"),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="companion", description="A table companion for hidden-role games.")
    config_help = "a settings file (may be given more than once; later wins)"
    # --config goes before or after the command; two dests, because a subparser
    # would overwrite the top-level value rather than add to it.
    parser.add_argument("--config", dest="config_first", action="append", type=Path, default=[], help=config_help)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    # Only the chosen command's module is imported: `companion run` must start fast.
    chosen = next((a for a in argv if a in COMMANDS), None)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--config", action="append", type=Path, default=[], help=config_help)
        if name == chosen:
            try:
                mod = importlib.import_module(module)
            except ImportError as e:
                print(f"companion {name}: not available ({e})", file=sys.stderr)
                return 2
            mod.configure_parser(p)
            p.set_defaults(_run=mod.run)
    args = parser.parse_args(argv)
    args.config = args.config_first + args.config
    from companion.app.config import ConfigError
    from companion.runtime.journal import JournalTooNew
    from companion.runtime.state_lock import StateLocked, StateUnwritable

    try:
        return int(args._run(args) or 0)
    except ConfigError as e:
        print(f"companion: {e}", file=sys.stderr)
        return 2
    # another daemon has the journal; a newer release wrote it; the state cannot be written
    except (StateLocked, JournalTooNew, StateUnwritable) as e:
        print(f"companion: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `companion simulate … | head`: the reader left; that's fine
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
