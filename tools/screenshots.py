"""Refresh the README's screenshots of the scoreboard (docs/web/*.png) on purpose.

The browser tests write their screenshots to the artefacts directory
(``$COMPANION_ARTIFACTS/web/``, by default ``artifacts/web/``) so that a test run
never changes the checkout; this runs those tests with the artefacts directory
pointed at ``docs/``, so they land in ``docs/web/`` where the README shows them.

    .venv/bin/python tools/screenshots.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    env = {**os.environ, "COMPANION_ARTIFACTS": str(ROOT / "docs")}
    test = "tests/test_web_browser.py::test_scoreboard_screenshots_phone_and_tv"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
                          cwd=ROOT, env=env, check=False)
    if done.returncode == 0:
        shots = sorted((ROOT / "docs" / "web").glob("scoreboard-*.png"))
        print("refreshed " + ", ".join(p.relative_to(ROOT).as_posix() for p in shots))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
