"""The pages' headline and buttons, over plain HTTP and the read side: the
headline from the table's state (``headline`` in /api/table,
docs/reference/pages.md), the same night for any deal, a
page's next/back only where the table waits for its seat, the result kept
across a restart, and the night's and the door's refusals in words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from test_web import pair, token

from companion.app import config
from companion.app.live_table import Feed, LiveTable
from companion.app.simulate import Simulation, load_script
from companion.runtime.clock import VIRTUAL_EPOCH
from conftest import example_script
from web.live import WatchedReadSide
from web.pairing import RateLimit

ROOT = Path(__file__).resolve().parent.parent
DT6 = example_script("demagogos/6p.yaml")
ONW = example_script("one-night.yaml")
HEADLINE_KEYS = {"step", "waiting_for", "anyone", "count", "deadline", "night"}


def simulation(tmp_path: Path, script: Path, lang: str = "en") -> tuple[Simulation, Any]:
    s = load_script(script)
    cfg = config.load([ROOT / "config" / "companion.yaml"], {**(s.overrides or {}), "language": lang})
    sim = Simulation(cfg, tmp_path, lambda e: None, draws=s.draws, read_side=WatchedReadSide())
    return sim, s


def play_until(sim: Simulation, s: Any, done: Any) -> None:
    for _, kind, value in s.steps:
        sim.step(kind, value)
        if done(sim):
            return
    raise AssertionError("the script never got there")


def test_headline_counts_the_sealed_bids_and_names_who_is_still_to_bid(tmp_path: Path) -> None:
    sim, s = simulation(tmp_path, DT6)
    try:
        def two_bids(sim: Simulation) -> bool:
            play = sim.loop.read_side.public().get("play") or {}
            return play.get("step") == "role_auction" and len(play.get("bids_in", [])) == 2
        play_until(sim, s, two_bids)
        public = sim.loop.read_side.public()
        head = public["headline"]
        assert set(head) == HEADLINE_KEYS
        bid = public["play"]["bids_in"]
        assert head["count"] == {"done": 2, "of": 6, "what": "bids"}
        assert head["waiting_for"] == [p for p in ("red", "blue", "green", "yellow", "purple", "orange") if p not in bid]
        assert (head["step"], head["anyone"], head["night"], head["deadline"]) == ("role_auction", False, False, None)
        assert public["headline_text"] == ("Waiting for Green, Yellow, Purple and Orange. 2 of 6 bids are in.")
        assert set(head["count"]) == {"done", "of", "what"}  # counts only, never what was bid
        sim.step("tap", "lang/ja")
        assert sim.loop.read_side.public()["headline_text"] == "緑、黄色、紫、オレンジを待っています。6人中2人が入札済みです。"
    finally:
        sim.close()


def test_headline_is_always_there_between_games(tmp_path: Path) -> None:
    sim, _ = simulation(tmp_path, DT6)
    try:
        head = sim.loop.read_side.public()["headline"]
        assert head == {"step": "idle", "waiting_for": [], "anyone": True, "count": None, "deadline": None,
                        "night": False}
        assert sim.loop.read_side.public()["headline_text"] == "Between games: tap a game card."
    finally:
        sim.close()


def test_the_discussion_deadline_is_the_wall_clock_time_it_ends(tmp_path: Path) -> None:
    """One Night's discussion (2 min here): the deadline is the wall-clock time
    the discussion ends, the same at each of its minutes (a phone counts down to
    it), and the discussion does end then."""
    sim, s = simulation(tmp_path, ONW)
    try:
        step = lambda: (sim.loop.read_side.public().get("play") or {}).get("step")  # noqa: E731
        play_until(sim, s, lambda sim: step() == "discussion")
        head = sim.loop.read_side.public()["headline"]
        assert (head["step"], head["anyone"], head["night"]) == ("discussion", True, False)
        deadline = head["deadline"]
        assert isinstance(deadline, float) and deadline > sim.loop.clock.wall()
        deadlines = set()
        while step() == "discussion":
            deadlines.add(sim.loop.read_side.public()["headline"]["deadline"])
            sim.step("wait", 1.0)
        assert deadlines == {deadline}  # the minutes' timers fired: the end never moved
        assert deadline - VIRTUAL_EPOCH <= sim.loop.clock.now() < deadline - VIRTUAL_EPOCH + 1.0
        assert sim.loop.read_side.public()["headline"]["deadline"] is None  # the vote: no countdown
    finally:
        sim.close()


def one_night_at_night(tmp_path: Path, seed: int, stray: bool) -> tuple[LiveTable, dict[str, httpx.Client]]:
    """One Night, five players, red's and blue's phones paired, the night begun.
    ``stray``: this deal's werewolf fumbles a card over the reader and a phone presses next."""
    live = LiveTable(tmp_path, seed=seed, web={"pair_window_s": 5})
    live.web.pair_limit = RateLimit(20, 60.0)
    live.tap("game/one-night", *(f"player/{p}" for p in ("red", "blue", "green", "yellow", "purple")))
    phones = {}
    for seat in ("red", "blue"):
        phones[seat] = httpx.Client(base_url=live.url)
        assert pair(live, phones[seat], seat).status_code == 200
    live.press("next", "next")  # the deal is said; the night begins
    assert live.loop.table.eyes_closed
    if stray:
        live.tap("onw/werewolf/1")
        phones["blue"].post("/api/press", json={"button": "next"}, headers={"X-CSRF-Token": token(phones["blue"])})
    return live, phones


