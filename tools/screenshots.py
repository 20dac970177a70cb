"""Refresh the pictures of the pages in docs/web/ (listed in docs/web/README.md), on purpose.

Each example script (companion/games/*/examples/) is played on a table on simulated hardware and
virtual time serving its pages — the same table tests/test_web_accessibility.py
audits — and at the moments below a page is photographed in Debian's chromium
(Playwright), in English and in Japanese: fixed scripts, seeds and draws,
fixed viewports, the browser's clock and time zone fixed to the table's (its
virtual wall clock), so the same checkout makes the same pictures.  A page the
server does not have (404) is skipped with a note, not an error; so is a moment
the script never reaches.

    .venv/bin/python tools/screenshots.py            # every picture
    .venv/bin/python tools/screenshots.py night tv   # the ones whose names start so
"""

from __future__ import annotations

import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "web"
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_web_accessibility import ADDRESS, GAMES, PHONE, Page, Table, open_page  # noqa: E402  (the audited table)

HD = {"width": 1920, "height": 1080}
DESK = {"width": 1280, "height": 900}
LANGS = ("en", "ja")
# rasterised the same each time: software, one colour profile, no hinting or subpixel text
STEADY = ("--disable-gpu", "--force-color-profile=srgb", "--font-render-hinting=none", "--disable-lcd-text")


@dataclass(frozen=True)
class Shot:
    name: str  # docs/web/<name>-<lang>.png
    game: str  # the example played (GAMES)
    page: Page
    when: Callable[[Table], bool]  # the first moment of the script it is taken at
    full_page: bool = False


def _step(table: Table) -> tuple[Any, ...]:
    engine = table.sim.loop.table.engine
    if engine is None:
        return (table.sim.loop.table.state.phase,)
    return (getattr(engine.state, "round", None), engine.state.step, len(getattr(engine.state, "opened", ())))


def over(table: Table) -> bool:  # the game over, its result kept on the pages
    return table.sim.loop.table.state.phase == "idle" and bool(table.sim.loop.read_side.public().get("result"))


def before_the_end(table: Table) -> bool:  # the last round scored, the game not yet over
    return table.at == len(table.steps) - 1


def phase_is(name: str) -> Callable[[Table], bool]:  # the table's own phase (pairing: waiting for the phones)
    return lambda table: table.sim.loop.table.state.phase == name


def step_is(name: str, opened: int | None = None) -> Callable[[Table], bool]:
    def when(table: Table) -> bool:
        at = _step(table)
        return len(at) == 3 and at[1] == name and (opened is None or at[2] == opened)
    return when


SHOTS = (
    Shot("scoreboard-phone", "seven-knights", Page("scoreboard-phone", "/", PHONE), before_the_end, full_page=True),
    Shot("scoreboard-tv", "seven-knights", Page("scoreboard-tv", "/", HD), before_the_end),
    *(Shot(f"results-{game}", game, Page(f"results-{game}", "/", DESK), over, full_page=True) for game in GAMES),
    Shot("night", "one-night", Page("night", "/", PHONE, seat="red"), step_is("night")),
    Shot("tv-discussion", "one-night", Page("tv-discussion", "/tv", HD), step_is("discussion")),
    Shot("tv-cave", "demagogos", Page("tv-cave", "/tv", HD), step_is("cave", opened=1)),
    Shot("tv-pairing", "demagogos", Page("tv-pairing", "/tv", HD), phase_is("pairing")),
    Shot("tv-results", "seven-knights", Page("tv-results", "/tv", HD), over),
    Shot("tv-round", "seven-knights", Page("tv-round", "/tv", HD), before_the_end),
    Shot("tv-battle", "madness-hour", Page("tv-battle", "/tv", HD), step_is("battle")),
    Shot("tv-reveal", "one-night", Page("tv-reveal", "/tv", HD), step_is("reveal")),
    Shot("dt-public", "demagogos", Page("dt-public", "/", DESK), step_is("cave", opened=0)),
    Shot("dt-private", "demagogos", Page("dt-private", "/", PHONE, seat="red"), step_is("cave", opened=0)),
    Shot("phone", "madness-hour", Page("phone", "/", PHONE, seat="red"), step_is("battle"), full_page=True),
)


def served(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5):
            return True
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return False
        raise


def play(chromium: Any, game: str, lang: str, shots: list[Shot], state: Path) -> list[Path]:
    """``game``'s example played in ``lang``; each shot taken at its moment."""
    contexts = {s.name: chromium.new_context(viewport=s.page.viewport, timezone_id="UTC",
                                             locale="ja-JP" if lang == "ja" else "en-GB") for s in shots}
    pages = {s.name: (s.page, open_page(contexts[s.name], s.page)) for s in shots}
    table = Table(pages, state, GAMES[game], lang, address=ADDRESS)
    made: list[Path] = []
    try:
        due = list(shots)
        for s in list(due):
            if not served(table.url + s.page.path):
                print(f"skipped {s.name}-{lang}.png: {s.page.path} answers 404 (not served by this checkout)")
                due.remove(s)

        def take_due(table: Table) -> None:
            for s in [s for s in due if s.when(table)]:
                due.remove(s)
                made.append(take(table, s, lang))

        table.at_pairing = take_due  # the phones pair within the step that asks for them
        for kind, value in table.steps:
            if not due:
                break
            take_due(table)
            table.step(kind, value)
        for s in due:
            if s.when(table):
                made.append(take(table, s, lang))
            else:
                print(f"not taken: {s.name}-{lang}.png (the script never got there)")
    finally:
        table.close()
        for c in contexts.values():
            c.close()
    return made


def take(table: Table, s: Shot, lang: str) -> Path:
    page = table.pages[s.name][1]
    table.caught_up(s.page, page)
    # the page's clock is the table's: a countdown, a date shown, the same each time; loaded
    # again on it, so the table's clock the page came with and its own agree (no skew counted)
    page.clock.set_fixed_time(table.sim.clock.wall())
    page.reload()
    table.caught_up(s.page, page)
    page.evaluate("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    page.wait_for_timeout(1200)  # a countdown's tick, fonts
    path = OUT / f"{s.name}-{lang}.png"
    page.screenshot(path=str(path), full_page=s.full_page, animations="disabled", caret="hide")
    return path


def main(argv: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    wanted = [s for s in SHOTS if not argv or any(s.name.startswith(a) for a in argv)]
    if not wanted:
        print("no such picture: " + ", ".join(argv) + "; the pictures: " + ", ".join(s.name for s in SHOTS))
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []
    with sync_playwright() as p, tempfile.TemporaryDirectory(prefix="companion-shots-") as tmp:
        chromium = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", *STEADY])
        try:
            for lang in LANGS:
                for game in GAMES:
                    shots = [s for s in wanted if s.game == game]
                    if shots:
                        made += play(chromium, game, lang, shots, Path(tmp) / f"{game}-{lang}")
        finally:
            chromium.close()
    print("refreshed " + ", ".join(p.relative_to(ROOT).as_posix() for p in made))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
