"""The venue's board in a real browser (Playwright driving Debian's chromium)
at a TV's size: a table's state change reaches the page over SSE, a play
reaches the league, in English and in Japanese; axe finds nothing to fix.
A screenshot goes to the artefacts directory ($COMPANION_ARTIFACTS/venue/)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from test_venue_schema import play
from test_web_browser import SHOTS as WEB_SHOTS
from test_web_browser import TV, browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)
from venue_kit import Table, state, wait

from venue import schema
from venue.app import Venue

SHOTS = WEB_SHOTS.parent / "venue"


def test_the_board_follows_a_table_and_the_league(browser: Any, broker: Any, tmp_path: Path) -> None:  # noqa: F811
    expect = sync_api.expect
    SHOTS.mkdir(parents=True, exist_ok=True)
    venue = Venue(tmp_path / "v", (broker.host, broker.port), ("127.0.0.1", 0), ident="venue-browser",
                  games=schema.names(), since=0.0, report=lambda line: None).start()
    t1, t2 = Table(broker, "t1"), Table(broker, "t2")
    try:
        wait(venue.ear.subscribed.is_set, what="the subscription")
        t1.send("companion/t1/status", b"online", retain=True)
        t1.send("companion/t1/state", state("t1", game="one-night", step="discussion",
                                            deadline=time.time() + 600), retain=True)
        t2.send("companion/t2/status", b"offline", retain=True)
        wait(lambda: len(venue.store.tables()) == 2, what="both tables")
        pages = {}
        for lang in ("en", "ja"):
            page = browser.new_context(viewport=TV).new_page()
            page.goto(f"{venue.url}/?lang={lang}")
            pages[lang] = page
        en, ja = pages["en"], pages["ja"]
        expect(en.locator("#table-t1 dd.game")).to_have_text("One Night Werewolf")
        expect(en.locator("#table-t1 dd.step")).to_have_text("discussion")
        expect(en.locator("#table-t1 dd.timer")).to_have_text(re.compile(r"^(10:00|[89]:[0-5]\d)$"))  # counting down
        first = en.locator("#table-t1 dd.timer").inner_text()
        expect(en.locator("#table-t1 dd.timer")).not_to_have_text(first)
        expect(en.locator("#table-t2 .status")).to_have_text("○ Offline")  # in words, not by colour alone
        expect(ja.locator("#table-t1 dd.game")).to_have_text("ワンナイト人狼")
        expect(ja.locator("#table-t1 dd.step")).to_have_text("議論")
        # the change: over SSE, no reload
        t1.send("companion/t1/state", state("t1", game="one-night", step="vote", waiting_for=["aki", "ben"]),
                retain=True)
        expect(en.locator("#table-t1 dd.step")).to_have_text("the vote")
        expect(en.locator("#table-t1 dd.turn")).to_have_text("aki, ben")
        expect(ja.locator("#table-t1 dd.step")).to_have_text("投票")
        t1.send("companion/t1/state", state("t1", game="one-night", step="night", night=True), retain=True)
        expect(en.locator("#table-t1 dd.step")).to_have_text("Night: eyes closed")
        t1.send("companion/t1/play", play())
        expect(en.locator("#season tbody tr")).to_have_count(2)
        expect(en.locator("#season tbody tr").first.locator("th")).to_have_text("aki")
        expect(ja.locator("#tonight caption")).to_have_text("今夜（勝利数）")
        en.screenshot(path=str(SHOTS / "board-tv-en.png"))
        ja.screenshot(path=str(SHOTS / "board-tv-ja.png"))
        # a café's dozen tables on one screen, none below the TV's edge, the text still large
        for n in range(3, 13):
            t1.send(f"companion/t{n}/state", state(f"t{n}", game="madness-hour", step="vote",
                                                  waiting_for=["hana", "ichi"]), retain=True)
        expect(en.locator("article.table")).to_have_count(12)
        expect(en.locator("article.table").last).to_have_id("table-t12")  # t2 before t10: in the tables' order
        box = en.locator("#table-t12").bounding_box()
        if box is None or box["y"] + box["height"] > TV["height"]:
            en.screenshot(path=str(SHOTS / "board-tv-12-too-tall.png"), full_page=True)
        assert box is not None and box["y"] + box["height"] <= TV["height"]
        size = en.locator("#table-t12 dd.step").evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
        assert size >= 18
        en.screenshot(path=str(SHOTS / "board-tv-12-en.png"))
        axe = pytest.importorskip("axe_playwright_python.sync_playwright")
        for lang, page in pages.items():
            result = axe.Axe().run(page)
            assert result.violations_count == 0, (lang, result.generate_report())
    finally:
        t1.close()
        t2.close()
        venue.stop()