def test_by_night_the_public_api_and_every_seat_s_are_the_same_for_any_deal(tmp_path: Path) -> None:
    seen: list[tuple[bytes, bytes, bytes]] = []
    address = None
    for n, (seed, stray) in enumerate(((3, False), (11, True))):
        live, phones = one_night_at_night(tmp_path / str(n), seed, stray)
        try:
            if address is not None:  # the same address as the first table's (the page names it)
                live.web.stop()
                live.web.port, live.web.address = int(address.rsplit(":", 1)[1].strip("/")), address
                assert live.web.serving.stopped(5)
                live.web.start()
                for c in phones.values():
                    c.base_url = httpx.URL(address)
            address = live.web.address
            live.settle()
            public = httpx.get(address + "api/table").content
            mine = phones["red"].get("/api/me").content
            blue = phones["blue"].get("/api/me").content
            seen.append((public, mine, blue))
            assert json.loads(public)["headline"] == {"step": "night", "waiting_for": [], "anyone": False,
                                                      "count": None, "deadline": None, "night": True}
            assert json.loads(mine) == {"seat": "red", "night": True, "page": [],
                                        "legal": {"buttons": [], "taps": [], "submits": {}}}
        finally:
            for c in phones.values():
                c.close()
            live.close()
    assert seen[0] == seen[1]  # byte for byte


def test_finding_the_public_version_counts_the_tables_changes_not_the_feeds_pushes() -> None:
    """On a slow machine the serving thread may read two changes of the public
    snapshot as one: counted there, a night's version told how busy the machine
    was (CI saw 10 against 9 for two deals).  The read side counts them, on the
    loop's thread, and a private change alone moves nothing public."""
    side = WatchedReadSide()
    side.update({"step": "deal"}, {})
    side.update({"step": "deal"}, {"red": {"page": ["your card"]}})
    side.update({"step": "night"}, {})
    side.update({"step": "night"}, {"red": {"page": []}})
    assert side.public_versioned() == (2, {"step": "night"})
    assert side.version == 4


def test_by_night_a_phone_is_sent_the_same_feed_for_any_deal(tmp_path: Path) -> None:
    """No extra push for a deal's stray tap or press: each seat's feed and the
    public one carry the same messages through the night's first beat."""
    feeds: list[list[list[tuple[str, Any]]]] = []
    for n, (seed, stray) in enumerate(((3, False), (11, True))):
        live, phones = one_night_at_night(tmp_path / str(n), seed, False)
        public, mine = Feed(live.url + "/api/events"), Feed(live.url + "/api/me/events", phones["red"].cookies)
        try:
            public.drain(0.3)
            mine.drain(0.3)
            if stray:
                live.tap("onw/werewolf/1", "onw/seer/1")
                phones["red"].post("/api/press", json={"button": "next"},
                                   headers={"X-CSRF-Token": token(phones["red"])})
            live.settle()
            if stray:  # the strays were handled (refused, in the log alone)
                assert [e["input"] for e in live.events if e["event"] == "rejected"][-3:] == \
                    ["onw/werewolf/1", "onw/seer/1", "next"]
            feeds.append([[(k, v) for k, v in f.drain(0.5) if k != "event" or v.get("event") != "say"]
                          for f in (public, mine)])
        finally:
            public.close()
            mine.close()
            for c in phones.values():
                c.close()
            live.close()
    assert feeds[0] == feeds[1]  # a stray input by night pushes nothing more


