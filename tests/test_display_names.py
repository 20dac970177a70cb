"""A table names its players: a paired page may set its player's
display name — journaled ``named`` housekeeping, checked by the table, refused
with the table's sentence (en, ja) and nothing changed; the finished play's
record (BG Stats' export) and the MQTT ``play`` message carry it from the next
game on, while the engines keep addressing seats by the config's names; it
survives a restart (the journal's replay) and a new evening forgets it."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_audiences import Auction
from test_mqtt_link import Listener, delivered, online
from test_mqtt_link import table as mqtt_table
from test_web import pair, seat_auction, token

from companion.app.cli import main
from companion.app.live_table import Feed, LiveTable
from companion.app.simulate import load_script
from companion.core import display_names
from companion.core.events import Housekeeping, Refusal
from companion.core.table import NAMED, PAGES_ON
from companion.core.table import Table as CoreTable
from conftest import Table, example_script

ROOT = Path(__file__).resolve().parent.parent
SEVEN = example_script("seven-knights.yaml")


def named(seat: str, name: str) -> Housekeeping:
    return Housekeeping(NAMED, {"seat": seat, "name": name})


def inputs(state: Path) -> int:
    db = sqlite3.connect(state / "journal.sqlite")
    try:
        return int(db.execute("SELECT count(*) FROM inputs").fetchone()[0])
    finally:
        db.close()


def seats(client: httpx.Client) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in client.get("/api/table").json()["seats"]}


# ------------------------------------------------------------------ the web
@pytest.fixture
def live(tmp_path: Path) -> Any:
    t = LiveTable(tmp_path, games={"auction": Auction}, web={"pair_window_s": 5})
    yield t
    t.close()


def test_an_unpaired_phone_cannot_name_a_seat(live: LiveTable) -> None:
    seat_auction(live)
    with httpx.Client(base_url=live.url) as c:
        r = c.post("/api/name", json={"name": "Aki"}, headers={"X-CSRF-Token": token(c)})
        assert r.status_code == 403 and r.json()["error"] == "not_paired"
        assert "called" not in seats(c)["red"]


def test_a_paired_page_names_its_player_and_only_its_page_hears_the_verdict(live: LiveTable,
                                                                            tmp_path: Path) -> None:
    seat_auction(live)
    with httpx.Client(base_url=live.url) as red, httpx.Client(base_url=live.url) as blue:
        assert pair(live, red, "red").status_code == 200
        assert pair(live, blue, "blue").status_code == 200
        theirs, public = Feed(live.url + "/api/me/events", blue.cookies), Feed(live.url + "/api/events")
        before = inputs(tmp_path)
        r = red.post("/api/name", json={"name": "  Aki Tanaka "}, headers={"X-CSRF-Token": token(red)})
        assert r.status_code == 200 and r.json()["ok"] is True
        assert seats(red)["red"]["called"] == "Aki Tanaka"  # public: chosen to be shown; kept without the spaces
        assert seats(red)["red"]["name"] == "red"  # the engines' name for the seat is the config's still
        assert inputs(tmp_path) == before + 1  # journaled
        said = [e for e in live.events if e.get("input") == "name"]
        assert [e["event"] for e in said] == ["accepted"]
        for feed in (theirs, public):  # no one else hears of the verdict (the public page sees the name alone)
            assert not [d for k, d in feed.drain() if k == "event" and d.get("input") == "name"]
            feed.close()


@pytest.mark.parametrize("name, key", [
    ("x" * 25, "display.refuse.too_long"),
    ("Ak\u0007i", "display.refuse.control"),
    ("Aki\u202e", "display.refuse.control"),  # a right-to-left override: formatting, not a letter
    ("line\nbreak", "display.refuse.control"),
    ("   ", "display.refuse.empty"),
    ("Blue", "display.refuse.taken"),  # another seat's id, in any case
    ("ＧＲＥＥＮ", "display.refuse.taken"),  # or width: a seat not at the table tonight
    ("bo", "display.refuse.taken"),  # blue's display name
])
def test_a_refused_name_changes_nothing_and_the_page_shows_the_tables_sentence(
        live: LiveTable, tmp_path: Path, name: str, key: str) -> None:
    seat_auction(live)
    with httpx.Client(base_url=live.url) as red, httpx.Client(base_url=live.url) as blue:
        assert pair(live, red, "red").status_code == 200
        assert pair(live, blue, "blue").status_code == 200
        assert blue.post("/api/name", json={"name": "Bo"}, headers={"X-CSRF-Token": token(blue)}).json()["ok"]
        tok = token(red)
        assert red.post("/api/name", json={"name": "Aki"}, headers={"X-CSRF-Token": tok}).json()["ok"]
        before, journaled = seats(red), inputs(tmp_path)
        r = red.post("/api/name", json={"name": name}, headers={"X-CSRF-Token": tok})
        assert r.status_code == 409 and r.json()["key"] == key
        assert r.json()["text"] and r.json()["text"] != r.json()["reason"]  # the table's sentence, not the reason
        assert seats(red) == before and inputs(tmp_path) == journaled  # nothing changed, nothing journaled
        assert red.post("/api/name", json={"name": 7}, headers={"X-CSRF-Token": tok}).status_code == 400


def test_a_refusal_is_in_the_tables_language(live: LiveTable) -> None:
    live.tap("lang/ja")
    seat_auction(live)
    with httpx.Client(base_url=live.url) as red:
        assert pair(live, red, "red").status_code == 200
        r = red.post("/api/name", json={"name": "x" * 30}, headers={"X-CSRF-Token": token(red)})
        assert r.status_code == 409 and r.json()["text"] == "名前が長すぎます。24文字までです。"


# ----------------------------------------------- the play's record and MQTT
def test_the_play_record_and_the_mqtt_play_carry_the_display_name(broker: Any, tmp_path: Path) -> None:
    """Seven Knights' example with red's page naming red before the game and
    blue's naming blue mid-game: red's record name is the display name (the
    export and the broker's play alike), blue's is still blue (a game in
    progress keeps its players), and every line of the game is as without names."""
    script = load_script(SEVEN)
    listener = Listener(broker)
    t = mqtt_table(tmp_path, broker.address, script)
    try:
        listener.wait_for(online(listener))
        t.do("name", named("red", "Aki"))
        steps = [(k, v) for _, k, v in script.steps]
        for n, (kind, value) in enumerate(steps):
            t.do(kind, value)
            if n == len(steps) // 2:
                t.do("name", named("blue", "Bo"))
        listener.wait_for(delivered(listener, t), pump=t)
        [sent] = listener.json("play")
        [record] = t.sim.app.journal.plays()
        names = {p["seat"]: p["name"] for p in sent["players"]}
        assert names["red"] == "Aki" and names["blue"] == "blue"
        assert [p["name"] for p in sent["play"]["players"]] == [p["name"] for p in record["players"]]
        assert {p["sourcePlayerId"]: p["name"] for p in record["players"]}["red"] == "Aki"
        assert not any("Aki" in json.dumps(e) for e in t.events if e["event"] in ("say", "tell", "game_over"))
        assert t.sim.loop.table.state.called == {"red": "Aki", "blue": "Bo"}
    finally:
        t.close()
        listener.close()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["scores", "--state", str(tmp_path), "--export", "json"]) == 0
    [exported] = json.loads(out.getvalue())["plays"]
    assert {p["sourcePlayerId"]: p["name"] for p in exported["players"]}["red"] == "Aki"


def test_the_same_game_as_without_names_but_for_the_record(tmp_path: Path) -> None:
    """The engines address seats as before: the log of the example, names set
    before it, is the log without them less the names' own verdicts."""
    script = load_script(SEVEN)
    logs = []
    for run, first in enumerate(([], [named("red", "Aki"), named("green", "Gin")])):
        t = Table(tmp_path / str(run), draws=script.draws, **script.overrides)
        try:
            for h in first:
                t.do("name", h)
            for _, kind, value in script.steps:
                t.do(kind, value)
            logs.append([e for e in t.events if e.get("input") != "name"])
        finally:
            t.close()
    assert logs[0] == logs[1]


# ------------------------------------------------------- restart and evening
def test_a_display_name_survives_a_restart_and_reaches_the_record(tmp_path: Path) -> None:
    script = load_script(SEVEN)
    steps = [(k, v) for _, k, v in script.steps]
    half = len(steps) // 2
    t = Table(tmp_path, draws=script.draws, **script.overrides)
    try:
        t.do("name", named("red", "Aki"))
        for kind, value in steps[:half]:
            t.do(kind, value)
    finally:
        t.close()
    t = Table(tmp_path, draws=script.draws, **script.overrides)  # the journal replayed
    try:
        assert t.sim.loop.table.state.called == {"red": "Aki"}
        for kind, value in steps[half:]:
            t.do(kind, value)
        [record] = t.sim.app.journal.plays()
        assert {p["sourcePlayerId"]: p["name"] for p in record["players"]}["red"] == "Aki"
    finally:
        t.close()


def test_a_new_evening_forgets_display_names_with_the_pairings() -> None:
    table = CoreTable({}, pages=PAGES_ON)
    table.handle(Housekeeping("paired", {"seat": "red"}))
    table.handle(named("red", "Aki"))
    assert table.state.called == {"red": "Aki"}
    table.handle(Housekeeping("new-evening"))
    assert table.state.called == {} and table.state.paired == []
    with pytest.raises(Refusal) as refused:  # and red's next phone pairs before it names red
        table.handle(named("red", "Aki"))
    assert refused.value.key == "display.refuse.not_paired"
    assert table.state.called == {}


def test_a_seat_may_keep_or_change_its_own_name() -> None:
    table = CoreTable({}, names={"red": "aki"})
    table.handle(named("red", "Aki"))  # its own configured name, capitalised: its own
    table.handle(named("red", "Akira"))
    assert table.state.called == {"red": "Akira"}
    with pytest.raises(Refusal):
        table.handle(named("blue", "AKIRA"))
    with pytest.raises(Refusal):
        table.handle(named("blue", "Aki"))  # red's configured name
    with pytest.raises(Refusal):
        table.handle(named("player/blue", "Bo"))  # not a seat id


def test_a_record_never_names_one_person_twice() -> None:
    """A display name chosen before the config gave another seat that name
    falls back to the seat's engine name in the record."""
    got = display_names.record_names(["red", "blue"], {"red": "red", "blue": "aki"}, {"red": "AKI"})
    assert got == {"red": "red", "blue": "aki"}
    assert display_names.record_names(["red", "blue"], {"red": "red", "blue": "blue"},
                                      {"red": "Aki", "blue": "Bo"}) == {"red": "Aki", "blue": "Bo"}


# ------------------------------------------------------------------ a browser
def test_the_name_form_sends_its_field_alone_on_enter(tmp_path: Path) -> None:
    """On red's page during the bidding: Enter in the name field sends the name
    and not the bid typed beside it; an empty name is refused on the page, in
    its words, and nothing is sent."""
    import shutil
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which("/usr/bin/chromium"):
        pytest.skip("Debian's chromium is not installed")
    expect = sync_api.expect
    live = LiveTable(tmp_path, games={"auction": Auction}, web={"pair_window_s": 5})
    try:
        seat_auction(live)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            try:
                page = browser.new_context(viewport={"width": 360, "height": 740}).new_page()
                page.goto(live.url + "/")
                page.click("#seats button[data-seat=red]")
                expect(page.locator("#status")).to_contain_text("Tap your player card")
                live.await_pairing('red')  # the page asked; the table has heard it
                page.click('#components button[data-tap="player/red"]')  # the virtual reader
                expect(page.locator("#me")).to_be_visible()
                page.click("#name-section summary")  # folded during a game (the step's controls first): opened
                expect(page.locator("label[for=name-input]")).to_have_text("Your name for the scores")
                page.fill("#submits input[name=bid]", "3")
                journaled = inputs(tmp_path)
                page.press("#name-input", "Enter")  # empty: the page's refusal, nothing sent
                expect(page.locator("#status")).to_have_text("Type a name first.")
                assert inputs(tmp_path) == journaled
                page.fill("#name-input", "Aki")
                page.press("#name-input", "Enter")
                expect(page.locator("#status")).to_contain_text("Aki")
                expect(page.locator("#name-now")).to_have_text("Now: Aki")
                expect(page.locator("#me-seat")).to_contain_text("Aki")
                with httpx.Client(base_url=live.url) as c:
                    table = c.get("/api/table").json()
                assert {s["id"]: s.get("called") for s in table["seats"]} == {"red": "Aki", "blue": None}
                assert table["play"]["bids_in"] == 0  # the bid typed beside it was not sent
                assert page.input_value("#submits input[name=bid]") == "3"  # and is still there
                # Every page names the player with it beside the seat's colour (the TV: test_web_tv_board).
                public = browser.new_context(viewport={"width": 360, "height": 740}).new_page()
                public.goto(live.url + "/")
                expect(public.locator("#scores")).to_contain_text("Red · Aki")
                page.fill("#name-input", "blue")
                page.press("#name-input", "Enter")  # the table's refusal, in its words
                expect(page.locator("#status")).to_have_text("Blue is another seat's name: choose one of your own.")
            finally:
                browser.close()
    finally:
        live.close()


def test_by_night_a_name_is_refused_to_its_page_alone_and_nothing_moves(tmp_path: Path) -> None:
    """One Night's night: the page is told "not during the night"; nothing is
    journaled, said, lit or shown (the public view is the night's, unchanged)."""
    script = load_script(example_script("one-night.yaml"))
    t = Table(tmp_path, draws=script.draws, **script.overrides)
    try:
        table = t.sim.loop.table
        for _, kind, value in script.steps:
            t.do(kind, value)
            if table.eyes_closed:
                break
        assert table.eyes_closed
        view, journaled, mark = table.public_view(), inputs(tmp_path), t.mark()
        t.do("name", named("red", "Aki"))
        assert [(e["event"], e.get("key")) for e in t.since(mark)] == [("rejected", "refuse.night")]
        assert table.public_view() == view and inputs(tmp_path) == journaled and table.state.called == {}
    finally:
        t.close()
