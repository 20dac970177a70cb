"""The table's pages in the daemon: where they listen, what they read, and
``companion web qr`` (the card to lay on the table).

The web server (``web/``) is a shell part: it sees only the core's read side,
the loop's inbox and the router's messages.  Here it is handed those, and a
read-only view of the journal's finished plays for the history.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import Any

from companion.app import config as configmod
from companion.app.start import state_dir
from companion.app.wiring import App
from companion.core.events import Aside

PI_PORT = 8080  # `listen: auto` on a Pi


def resolve_listen(cfg: dict[str, Any], flag: str | None = None) -> tuple[str, int] | None:
    """``--web HOST:PORT`` over ``web: listen:``; ``auto`` is the whole LAN on
    a Pi (the pages are part of the product there) and off elsewhere."""
    listen = flag if flag is not None else cfg["web"]["listen"]
    if listen is None or listen == "off":
        return None
    if listen == "auto":
        from hardware.panel import is_raspberry_pi

        return ("0.0.0.0", PI_PORT) if is_raspberry_pi() else None
    try:
        return configmod.parse_listen(listen)
    except ValueError as e:  # only --web can get here: the config's value was checked on loading
        raise configmod.ConfigError("--web", None, str(e)) from None


def _reachable(host: str) -> str:
    """The name a phone reaches ``host`` by: the Pi's mDNS name when bound to every address."""
    return f"{socket.gethostname()}.local" if host in ("0.0.0.0", "::", "") else host


def address(host: str, port: int) -> str:
    """What a phone types (or scans)."""
    host = _reachable(host)
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def spoken_address(host: str, port: int) -> dict[str, dict[str, Any]]:
    """The ``web.address`` line's params by language: the name as English says
    it ("companion dot local"); for Japanese spelled letter by letter in
    katakana — a Latin name has no reading of its own, and a letter-by-letter
    one is what a player can type from (the page and the QR card show it written)."""
    from voice.ja import spelled

    name = _reachable(host)
    stem, local = (name[:-len(".local")], True) if name.endswith(".local") else (name, False)
    return {"en": {"host": name.replace(".", " dot "), "port": port},
            "ja": {"host": spelled(stem) + ("・ドット・ローカル" if local else ""), "port": port}}


def plays_reader(path: Path) -> Any:
    """The finished plays, read from the journal on each call (read-only,
    beside the loop's own connection: WAL lets a reader in)."""
    from companion.runtime.journal import Journal

    def plays() -> list[dict[str, Any]]:
        if not path.exists():
            return []
        journal = Journal(path, readonly=True)
        try:
            return journal.plays()
        finally:
            journal.close()
    return plays


def listen_socket(host: str, port: int) -> socket.socket:
    """The pages' socket, bound and listening; raises ``OSError`` (a taken
    port, an address this machine does not have).  The daemon binds it before
    building the table: pages that cannot be served must be ``off``, or a game
    that needs the phones would wait for pairings that can never come."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a port in TIME_WAIT is free
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def start_web(app: App, cfg: dict[str, Any], host: str, port: int, *, virtual: Any = None,
              sock: socket.socket | None = None) -> Any:
    """Serve the pages for ``app`` (its loop made with a ``WatchedReadSide``);
    ``virtual``: the simulated reader, whose components the page offers as buttons;
    ``sock``: bound already (``listen_socket``)."""
    from companion.app import catalogue
    from web.server import WebServer

    games = tuple(app.loop.table.games.values())  # the table's games: what the pages may name
    narrator = catalogue.narrator(games)
    lines = narrator.lines
    extra = None
    if virtual is not None:
        from companion.games import component_sets
        from web.virtual import virtual_routes

        components = [i for ids in component_sets(games).values() for i in ids]
        extra = virtual_routes(virtual, app.panel, components)
    server = WebServer(app.loop.read_side, app.loop.inbox, plays_reader(app.journal.path), host, port,
                       pair_window_s=cfg["web"]["pair_window_s"], address=address(host, port), extra=extra,
                       store=app.journal.path.parent / "pages.json",  # the pairings outlive a restart
                       games=catalogue.page_games(lines, games), export=catalogue.export_games(lines, games),
                       hosts=cfg["web"]["hosts"], narrate=narrator, clock=app.loop.clock.wall)
    app.attach("web", server)  # it hears every audience, and sends on only what each page may see (web/server.py)
    server.start(sock=sock)

    def recall() -> None:  # the line in force, said before the pages were up (a restart's)
        line = app.loop.out.instruction()
        server.recall(line.text if line else None, line.key if line else None)
    app.loop.submit(recall)
    app.loop.submit(Aside("web.address", spoken_address(host, port if port else server.port)))
    return server


# ------------------------------------------------------------ companion web
def configure_parser(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="web_command", required=True, metavar="qr")
    qr = sub.add_parser("qr", help="write a card with the pages' QR code, to print and lay on the table")
    qr.add_argument("-o", "--output", type=Path, required=True, help="the SVG file to write")
    qr.add_argument("--url", help="the address to encode (default: from `web: listen:` and this machine's name)")
    qr.add_argument("--config", action="append", type=Path, default=[], help="a settings file")


def pages_url(cfg: dict[str, Any], url: str | None = None) -> str:
    """The pages' address for a printed card: ``url`` if given (checked:
    ValueError says why it cannot be one), else from `web: listen:` and this
    machine's name."""
    from web.qr import url_problem

    if url is not None:
        if problem := url_problem(url):
            raise ValueError(problem)
        return url.strip()
    return address(*(resolve_listen(cfg) or ("0.0.0.0", PI_PORT)))


def run(args: argparse.Namespace) -> int:
    from web.qr import card_svg

    cfg = configmod.for_command(args)
    try:
        url = pages_url(cfg, args.url)
    except ValueError as e:
        print(f"companion web qr: {e}", file=sys.stderr)
        return 2
    args.output.write_text(card_svg(url, cfg["language"]), encoding="utf-8")  # its words in both languages
    print(f"wrote {args.output}: a QR card for {url}", file=sys.stderr)
    return 0


__all__ = ["address", "listen_socket", "resolve_listen", "start_web", "state_dir"]
