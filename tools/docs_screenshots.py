"""Pictures of the docs site for docs/develop/docs-site.md, on purpose: the site is built
(--strict, into a temporary folder), served on loopback, and photographed in Debian's chromium
(Playwright) — the home page, and a game's guide in English and in Japanese.

    .venv/bin/python tools/docs_screenshots.py
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "develop"
SHOTS = {"site-home-en.png": "", "site-guide-en.png": "play/seven-knights/", "site-guide-ja.png": "ja/play/seven-knights/"}


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *_: object) -> None:  # the pictures' names are the output
        pass


def main() -> int:
    with tempfile.TemporaryDirectory() as site:
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", site],
                       cwd=ROOT, check=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
        handler = functools.partial(Quiet, directory=site)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium")
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                for name, path in SHOTS.items():
                    page.goto(f"http://127.0.0.1:{server.server_port}/{path}")
                    page.wait_for_load_state("networkidle")
                    page.screenshot(path=str(OUT / name))
                    print(f"docs/develop/{name}")
                browser.close()
        finally:
            server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