def press(client: httpx.Client, button: str = "next") -> httpx.Response:
    return client.post("/api/press", json={"button": button}, headers={"X-CSRF-Token": token(client)}, timeout=10)


def test_a_press_from_a_seat_the_table_does_not_wait_for_is_refused_aloud(tmp_path: Path) -> None:
    """Seven Knights' quest waits for the start player: blue's page pressing next
    is refused with the sentence the speaker says, and nothing changes."""
    live = LiveTable(tmp_path, web={"pair_window_s": 5})
    try:
        live.tap("game/seven-knights", "player/red", "player/blue", "player/green", "player/yellow")
        phones = {seat: httpx.Client(base_url=live.url) for seat in ("red", "blue")}
        for seat, c in phones.items():
            assert pair(live, c, seat).status_code == 200
        live.press("next")
        assert live.loop.read_side.public()["headline"]["waiting_for"] == ["red"]
        before, mark = live.loop.journal.checkpoint(), len(live.events)
        entries = len(list(live.loop.journal.entries()))
        answer = press(phones["blue"])
        live.settle()
        assert answer.status_code == 409
        said = [e for e in live.events[mark:] if e["event"] == "say"]
        assert answer.json()["text"] == said[-1]["text"] == "Blue, the table is not waiting for you now."
        assert answer.json()["key"] == "refuse.not_your_turn"
        assert len(list(live.loop.journal.entries())) == entries and live.loop.journal.checkpoint() == before
        assert live.loop.table.engine is not None and live.loop.table.engine.state.step == "quest"
        assert press(phones["blue"], "repeat").status_code == 200  # repeat is anyone's
        assert press(phones["red"]).status_code == 200  # the start player's page goes on
        live.settle()
        assert live.loop.table.engine.state.step == "questions"
        for c in phones.values():
            c.close()
    finally:
        live.close()


def test_the_result_stays_across_a_restart_until_the_next_game(tmp_path: Path) -> None:
    sim, s = simulation(tmp_path, example_script("seven-knights.yaml"))
    for _, kind, value in s.steps:
        sim.step(kind, value)
    result = sim.loop.read_side.public()["result"]
    assert result["players"][0]["winner"]
    sim.close()
    again, _ = simulation(tmp_path, example_script("seven-knights.yaml"))  # the daemon restarted
    try:
        assert again.loop.read_side.public()["result"] == result
        again.step("tap", "game/seven-knights")
        # gathering the next game: the table keeps the result until it starts, the pages show it between games only
        assert "result" not in again.loop.read_side.public() and again.loop.table.result == result
    finally:
        again.close()


def test_a_press_by_night_is_answered_in_the_table_s_language_and_heard_by_nobody(tmp_path: Path) -> None:
    live, phones = one_night_at_night(tmp_path, 3, False)
    try:
        mark = len(live.events)
        answer = press(phones["red"])
        live.settle()
        assert answer.status_code == 409
        assert answer.json()["text"] == "Not during the night." and answer.json()["key"] == "refuse.night"
        assert "reason" not in answer.json() or answer.json()["text"] != answer.json()["reason"]
        assert [e["event"] for e in live.events[mark:] if e["event"] in ("say", "rejected")] == ["rejected"]
    finally:
        for c in phones.values():
            c.close()
        live.close()


def test_a_press_by_night_on_a_japanese_table_is_japanese(tmp_path: Path) -> None:
    live = LiveTable(tmp_path, language="ja", web={"pair_window_s": 5})
    try:
        live.tap("game/one-night", *(f"player/{p}" for p in ("red", "blue", "green")))
        c = httpx.Client(base_url=live.url)
        assert pair(live, c, "red").status_code == 200
        live.press("next", "next")
        assert live.loop.table.eyes_closed
        answer = press(c)
        assert answer.json()["text"] == "夜の間はできません。"
        c.close()
    finally:
        live.close()


def test_a_long_press_of_back_keeps_the_step_and_says_what_the_table_waits_for(tmp_path: Path) -> None:
    sim, s = simulation(tmp_path, example_script("seven-knights.yaml"))
    try:
        play_until(sim, s, lambda sim: (sim.loop.read_side.public().get("play") or {}).get("step") == "quest")
        sim.step("hold", "back")
        public = sim.loop.read_side.public()
        assert public["confirm"] == "game" and public["headline"]["step"] == "quest"  # the engine's step name
        assert public["headline_text"] == "Abandon this game? Next confirms, back keeps playing."
    finally:
        sim.close()
