"""Nothing private in any public response, ever (issue 10): whole games —
every shipped table script, and a sealed-bid game with private tells and
refusals — played on the simulated table with the pages served beside it;
after every step every public endpoint is fetched and the public feed read.

The feed must carry exactly the table's events, in order; no response may
hold a private event (a tell, a seat's refusal, a refusal heard by no one at
night), a tell's text, or a seat's private snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_audiences import Auction
from web_live import Feed

from companion.app import config
from companion.app.simulate import Simulation, load_script
from companion.app.web_app import start_web
from companion.core.events import TABLE, Submit
from companion.core.messages import Event
from web.live import WatchedReadSide

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "examples").glob("*.yaml"))
PUBLIC = ("/", "/api/table", "/api/export", "/qr.svg", "/static/app.js", "/static/app.css", "/api/virtual")


class Walk:
    def __init__(self, state: Path, overrides: dict[str, Any], draws: dict[str, Any] | None = None,
                 games: dict[str, Any] | None = None) -> None:
        cfg = config.load([ROOT / "config" / "companion.yaml"], overrides or None)
        self.log: list[dict[str, Any]] = []
        self.heard: list[Event] = []
        self.read_side = WatchedReadSide()
        self.sim = Simulation(cfg, state, self.log.append, draws=draws, games=games, read_side=self.read_side)
        self.sim.app.router.subscribe(lambda m: self.heard.append(m) if isinstance(m, Event) else None)
        self.web = start_web(self.sim.app, cfg, "127.0.0.1", 0, virtual=self.sim.reader)
        self.url = self.web.address.rstrip("/")
        self.feed = Feed(self.url + "/api/events")
        self.client = httpx.Client(base_url=self.url)
        self.responses: list[str] = []

    def step(self, kind: str, value: Any) -> None:
        before = self.read_side.version
        self.sim.step(kind, value)
        version = self.read_side.version
        if version != before:  # the page hears of every change
            self.feed.wait_for(lambda k, d: k == "table" and d["version"] >= version)
        self.feed.drain(0.02)
        for path in PUBLIC:
            r = self.client.get(path)
            assert r.status_code == 200, path
            self.responses.append(r.text)

    def check(self) -> None:
        self.feed.drain(0.2)
        fed = self.feed.got
        public = [dict(e.fields) for e in self.heard if e.audience == TABLE]
        private = [dict(e.fields) for e in self.heard if e.audience != TABLE]
        fed_events = [d for k, d in fed if k == "event"]
        assert fed_events == public[len(public) - len(fed_events):]  # the table's events, in order, only
        everything = "\n".join(self.responses) + json.dumps(fed, ensure_ascii=False)
        for event in private:
            assert event not in fed_events
            if event["event"] == "tell":
                assert event["text"] not in everything, event
        for seat in self.sim.loop.table.state.seats:
            secret = {k: v for k, v in self.read_side.private(seat).items() if k != "legal" and v is not None}
            for key, value in secret.items():
                assert json.dumps({key: value})[1:-1] not in everything, (seat, key)

    def close(self) -> None:
        self.feed.close()
        self.client.close()
        self.web.stop()
        self.sim.close()


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_every_public_endpoint_through_a_whole_game_shows_nothing_private(script: Path, tmp_path: Path) -> None:
    s = load_script(script)
    walk = Walk(tmp_path, s.overrides, s.draws)
    try:
        for _, kind, value in s.steps:
            walk.step(kind, value)
        walk.check()
        assert any(e["event"] in ("game_over", "onw_result", "mh_result") for e in walk.log)  # played to its end
    finally:
        walk.close()


def test_sealed_bids_tells_and_a_seats_refusals_stay_off_the_public_pages(tmp_path: Path) -> None:
    walk = Walk(tmp_path, {"seed": 5}, games={"auction": Auction})
    try:
        for identity in ("game/auction", "player/red", "player/blue", "player/green"):
            walk.step("tap", identity)
        walk.step("press", "next")
        walk.step("submit", Submit("red", "bid", 9))  # refused: the reason is red's alone
        for seat, bid in (("red", 4), ("blue", 2), ("green", 3)):
            walk.step("submit", Submit(seat, "bid", bid))
        walk.step("press", "next")
        walk.check()
        assert sum(e["event"] == "tell" for e in walk.log) >= 4
    finally:
        walk.close()
