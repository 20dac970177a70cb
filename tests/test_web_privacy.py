"""Nothing private in any public response, ever: whole games of
all four games — every shipped table script of Seven Knights, One Night (its
night), Madness Hour (the Girl's card) and Demagogos (gems, sealed bids,
roles, the sage's and demagogue's boxes, gifts), and a sealed-bid game with
private tells and refusals — played on the simulated table with the pages
served beside it; after every step every public endpoint is fetched, the
public feed read, and what they hold checked against the game's secrets
(the rules' *who may know what*).

The feed must carry exactly the table's events, in order; no response may
hold a private event (a tell, a seat's refusal, a refusal heard by no one at
night), a tell's text, or a seat's private snapshot.  A public snapshot is
pushed only when the public side changed: a private event (a gift) makes no
push, whose timing alone would tell the table something happened."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from privacy import Secrets
from test_audiences import Auction

from companion.app import config
from companion.app.live_table import Feed
from companion.app.simulate import Simulation, load_script
from companion.app.web_app import start_web
from companion.core.events import TABLE, Submit
from companion.core.messages import Event
from conftest import example_script, example_scripts
from web.live import WatchedReadSide

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted([*example_scripts("*.yaml"), *example_scripts("demagogos/*.yaml"),
                  *example_scripts("one-night/*.yaml")])  # the editions: new roles
PUBLIC = ("/", "/tv", "/api/table", "/api/export", "/qr.svg", "/static/app.js", "/static/app.css", "/api/virtual")
SERVER_KEYS = ("version", "address", "now", "log", "verdict", "cards", "clock")  # what the pages add to the read side's public snapshot


def _play(snapshot: dict[str, Any]) -> Any:
    return {k: v for k, v in snapshot.items() if k not in SERVER_KEYS}


def _dicts(node: Any) -> list[dict[str, Any]]:
    """Every mapping inside a JSON value."""
    if isinstance(node, dict):
        return [node, *(d for v in node.values() for d in _dicts(v))]
    if isinstance(node, list):
        return [d for v in node for d in _dicts(v)]
    return []


def secrets_kept(engine: Any, table: dict[str, Any]) -> None:
    """The public table (``/api/table``) against the game's secrets, as the
    rules' secrecy tables put them."""
    if engine is None:
        return
    play = table.get("play", {})
    text = json.dumps(play, ensure_ascii=False)
    if engine.game == "demagogos":
        st = engine.state
        # gems are each player's own: only an opened box's gems are public
        assert all(set(d) == {"box", "content", "player", "gems"} for d in _dicts(play) if "gems" in d), play
        # a role and the boxes it was told are its holder's until the round's results
        rest = json.dumps({k: v for k, v in play.items() if k != "results"})
        assert "sage" not in rest and "demagogue" not in rest and "told" not in rest and "dice" not in rest
        # sealed bids: who has bid is public, never what (the VP auction is open)
        assert not any("bids" in d for d in _dicts({k: v for k, v in play.items() if k != "vp_auction"}))
        unopened = {b for b in range(1, st.boxes + 1) if all(o["box"] != b for o in st.opened)}
        assert all(o["box"] not in unopened for o in play.get("opened", []))  # a box's content once opened only
        # the board, as the page shows it: the game's public lines only, a role named only in the results,
        # a box's line only once it is open
        board = table["board"]
        assert all(line["key"].startswith("dt.board.") for line in board), board
        if not play.get("results"):
            text = " ".join(line["text"] for line in board)
            assert not any(w in text for w in ("sage", "demagogue", "賢者", "デマゴーゴス")), board
        assert sum(line["key"].startswith("dt.board.box.") for line in board) == len(play.get("opened", []))
    elif engine.game == "madness-hour" and engine.state.step != "done":
        # the Girl's card: in the companion's state only until the end
        assert "girl_card" not in play and "evil-god" not in text and "mh/girl/human" not in text, play
    elif engine.game == "one-night":
        st = engine.state
        # the night's jitter (and so which role is really in play) is the companion's alone
        assert "jitter" not in text and "night_at" not in text
        if st.step == "night":
            assert play.get("whose_turn") == [], play  # nobody is named by night: the order would tell


