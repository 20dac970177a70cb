"""One name per seat: a seat's colour is the same word in speech, on the
board and on every phone — the ``name.<colour>`` lines (capitalised in
English, as a name is: "Yellow"), in Japanese the table's words (ピンク,
灰色 for the two player cards beyond the eight colours, never the raw id).
The phone's page holds no second copy of them: it is given the server's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
from test_web_headline import DT6, play_until, simulation

from companion.app.catalogue import line_folders
from companion.app.live_table import LiveTable
from voice.lines import Narrator

ROOT = Path(__file__).resolve().parent.parent
COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")
EXTRA = {"pink": ("Pink", "ピンク"), "grey": ("Grey", "灰色")}


def test_a_seat_is_one_capitalised_name_in_english_speech_and_pages(tmp_path: Path) -> None:
    """Speech said "yellow" where the board and the phones showed "Yellow"."""
    narrate = Narrator(line_folders())
    for colour in COLOURS:
        assert narrate.render(f"name.{colour}", {}, "en").text == colour.capitalize()
    sim, s = simulation(tmp_path, DT6)
    try:
        def two_bids(sim) -> bool:  # type: ignore[no-untyped-def]
            play = sim.loop.read_side.public().get("play") or {}
            return play.get("step") == "role_auction" and len(play.get("bids_in", [])) == 2
        play_until(sim, s, two_bids)
        text = sim.loop.read_side.public()["headline_text"]
        assert text == "Waiting for Green, Yellow, Purple and Orange. 2 of 6 bids are in.", text
    finally:
        sim.close()


def test_the_cards_beyond_the_colours_have_their_names_in_both_languages() -> None:
    """pink and grey were said and shown as their ids: "pink" in a Japanese line."""
    narrate = Narrator(line_folders())
    for colour, (en, ja) in EXTRA.items():
        assert narrate.render(f"name.{colour}", {}, "en").text == en
        assert narrate.render(f"name.{colour}", {}, "ja").text == ja
        said = narrate.render("headline.waiting", {"players": ["red", colour]}, "ja").text
        assert colour not in said and ja in said, said


def test_the_phone_is_given_the_servers_names_and_keeps_no_copy(tmp_path: Path) -> None:
    """app.js kept its own colour words beside the lines (a test held the two
    copies equal); the page now comes with the server's, as the TV does."""
    app = (ROOT / "web" / "static" / "app.js").read_text(encoding="utf-8")
    assert "colours" not in app and "黄色" not in app and '"Yellow"' not in app
    narrate = Narrator(line_folders())
    live = LiveTable(tmp_path)
    try:
        with httpx.Client(base_url=live.url) as c:
            html = c.get("/").text
        block = re.search(r'<script type="application/json" id="names">(.*?)</script>', html, re.S)
        assert block, html[:400]
        names = json.loads(block.group(1))
        for lang in ("en", "ja"):
            for colour in (*COLOURS, *EXTRA):
                assert names[lang][colour] == narrate.render(f"name.{colour}", {}, lang).text
    finally:
        live.close()
