"""The pairing gate: a game that needs every player's page
(Demagogos' Trap) starts only once every seat's phone is paired; with the
pages off it is refused at its card; in a table script every seat counts as
paired.  Through the real loop on virtual time, the journal and a restart;
and the page server's pairings kept across that restart (web/pairing.py)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from companion.app import config
from companion.app.catalogue import narrator as table_narrator
from companion.app.simulate import Simulation
from companion.core.events import Housekeeping, Press, Refusal, Say, Tap
from companion.core.messages import Command, PairRequest, seat_audience
from companion.core.table import PAGES_OFF, PAGES_ON, PAIRING, PLAYING, Table
from companion.games import ENGINES
from web.pairing import COOKIE_AGE_S, Pairings

ROOT = Path(__file__).resolve().parent.parent
SIX = ("red", "blue", "green", "yellow", "purple", "orange")


class Gate:
    """A simulated daemon with the pages on: the phones pair by PairRequest
    (what the page's server sends) and the card's tap."""

    def __init__(self, state: Path, pages: str = PAGES_ON, lang: str = "en") -> None:
        self.state = state
        self.events: list[dict[str, Any]] = []
        self.commands: list[Command] = []
        cfg = config.load([ROOT / "config" / "companion.yaml"], {"language": lang})
        self.sim = Simulation(cfg, state, self.events.append, pages=pages)
        self.sim.app.router.subscribe(lambda m: self.commands.append(m) if isinstance(m, Command) else None)

    def tap(self, *identities: str) -> None:
        for i in identities:
            self.sim.step("tap", i)

    def pair(self, seat: str) -> None:
        self.sim.loop.submit(PairRequest(seat, f"nonce-{seat}"))
        self.sim.loop.pump()
        self.tap(f"player/{seat}")

    def says(self, since: int = 0) -> list[dict[str, Any]]:
        return [e for e in self.events[since:] if e["event"] == "say"]

    def seat_down(self) -> None:
        self.tap("game/demagogos", *(f"player/{s}" for s in SIX))

    def close(self) -> None:
        self.sim.close()


@pytest.fixture
def gate(tmp_path: Path) -> Any:
    g = Gate(tmp_path)
    yield g
    g.close()


def test_demagogos_waits_for_every_phone_says_who_is_missing_and_starts_with_the_last(gate: Gate) -> None:
    gate.seat_down()
    mark = len(gate.events)
    gate.sim.step("press", "next")
    table = gate.sim.loop.table
    assert table.state.phase == PAIRING and table.engine is None
    boxes, needed = gate.says(mark)  # the boxes to lay out while the phones pair, then who
    assert (boxes["key"], boxes["text"]) == ("dt.pairing.boxes", "Demagogos' Trap: lay out 7 boxes, numbered 1 to 7, "
                                                                 "while the phones pair.")
    assert needed["key"] == "pairing.needed"
    assert needed["text"].endswith("Still to pair: Red, Blue, Green, Yellow, Purple and Orange.")
    for n, seat in enumerate(SIX[:-1], 1):
        mark = len(gate.events)
        gate.pair(seat)
        keys = [s["key"] for s in gate.says(mark)]
        assert keys == ["pairing.tap_card", "pairing.done", "pairing.missing"], seat
        assert table.unpaired() == [table.name_of(s) for s in SIX[n:]]
        assert [c.args for c in gate.commands if c.name == "paired"][-1] == {"seat": seat, "nonce": f"nonce-{seat}"}
    # next is refused with the reason, changing nothing
    mark = len(gate.events)
    gate.sim.step("press", "next")
    (rejected,) = [e for e in gate.events[mark:] if e["event"] == "rejected"]
    assert rejected["input"] == "next"
    assert gate.says(mark)[-1]["text"] == "Every phone must be paired first. Still to pair: Orange."
    # a card tapped with no phone waiting is refused, and says what to do
    gate.tap("player/orange")
    assert gate.says()[-1]["key"] == "pairing.refuse.page_first"
    assert table.state.phase == PAIRING
    mark = len(gate.events)
    gate.pair("orange")
    keys = [s["key"] for s in gate.says(mark)]
    assert keys[:4] == ["pairing.tap_card", "pairing.done", "pairing.all_in", "dt.start"]
    assert [e["event"] for e in gate.events[mark:]].count("game_started") == 1
    assert table.state.phase == PLAYING and table.engine is not None
    assert table.engine.state.step == "role_auction"


def test_back_while_waiting_returns_to_seating_and_keeps_the_phones(gate: Gate) -> None:
    gate.seat_down()
    gate.pair("red")  # pairing during seating counts too
    gate.sim.step("press", "next")
    assert gate.sim.loop.table.unpaired()[0] == "blue"
    gate.pair("blue")
    gate.sim.step("press", "back")
    table = gate.sim.loop.table
    assert table.state.phase == "gathering" and table.state.seats == list(SIX)
    assert table.state.paired == ["red", "blue"]  # a phone is not a seat: back never unpairs it
    gate.sim.step("press", "next")
    assert table.unpaired() == ["green", "yellow", "purple", "orange"]


def test_the_gate_survives_a_restart_and_says_who_is_still_missing(tmp_path: Path) -> None:
    gate = Gate(tmp_path)
    gate.seat_down()
    gate.sim.step("press", "next")
    for seat in SIX[:4]:
        gate.pair(seat)
    gate.close()
    again = Gate(tmp_path)  # the power came back
    try:
        table = again.sim.loop.table
        assert table.state.phase == PAIRING and table.state.paired == list(SIX[:4])
        assert again.says()[-1]["text"].endswith("Still to pair: Purple and Orange.")
        again.pair("purple")
        again.pair("orange")
        assert table.state.phase == PLAYING
        assert "dt.start" in [s["key"] for s in again.says()]
    finally:
        again.close()


def test_play_again_with_every_phone_paired_starts_at_once() -> None:
    t = Table(ENGINES, pages=PAGES_ON)
    for identity in ("game/demagogos", *(f"player/{s}" for s in SIX)):
        t.handle(Tap(identity))
    for seat in SIX:
        t.handle(Housekeeping("paired", {"seat": seat}))
    out = t.handle(Press("next"))
    assert t.state.phase == PLAYING
    assert [o.key for o in out if hasattr(o, "key")][0] == "dt.start"


def test_finding_back_after_another_game_card_at_the_gate_returns_to_the_gate() -> None:
    """At the gate (Demagogos waiting for its phones) a game card starts another
    seating; ``back`` took that card back to the gate, a phase the seating's
    ``back`` did not declare, and the table raised ``StepError`` — a defect out
    of the loop, not a refusal.  Back returns to the gate, seated and counted;
    back again leaves it for the seating, as at the gate itself."""
    t = Table(ENGINES, pages=PAGES_ON)
    for inp in (Tap("game/demagogos"), *(Tap(f"player/{s}") for s in SIX), Press("next")):
        t.handle(inp)
    assert t.state.phase == PAIRING
    at_the_gate = copy.deepcopy(t.state)
    t.handle(Tap("game/seven-knights"))
    assert t.state.phase == "gathering" and t.state.game == "seven-knights"
    assert [o.key for o in t.handle(Press("back")) if isinstance(o, Say)] == ["undo.done"]
    assert t.state == at_the_gate and t.engine is None
    t.handle(Press("back"))
    assert t.state.phase == "gathering" and t.state.game == "demagogos" and len(t.state.seats) == 6


def test_with_the_pages_off_demagogos_is_refused_at_its_card_other_games_are_not() -> None:
    t = Table(ENGINES, pages=PAGES_OFF)
    with pytest.raises(Refusal) as refused:
        t.handle(Tap("game/demagogos"))
    assert refused.value.key == "pairing.refuse.no_pages"
    assert t.state.phase == "idle"
    narrate = table_narrator()
    en = narrate(refused.value.key, refused.value.params, "en").text
    ja = narrate(refused.value.key, refused.value.params, "ja").text
    assert en == "Demagogos' Trap needs the players' phones: turn the web pages on."
    assert "ウェブページをオン" in ja and "{" not in ja
    t.handle(Tap("game/madness-hour"))  # a game whose page is a convenience, not a need
    assert t.state.phase == "gathering"


def test_a_journal_started_with_the_pages_on_replays_so_under_any_setting(tmp_path: Path) -> None:
    """The pages setting is journaled like the others (``configure``): a game
    started with the phones resumes even if the daemon comes back with the
    web off, and the change applies from the next game."""
    gate = Gate(tmp_path)
    gate.seat_down()
    gate.sim.step("press", "next")
    for seat in SIX:
        gate.pair(seat)
    gate.close()
    off = Gate(tmp_path, pages=PAGES_OFF)
    try:
        table = off.sim.loop.table
        assert table.state.phase == PLAYING and table.engine is not None
        assert table.engine.state.step == "role_auction"
        assert not [e for e in off.events if e["event"] == "error"]
    finally:
        off.close()


def test_a_gate_left_waiting_when_the_daemon_comes_back_with_the_pages_off_returns_to_the_seating(
        tmp_path: Path) -> None:
    """No phone can pair with the pages off (``--web off``, or a port taken):
    the gate would wait for ever.  No game had begun, so the table goes back to
    the seating with the pages off in force, and says why; ``next`` is then
    refused like the card, and the journal replays the same."""
    gate = Gate(tmp_path)
    gate.seat_down()
    gate.pair("red")
    gate.sim.step("press", "next")
    gate.close()
    off = Gate(tmp_path, pages=PAGES_OFF)
    try:
        table = off.sim.loop.table
        assert table.state.phase == "gathering" and table.pages == PAGES_OFF
        assert table.players == list(SIX)  # the seats are kept
        keys = [s["key"] for s in off.says()]
        assert keys[:3] == ["table.unstarted", "pairing.refuse.no_pages", "table.resumed_gathering"]
        mark = len(off.events)
        off.sim.step("press", "next")
        assert [e["event"] for e in off.events[mark:] if e["event"] in ("accepted", "rejected")] == ["rejected"]
        assert off.says(mark)[-1]["key"] == "pairing.refuse.no_pages"
    finally:
        off.close()
    again = Gate(tmp_path, pages=PAGES_OFF)  # replayed: the same table
    try:
        assert again.sim.loop.table.state.phase == "gathering"
    finally:
        again.close()


def test_in_a_script_every_seat_counts_as_paired(table: Any) -> None:
    table.tap("game/demagogos", *(f"player/{s}" for s in SIX))
    table.press("next")
    assert table.sim.loop.table.state.phase == PLAYING
    assert "pairing.needed" not in table.keys()


def test_pairing_lines_in_japanese_name_the_players(tmp_path: Path) -> None:
    gate = Gate(tmp_path, lang="ja")
    try:
        gate.seat_down()
        gate.pair("red")
        gate.sim.step("press", "next")
        assert gate.says()[-1]["text"].endswith("まだの人：青、緑、黄色、紫、オレンジ。")  # red is paired
    finally:
        gate.close()


def test_a_new_games_night_forgets_the_paired_phones() -> None:
    t = Table(ENGINES, pages=PAGES_ON)
    t.handle(Housekeeping("paired", {"seat": "red"}))
    t.handle(Housekeeping("new-evening"))
    assert t.state.paired == []


# -------------------------------------------- the page server's side (web/pairing.py)
def test_pairings_outlive_a_restart_with_their_page_tokens_and_hold_no_secret(tmp_path: Path) -> None:
    store = tmp_path / "pages.json"
    now = [1000.0]  # a monotonic clock (item 17: never the wall clock)
    first = Pairings(store, now=lambda: now[0])
    secret = first.pair("red")
    token = first.csrf_token()
    assert secret not in store.read_text()  # only the digest
    assert store.stat().st_mode & 0o777 == 0o600
    second = Pairings(store, now=lambda: now[0])
    assert second.seat_of(secret) == "red"
    assert second.csrf_ok(token)  # the page open across the restart still posts
    newer = second.pair("red")  # a second phone replaces the first, after a restart too
    third = Pairings(store, now=lambda: now[0])
    assert third.seat_of(secret) is None and third.seat_of(newer) == "red"
    now[0] += COOKIE_AGE_S + 1  # as long as the cookie lives, no longer
    assert third.seat_of(newer) is None and third.paired_seats() == set()


def test_a_damaged_pairings_file_is_an_empty_one(tmp_path: Path) -> None:
    store = tmp_path / "pages.json"
    store.write_text("{not json")
    pairings = Pairings(store)
    assert pairings.paired_seats() == set()
    secret = pairings.pair("blue")
    assert Pairings(store).seat_of(secret) == "blue"


def test_a_pairing_that_could_not_be_journaled_is_refused_to_the_phone(gate: Gate, monkeypatch: Any) -> None:
    from companion.runtime.journal import JournalError

    gate.seat_down()
    journal = gate.sim.app.journal

    def fail(*args: Any, **kwargs: Any) -> None:
        raise JournalError("disk full")

    monkeypatch.setattr(journal, "append", fail)
    gate.pair("red")
    assert gate.sim.loop.table.state.paired == []
    failed = [c for c in gate.commands if c.name == "pair_failed"]
    assert failed and failed[-1].audience == seat_audience("red")
    assert not [c for c in gate.commands if c.name == "paired"]


# ------------------------------------------------------- over HTTP, across a restart
def test_a_paired_phone_is_still_its_seat_s_page_after_a_restart_and_the_gate_agrees(tmp_path: Path) -> None:
    import httpx
    from test_web import pair, token

    from companion.app.live_table import LiveTable

    live = LiveTable(tmp_path, web={"pair_window_s": 5})
    client = httpx.Client()
    try:
        live.tap("game/demagogos", *(f"player/{s}" for s in SIX))
        live.press("next")
        client.base_url = httpx.URL(live.url)
        assert pair(live, client, "red").status_code == 200
        page_token = token(client)
        assert client.get("/api/me").json()["seat"] == "red"
    finally:
        live.close()
    again = LiveTable(tmp_path, web={"pair_window_s": 5})  # the power came back; a new port
    try:
        client.base_url = httpx.URL(again.url)
        assert again.loop.table.state.phase == PAIRING
        assert again.loop.table.unpaired() == ["blue", "green", "yellow", "purple", "orange"]
        assert client.get("/api/me").json()["seat"] == "red"  # the same phone, the same cookie
        r = client.post("/api/press", json={"button": "repeat"}, headers={"X-CSRF-Token": page_token})
        assert r.status_code == 200  # the page open across the restart still posts
        again.settle()  # the answer comes at "accepted": the repeat's lines (two now) may still be on their way
        said = [e["text"] for e in again.events if e["event"] == "say"]
        assert said[-1].endswith("Still to pair: Blue, Green, Yellow, Purple and Orange.")  # the resume says so
    finally:
        client.close()
        again.close()


def test_a_submit_from_a_page_is_a_number_a_choice_or_a_small_flat_form(tmp_path: Path) -> None:
    import httpx
    from test_audiences import Auction
    from test_web import pair, seat_auction, token

    from companion.app.live_table import LiveTable

    live = LiveTable(tmp_path, games={"auction": Auction}, web={"pair_window_s": 5})
    try:
        seat_auction(live)
        with httpx.Client(base_url=live.url) as c:
            assert pair(live, c, "red").status_code == 200
            tok = token(c)
            for bad in ({"to": {"nested": 1}}, [1, 2], True, {}, {str(i): i for i in range(5)}):
                r = c.post("/api/submit", json={"field": "gift", "value": bad}, headers={"X-CSRF-Token": tok})
                assert (r.status_code, r.json()["error"]) == (400, "bad_submit"), bad
            r = c.post("/api/submit", json={"field": "gift", "value": {"to": "blue", "gems": 2}},
                       headers={"X-CSRF-Token": tok})
            assert r.status_code == 409 and r.json()["ok"] is False  # the table's verdict: this game takes no gift
    finally:
        live.close()