class Walk:
    def __init__(self, state: Path, overrides: dict[str, Any], draws: dict[str, Any] | None = None,
                 games: dict[str, Any] | None = None, virtual: bool = True) -> None:
        cfg = config.load([ROOT / "config" / "companion.yaml"], overrides or None)
        self.log: list[dict[str, Any]] = []
        self.heard: list[Event] = []
        self.read_side = WatchedReadSide()
        self.sim = Simulation(cfg, state, self.log.append, draws=draws, games=games, read_side=self.read_side)
        self.sim.app.router.subscribe(lambda m: self.heard.append(m) if isinstance(m, Event) else None)
        self.web = start_web(self.sim.app, cfg, "127.0.0.1", 0, virtual=self.sim.reader if virtual else None)
        self.public = PUBLIC if virtual else tuple(p for p in PUBLIC if p != "/api/virtual")
        self.url = self.web.address.rstrip("/")
        self.feed = Feed(self.url + "/api/events")
        self.client = httpx.Client(base_url=self.url)
        self.responses: list[str] = []
        self.secrets = Secrets()
        self.pushed = self.feed.wait_for(lambda k, d: k == "table")[1]["version"]

    def step(self, kind: str, value: Any) -> None:
        before = self.read_side.public()
        self.sim.step(kind, value)
        self.secrets.gather(self.sim.loop, self.heard)
        public = self.read_side.public()
        if public != before:  # the page hears of every public change, and sees just the public side
            _, got = self.feed.wait_for(lambda k, d: k == "table" and _play(d) == _play(public))
            assert {k: v for k, v in got.items() if k not in SERVER_KEYS} == public
            self.pushed = got["version"]
        pushes = [d for k, d in self.feed.drain(0.02) if k == "table"]
        if public == before:  # nothing public changed: no push (its timing would tell)
            assert pushes == [], (kind, value)
        for path in self.public:
            r = self.client.get(path)
            assert r.status_code == 200, path
            self.responses.append(r.text)
            if path == "/api/table":
                secrets_kept(self.sim.loop.table.engine, r.json())

    def private_pages(self) -> dict[str, dict[str, Any]]:
        """Every seat's private page now, as it would be rendered (the read side
        holds only the watched ones'), without its forms."""
        pages = {seat: self.sim.loop.pages.render(seat) for seat in self.sim.loop.table.state.seats}
        return {seat: {k: v for k, v in page.items() if k != "legal" and v is not None} for seat, page in pages.items()}

    def private_texts(self) -> list[str]:
        """The words only one player may read, as a page would show them: every
        tell's text so far and each seat's page lines now (the TV board's check)."""
        tells = [str(e.fields["text"]) for e in self.heard if e.audience != TABLE and e.fields.get("event") == "tell"]
        return tells + [line["text"] for page in self.private_pages().values() for line in page.get("page", [])]

    def check(self) -> None:
        self.feed.drain(0.2)
        fed = self.feed.got
        public = [dict(e.fields) for e in self.heard if e.audience == TABLE]
        private = [dict(e.fields) for e in self.heard if e.audience != TABLE]
        fed_events = [d for k, d in fed if k == "event"]
        assert fed_events == public[len(public) - len(fed_events):]  # the table's events, in order, only
        for event in private:
            assert event not in fed_events
        self.secrets.gather(self.sim.loop, self.heard)
        for body in [*self.responses, *(d for _, d in fed)]:
            assert self.secrets.leaks(body) == [], body

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


def test_a_gift_makes_no_public_push_and_leaves_no_public_trace(tmp_path: Path) -> None:
    """Demagogos' gifts are the giver's and receiver's business (rules, *who may
    know what*): the public feed must not even tick when one is made."""
    s = load_script(example_script("demagogos/6p.yaml"))
    walk = Walk(tmp_path, s.overrides, s.draws)
    try:
        gifts = 0
        for _, kind, value in s.steps:
            public, mark = walk.read_side.public(), len(walk.feed.got)
            walk.step(kind, value)  # asserts: no push unless the public side changed
            if kind == "submit" and value.field == "gift":
                gifts += 1
                assert walk.read_side.public() == public  # the gift changed nothing public …
                walk.feed.drain(0.3)
                assert walk.feed.got[mark:] == []  # … and the feed said nothing, not even a snapshot
        assert gifts == 2  # one given, one refused (the giver had exited)
        assert any(e["event"] == "tell" and e["key"] == "dt.gift.received" for e in walk.log)
        walk.check()
    finally:
        walk.close()


def _demagogos_in_the_cave(tmp_path: Path) -> Walk:
    """A walk of Demagogos' six-player script up to the cave: every seat holds gems and a role."""
    s = load_script(example_script("demagogos/6p.yaml"))
    walk = Walk(tmp_path, s.overrides, s.draws)
    for _, kind, value in s.steps:
        walk.step(kind, value)
        if walk.sim.loop.table.engine is not None and walk.sim.loop.table.engine.state.step == "cave":
            return walk
    walk.close()
    raise AssertionError("the script never reached the cave")


@pytest.mark.parametrize("planted", ["json", "sse", "spaced"])
def test_the_walk_catches_a_private_fact_however_the_json_is_spelled(planted: str, tmp_path: Path) -> None:
    """The walk reads JSON as JSON: a seat's gems in the server's own compact
    spelling (``"gems":3``), in an SSE frame, or spaced, are all caught (the
    walk once matched spaced JSON only, which the server never sends)."""
    walk = _demagogos_in_the_cave(tmp_path)
    try:
        seat = next(iter(walk.sim.loop.table.state.seats))
        purse = {"seat": seat, "gems": walk.sim.loop.pages.render(seat)["gems"]}
        body = {"json": json.dumps({"play": {"purse": purse}}, separators=(",", ":")),
                "sse": "retry: 1000\n\nevent: table\ndata: " + json.dumps({"purse": purse}, separators=(",", ":")) + "\n\n",
                "spaced": json.dumps({"play": {"purse": purse}})}[planted]
        walk.responses.append(body)
        with pytest.raises(AssertionError):
            walk.check()
    finally:
        walk.close()


def test_an_opened_boxs_gems_are_no_leak_though_a_purse_holds_as_many(tmp_path: Path) -> None:
    """Public in one place, private in another: the gems found in an opened
    box are everyone's (the public play's ``opened``), a player's purse of as
    many gems is not."""
    walk = _demagogos_in_the_cave(tmp_path)
    try:
        seat = next(iter(walk.sim.loop.table.state.seats))
        gems = walk.sim.loop.pages.render(seat)["gems"]
        box = {"box": 1, "content": "treasure", "player": seat, "gems": gems}
        assert walk.secrets.leaks(json.dumps({"play": {"opened": [box]}}, separators=(",", ":"))) == []
        assert walk.secrets.leaks(json.dumps({"play": {"purse": {"gems": gems}}}, separators=(",", ":"))) != []
    finally:
        walk.close()
