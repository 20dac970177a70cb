"""A phone whose seat back took off the table, in a real browser (Playwright,
Debian's chromium): back undoes the gathering's last tap, a seat first, and
the phone paired with that seat keeps its pairing (tapped again, it sits
again) — but it never says "Your seat: Purple" while Purple is not seated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from test_web_accessibility import PHONE, Page
from test_web_browser import browser, pytestmark, sync_api  # noqa: F401  (the fixture and the chromium skip)
from test_web_present_browser import closed, page_of, table_of

SEATS = ("red", "blue", "green", "yellow", "purple")
DECK = ("rules/ultimate", "onw/hunter/1", "onw/werewolf/1", "onw/werewolf/2", "onw/seer/1", "onw/thief/1",
        "onw/troublemaker/1", "onw/villager/1", "onw/drunk/1", "onw/tanner/1")  # one card too many for 5


def test_finding_a_phone_whose_seat_back_took_off_does_not_say_it_is_seated(browser: Any,  # noqa: F811
                                                                             tmp_path: Path) -> None:
    expect = sync_api.expect
    script = tmp_path / "long-deck.yaml"
    script.write_text(yaml.safe_dump({"seed": 3, "steps": [
        {"tap": "game/one-night"}, *({"tap": card} for card in DECK), *({"tap": f"player/{s}"} for s in SEATS),
        {"press": "next"}, {"press": "back"}]}), encoding="utf-8")
    table = table_of(browser, tmp_path, "one-night", "en", script, purple=Page("purple", "/", PHONE, seat="purple"))
    try:
        for kind, value in table.steps[:-1]:
            table.step(kind, value)
        head = page_of(table, "purple").locator("#me-head")
        expect(head).to_have_text("Your seat: Purple")
        table.step(*table.steps[-1])  # back: purple's tap undone
        assert "purple" not in {s["id"] for s in table.sim.loop.read_side.public()["seats"]}
        head = page_of(table, "purple").locator("#me-head")
        expect(head).not_to_contain_text("Your seat")
        expect(head).to_contain_text("Purple")  # which card sits it again
    finally:
        closed(table)
