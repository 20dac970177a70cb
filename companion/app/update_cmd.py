"""``companion update`` and ``companion update --rollback`` (as root).

The installer does the work (``systemd/install.sh``, ``systemd/release.sh``):
each release is built in its own folder beside the running one, the service is
switched to it and restarted, and it goes back to the previous release by
itself unless the new one becomes ready.  ``update`` installs the checkout the
current release came from (after a ``git pull`` there) or ``--from DIR``;
``--rollback`` goes back to the previous release by hand."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rollback", action="store_true", help="go back to the previous release (and restart on it)")
    p.add_argument("--from", dest="source", type=Path, metavar="DIR",
                   help="the checkout to install (default: the one the current release came from)")
    p.add_argument("--no-voice", action="store_true", help="install without the [voice] extra")


def prefix() -> Path:
    """Where the releases are (``companion`` on the PATH says; install.sh's default otherwise)."""
    return Path(os.environ.get("COMPANION_PREFIX") or "/opt/companion")


def own_release() -> Path:
    """The release folder this companion runs from (its venv is in there).
    The current release may be one from before ``update`` existed (after a
    roll-back to it, the PATH's ``companion`` runs this command from the newer one)."""
    return Path(sys.prefix).parent


def command(args: argparse.Namespace) -> list[str] | str:
    """The installer's command line for ``args``, or what is wrong (a sentence)."""
    releases = [prefix() / "current", own_release()]
    if args.rollback:
        if args.source is not None:
            return "--rollback goes back to the release before; it takes no --from"
        scripts = [r / "systemd" / "release.sh" for r in releases if (r / "systemd" / "release.sh").is_file()]
        return ["bash", str(scripts[0]), "rollback"] if scripts else f"no release is installed in {prefix()}"
    source = args.source
    for release in releases if source is None else []:
        try:
            source = Path((release / ".source").read_text(encoding="utf-8").strip())
            break
        except OSError:
            continue
    if source is None:
        return "the current release does not say which checkout it came from: companion update --from DIR"
    script = source / "systemd" / "install.sh"
    if not script.is_file():
        return f"{source} is not a checkout of the companion (no systemd/install.sh)"
    return ["bash", str(script), *(["--no-voice"] if args.no_voice else [])]


def run(args: argparse.Namespace) -> int:
    what = command(args)
    if isinstance(what, str):
        print(f"companion update: {what}; nothing changed", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        flags = " --rollback" if args.rollback else ""
        print(f"companion update: it switches the service's release, so run it as root: sudo companion update{flags}",
              file=sys.stderr)
        return 1
    sys.stdout.flush()
    os.execvp(what[0], what)
    return 1  # not reached: exec replaces this process
