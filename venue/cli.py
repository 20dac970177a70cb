"""``companion venue --mqtt HOST[:PORT] [--web HOST:PORT] [--state DIR]``: the
venue's board and league, until Ctrl-C (or SIGTERM).  A bad argument is one
line and exit 2; a broker that cannot be reached is said once, and retried."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

DEFAULT_WEB = "0.0.0.0:8090"


class BadArgument(ValueError):
    pass


def address(text: str, default_port: int, what: str) -> tuple[str, int]:
    """``host[:port]`` (``[v6]:port`` too) → (host, port), or a one-line why not."""
    host, port = text.strip(), str(default_port)
    if host.startswith("["):
        inside, _, rest = host[1:].partition("]")
        host = inside
        if rest:
            if not rest.startswith(":"):
                raise BadArgument(f"{what}: {text!r} is not HOST[:PORT]")
            port = rest[1:]
    elif host.count(":") == 1:
        host, port = host.split(":")
    if not host or any(c.isspace() or c in "/#+" for c in host):
        raise BadArgument(f"{what}: {text!r} names no host")
    if not (port.isascii() and port.isdigit() and 0 <= int(port) <= 65535):
        raise BadArgument(f"{what}: the port in {text!r} is not a number from 0 to 65535")
    return host, int(port)


def since(text: str) -> float:
    try:
        return datetime.fromisoformat(text).timestamp()  # no zone: this machine's local time
    except ValueError:
        raise BadArgument(f"--since: {text!r} is not a date or time (2026-12-01 or 2026-12-01T18:00)") from None


def default_state() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "companion" / "venue"


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mqtt", required=True, metavar="HOST[:PORT]", help="the broker the tables publish to (1883)")
    p.add_argument("--web", default=DEFAULT_WEB, metavar="HOST:PORT", help=f"where the board listens ({DEFAULT_WEB})")
    p.add_argument("--state", type=Path, default=None, metavar="DIR", help=f"the venue's database ({default_state()})")
    p.add_argument("--username", default=None, help="the venue's user on the broker (docs/mqtt/acl)")
    p.add_argument("--password-file", type=Path, default=None, help="a file holding that user's password")
    p.add_argument("--ca-file", type=Path, default=None, help="TLS: the broker's CA certificate (port 8883)")
    p.add_argument("--id", default=None, help="the MQTT client id (venue-<host>): one per venue on a broker")
    p.add_argument("--since", default=None, metavar="DATE", help="tonight began then (default: at start)")
    p.add_argument("--host", action="append", default=[], help="another name the board answers to (its Host)")
    p.add_argument("--wire", type=Path, default=None, metavar="FILE",
                   help="the events, ratings and names the tables' games publish (default: this release's, "
                        "venue/wire.json; another table's: python tools/venue_wire.py there)")


def run(args: Any) -> int:
    try:
        broker = address(args.mqtt, 8883 if args.ca_file else 1883, "--mqtt")
        web = address(args.web, 8090, "--web")
        start = since(args.since) if args.since else None
        password = None
        if args.password_file is not None:
            try:
                password = args.password_file.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as e:
                raise BadArgument(f"--password-file: cannot read {args.password_file} ({e})") from None
        if args.ca_file is not None and not args.ca_file.is_file():
            raise BadArgument(f"--ca-file: {args.ca_file} is not a file")
        if args.wire is not None:
            _use_wire(args.wire)
    except BadArgument as e:
        print(f"companion venue: {e}", file=sys.stderr)
        return 2
    from venue import schema
    from venue.app import Venue
    from venue.store import StoreError
    from venue.subscriber import BadCaFile

    def say(line: str) -> None:
        print(f"venue: {line}", file=sys.stderr, flush=True)

    try:
        v = Venue(args.state or default_state(), broker, web, ident=args.id, username=args.username,
                  password=password, ca_file=str(args.ca_file) if args.ca_file else None, since=start,
                  hosts=tuple(args.host), games=schema.names(), report=say)
    except StoreError as e:
        print(f"companion venue: {e}", file=sys.stderr)
        return 1
    except BadCaFile as e:
        print(f"companion venue: --ca-file: {e}", file=sys.stderr)
        return 2
    try:
        v.start()
    except OSError as e:
        print(f"companion venue: {e}", file=sys.stderr)
        v.stop()
        return 1
    say(f"the board is at {v.url}/ ; listening to the tables on {broker[0]}:{broker[1]} as {v.ear.ident}")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        v.stop()
    say("stopped")
    return 0


def _use_wire(path: Path) -> None:
    """Check by the wire in ``path`` (``schema.use``), or say why not."""
    import json

    from venue import schema

    try:
        schema.use(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError) as e:
        raise BadArgument(f"--wire: cannot read {path} ({e})") from None
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise BadArgument(f"--wire: {path} is no wire a venue reads ({e})") from None
