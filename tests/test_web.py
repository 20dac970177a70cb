"""The table's pages (docs/reference/pages.md): a live table — the real
wiring, loop, journal and router on a real clock, simulated reader and panel —
served on a loopback port and asked over real HTTP.

- ``/api/table`` and ``/api/events`` carry the public side only;
- a phone pairs with a seat by that player's card, tapped within the window:
  a secret in an HttpOnly SameSite cookie, never in a URL or the log;
  pairing again replaces the first phone; attempts are rate-limited;
- controls need a paired seat and the page's token, and answer with the
  table's verdict (refusals carry their reason);
- a seat's page gets that seat's snapshot and events, and no one else's.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_audiences import Auction

from companion.app import config
from companion.app.live_table import Feed, LiveTable
from companion.app.web_app import resolve_listen
from companion.core.events import ButtonPressed, Submit
from conftest import example_script
from web.pairing import COOKIE, Pairings, RateLimit

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveTable]:
    t = LiveTable(tmp_path, games={"auction": Auction}, web={"pair_window_s": 5})
    yield t
    t.close()


def token(client: httpx.Client) -> str:
    html = client.get("/").text
    m = re.search(r'name="csrf" content="([^"]+)"', html)
    assert m
    return m.group(1)


def seat_auction(live: LiveTable) -> None:
    live.tap("game/auction", "player/red", "player/blue")
    live.press("next")


def pair(live: LiveTable, client: httpx.Client, seat: str) -> httpx.Response:
    """Ask for ``seat`` from ``client`` and tap that seat's card while the phone waits."""
    tok = token(client)
    mark = len(live.events)
    answer: list[httpx.Response] = []
    asking = threading.Thread(target=lambda: answer.append(
        client.post("/api/pair", json={"seat": seat}, headers={"X-CSRF-Token": tok}, timeout=10)))
    asking.start()
    for _ in range(100):  # the loop says "tap your card" once the request is in
        if any(e.get("key") == "pairing.tap_card" for e in live.events[mark:]):
            break
        threading.Event().wait(0.02)
    live.tap(f"player/{seat}")
    asking.join(10)
    return answer[0]


def test_table_json_is_the_public_snapshot_with_history(live: LiveTable) -> None:
    seat_auction(live)
    with httpx.Client(base_url=live.url) as c:
        state = c.get("/api/table").json()
    assert state["game"] == "auction"
    assert [s["id"] for s in state["seats"]] == ["red", "blue"]
    assert state["play"] == {"step": "bidding", "bids_in": 0, "winner": None}
    assert state["history"] == []
    assert state["now"]["line"]  # the last line said at the table


def test_the_public_feed_carries_table_events_and_never_a_tell(live: LiveTable) -> None:
    feed = Feed(live.url + "/api/events")
    seat_auction(live)
    live.loop.submit(Submit("red", "bid", 4))
    live.settle()
    got = feed.drain()
    kinds = {d.get("event") for k, d in got if k == "event"}
    assert {"accepted", "say"} <= kinds
    assert "tell" not in kinds
    text = json.dumps(got)
    assert '"bid": 4' not in text and '"bid":4' not in text  # red's sealed bid
    assert any(k == "table" and d.get("play", {}).get("bids_in") == 1 for k, d in got)  # live snapshot
    feed.close()


def test_pairing_sets_an_httponly_samesite_cookie_and_never_logs_the_secret(live: LiveTable) -> None:
    seat_auction(live)
    with httpx.Client(base_url=live.url) as phone:
        r = pair(live, phone, "red")
        assert r.status_code == 200, r.text
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        secret = phone.cookies[COOKIE]
        assert len(secret) >= 40
        assert phone.get("/api/me").json()["seat"] == "red"
    assert any(e["event"] == "paired" for e in live.events)
    assert secret not in json.dumps(live.events)  # nor any URL: it is only ever a cookie
    assert not any(e["event"] == "accepted" and e.get("input") == "player/red"
                   for e in live.events[-3:])  # the proof is no game input


def test_pairing_the_seat_again_replaces_the_first_phone(live: LiveTable) -> None:
    seat_auction(live)
    with httpx.Client(base_url=live.url) as first, httpx.Client(base_url=live.url) as second:
        assert pair(live, first, "red").status_code == 200
        assert pair(live, second, "red").status_code == 200
        assert first.get("/api/me").status_code == 403
        assert second.get("/api/me").json()["seat"] == "red"


def test_pairing_without_the_pages_token_or_from_another_site_is_refused(live: LiveTable) -> None:
    seat_auction(live)
    with httpx.Client(base_url=live.url) as c:
        assert c.post("/api/pair", json={"seat": "red"}).json()["error"] == "csrf"
        tok = token(c)
        r = c.post("/api/pair", json={"seat": "red"}, headers={"X-CSRF-Token": tok, "Origin": "http://evil.example"})
        assert r.status_code == 403
        r = c.post("/api/pair", json={"seat": "green"}, headers={"X-CSRF-Token": tok})
        assert r.json()["error"] == "no_seat"  # green is not at the table


def test_pairing_attempts_are_rate_limited(live: LiveTable) -> None:
    seat_auction(live)
    live.web.pair_limit = RateLimit(1, 60.0)
    with httpx.Client(base_url=live.url) as c:
        assert pair(live, c, "red").status_code == 200
        r = c.post("/api/pair", json={"seat": "blue"}, headers={"X-CSRF-Token": token(c)})
        assert r.status_code == 429 and r.json()["error"] == "too_many"


def test_rate_limit_forgets_attempts_after_its_window() -> None:
    now = [0.0]
    limit = RateLimit(2, 60.0, lambda: now[0])
    assert limit.allow("a") and limit.allow("a") and not limit.allow("a")
    assert limit.allow("b")
    now[0] = 60.0
    assert limit.allow("a")


def test_a_page_token_is_ours_or_refused() -> None:
    p = Pairings()
    tok = p.csrf_token()
    assert p.csrf_ok(tok)
    assert not p.csrf_ok("")
    assert not p.csrf_ok(tok.split(".")[0] + ".0000")
    assert not Pairings().csrf_ok(tok)  # a token from an earlier run


def test_controls_need_a_paired_seat(live: LiveTable) -> None:
    seat_auction(live)
    with httpx.Client(base_url=live.url) as c:
        r = c.post("/api/press", json={"button": "next"}, headers={"X-CSRF-Token": token(c)})
        assert r.status_code == 403 and r.json()["error"] == "not_paired"


def test_a_paired_page_presses_buttons_and_sees_refusals_with_their_reason(live: LiveTable) -> None:
    seat_auction(live)
    with httpx.Client(base_url=live.url) as c:
        assert pair(live, c, "red").status_code == 200
        tok = token(c)
        r = c.post("/api/press", json={"button": "repeat"}, headers={"X-CSRF-Token": tok})
        assert {k: v for k, v in r.json().items() if k != "me"} == {"ok": True, "reason": None, "key": None,
                                                                     "text": None, "told": []}
        assert r.json()["me"]["bid"] is None  # red's page as it is: repeat changed nothing
        r = c.post("/api/press", json={"button": "next"}, headers={"X-CSRF-Token": tok})
        assert r.status_code == 409 and r.json()["reason"] == "not now"  # bids are not all in
        assert c.post("/api/press", json={"button": "hold"}, headers={"X-CSRF-Token": tok}).status_code == 400


def test_a_seat_submits_from_its_page_and_only_it_hears_the_answer(live: LiveTable) -> None:
    seat_auction(live)
    with httpx.Client(base_url=live.url) as red, httpx.Client(base_url=live.url) as blue:
        assert pair(live, red, "red").status_code == 200
        assert pair(live, blue, "blue").status_code == 200
        mine = Feed(live.url + "/api/me/events", red.cookies)
        theirs = Feed(live.url + "/api/me/events", blue.cookies)
        public = Feed(live.url + "/api/events")
        tok = token(red)
        bad = red.post("/api/submit", json={"field": "bid", "value": 9}, headers={"X-CSRF-Token": tok})
        assert bad.status_code == 409 and "bid" in bad.json()["reason"]
        ok = red.post("/api/submit", json={"field": "bid", "value": 3}, headers={"X-CSRF-Token": tok})
        assert ok.json()["ok"] is True
        mine.wait_for(lambda k, d: k == "me" and d.get("bid") == 3)  # pushed once the read side has it
        assert red.get("/api/me").json()["bid"] == 3
        mine.drain()
        got = mine.got
        assert any(k == "event" and d["event"] == "tell" and d.get("data") == {"bid": 3} for k, d in got)
        assert any(k == "event" and d["event"] == "rejected" and d["field"] == "bid" for k, d in got)
        for feed in (theirs, public):
            text = json.dumps(feed.drain())
            assert "tell" not in text and '"bid": 3' not in text and '"bid":3' not in text
            assert "must be" not in text and "between" not in text  # the refusal's reason stays red's
        for f in (mine, theirs, public):
            f.close()


def test_a_seats_page_is_pushed_only_its_own_changes(live: LiveTable) -> None:
    """Red's sealed bid changes red's snapshot and the public count of bids: blue's
    page hears of the count on the public feed, and gets no private push of its own
    at that moment (its timing would tell blue that something private happened)."""
    seat_auction(live)
    with httpx.Client(base_url=live.url) as red, httpx.Client(base_url=live.url) as blue:
        assert pair(live, red, "red").status_code == 200
        assert pair(live, blue, "blue").status_code == 200
        mine = Feed(live.url + "/api/me/events", red.cookies)
        theirs = Feed(live.url + "/api/me/events", blue.cookies)
        for f in (mine, theirs):
            f.wait_for(lambda k, d: k == "me")  # the snapshot every page gets when it connects
        ok = red.post("/api/submit", json={"field": "bid", "value": 2}, headers={"X-CSRF-Token": token(red)})
        assert ok.json()["ok"] is True
        mine.wait_for(lambda k, d: k == "me" and d.get("bid") == 2)
        assert [d for k, d in theirs.drain(0.3) if k == "me"] == []
        for f in (mine, theirs):
            f.close()


def test_a_private_feed_needs_a_paired_cookie(live: LiveTable) -> None:
    with httpx.Client(base_url=live.url) as c:
        assert c.get("/api/me/events").status_code == 403
        c.cookies.set(COOKIE, "guess")
        assert c.get("/api/me").status_code == 403


def test_the_page_loads_nothing_from_elsewhere_and_is_small(live: LiveTable) -> None:
    with httpx.Client(base_url=live.url) as c:
        page = c.get("/")
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assets = [c.get(f"/static/{n}") for n in ("app.js", "app.css")]
        assert all(a.status_code == 200 for a in assets)
        assert c.get("/static/../server.py").status_code == 404
        weight = len(page.content) + sum(len(a.content) for a in assets)
    assert weight < 100 * 1024
    assert not re.search(r"(src|href)=\"(https?:)?//", page.text)


def test_the_qr_code_is_svg_of_the_address(live: LiveTable) -> None:
    with httpx.Client(base_url=live.url) as c:
        r = c.get("/qr.svg")
    assert r.headers["content-type"].startswith("image/svg+xml") and r.text.startswith("<svg")


def test_listen_setting_is_checked_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_text("web:\n  listen: 8080\n")
    with pytest.raises(config.ConfigError, match=r"c.yaml:2: web.listen must be HOST:PORT"):
        config.load([bad])


def test_listen_auto_is_off_off_a_pi_and_the_flag_wins() -> None:
    cfg: dict[str, Any] = config.defaults()
    assert resolve_listen(cfg) is None  # this machine is no Pi
    assert resolve_listen(cfg, "127.0.0.1:9000") == ("127.0.0.1", 9000)
    assert resolve_listen({**cfg, "web": {**cfg["web"], "listen": "[::1]:81"}}) == ("::1", 81)
    assert resolve_listen(cfg, "off") is None
    with pytest.raises(config.ConfigError, match="--web"):
        resolve_listen(cfg, "nowhere")


def test_a_play_for_bg_stats_carries_the_game_the_players_and_the_date_in_local_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import time
    from urllib.parse import unquote

    from companion.app import catalogue
    from web.bgstats import PUSH, push_url, record

    games = catalogue.export_games(catalogue.narrator().lines)  # the name and scoring: the game's folder
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        play = {"id": 4, "evening": 2, "game": "one-night", "playDate": "2026-01-01 19:00:00", "durationMin": 12,
                "players": [{"name": "aki", "score": 1, "winner": True, "startPlayer": True, "sourcePlayerId": "red",
                             "role": "onw/werewolf/1"},
                            {"name": "ben", "score": 0, "winner": False, "startPlayer": False,
                             "sourcePlayerId": "blue", "role": "onw/seer/1"}]}
        rec = record(play, games=games)
        assert rec["playDate"] == "2026-01-02 04:00:00"  # 19:00 UTC is 04:00 the next day in Tokyo
        assert rec["game"] == {"name": "One Night Werewolf", "sourceGameId": "one-night", "highestWins": True,
                               "noPoints": True}
        assert rec["players"][0] == {"name": "aki", "score": 1, "winner": True, "startPlayer": True,
                                     "sourcePlayerId": "red", "role": "onw/werewolf/1"}
        assert set(rec) == {"sourceName", "sourcePlayId", "playDate", "durationMin", "location", "game", "players"}
        assert rec["location"] == "Home" and rec["durationMin"] == 12  # the location is a name, as BG Stats has it
        assert "bggId" not in rec["game"]  # none we could vouch for: BG Stats matches the game by name
        url = push_url(play, games=games)
        assert url.startswith(PUSH) and json.loads(unquote(url[len(PUSH):])) == rec
    finally:
        os.environ.pop("TZ", None)
        time.tzset()


def test_history_and_export_come_from_the_journals_plays(live: LiveTable) -> None:
    play = {"id": 1, "evening": 1, "game": "seven-knights", "playDate": "2026-01-01 19:00:00", "durationMin": 9,
            "rules": [], "players": [{"name": "red", "score": 2, "winner": True, "startPlayer": True,
                                      "sourcePlayerId": "red"}]}
    live.web.history = lambda: [play]
    with httpx.Client(base_url=live.url) as c:
        shown = c.get("/api/table").json()["history"]
        exported = c.get("/api/export").json()["plays"]
    assert shown[0]["bgstats"].startswith("https://app.bgstatsapp.com/createPlay.html?data=")
    assert exported[0]["game"]["sourceGameId"] == "seven-knights"


def test_past_evenings_are_exported_one_by_one(live: LiveTable) -> None:
    def play(n: int, evening: int) -> dict[str, Any]:
        return {"id": n, "evening": evening, "game": "seven-knights", "playDate": f"2026-01-0{n} 19:00:00",
                "durationMin": 9, "rules": [], "players": [{"name": "red", "score": n, "winner": True,
                                                             "startPlayer": True, "sourcePlayerId": "red"}]}
    live.web.history = lambda: [play(1, 1), play(2, 1), play(3, 2)]
    with httpx.Client(base_url=live.url) as c:
        first = c.get("/api/export", params={"evening": 1})
        assert [p["players"][0]["score"] for p in first.json()["plays"]] == [1, 2]
        assert 'filename="plays-evening-1.json"' in first.headers["content-disposition"]
        assert len(c.get("/api/export").json()["plays"]) == 3
        assert c.get("/api/export", params={"evening": "x"}).status_code == 400


def test_one_night_plays_carry_each_players_final_role(tmp_path: Path) -> None:
    """The role each player's card showed at the reveal (the thief's swap
    included), as the script's reveal taps say — in the export and the push."""
    from urllib.parse import unquote

    from companion.app.simulate import Simulation, load_script
    from companion.runtime.journal import Journal
    from web.bgstats import PUSH, push_url, record

    script = load_script(example_script("one-night.yaml"))
    sim = Simulation(config.load([ROOT / "config" / "companion.yaml"], script.overrides), tmp_path, lambda e: None)
    for _, kind, value in script.steps:
        sim.step(kind, value)
    sim.close()
    taps = [v for _, k, v in script.steps if k == "tap"]
    reveal = taps[taps.index("onw/seer/1") + 1:]  # after the night's stray tap: player card, role card, …
    final = {reveal[i].removeprefix("player/"): reveal[i + 1].split("/")[1] for i in range(0, 10, 2)}
    assert final == {"red": "werewolf", "blue": "thief", "green": "villager", "yellow": "werewolf", "purple": "seer"}
    journal = Journal(tmp_path / "journal.sqlite", readonly=True)
    try:
        (played,) = journal.plays()
    finally:
        journal.close()
    rec = record(played)
    assert {p["name"]: p["role"] for p in rec["players"]} == final
    assert json.loads(unquote(push_url(played)[len(PUSH):]))["players"] == rec["players"]


def test_web_qr_writes_a_card_with_the_address(tmp_path: Path) -> None:
    from companion.app.cli import main

    card = tmp_path / "card.svg"
    assert main(["web", "qr", "-o", str(card), "--url", "http://table.local:8080/"]) == 0
    svg = card.read_text()
    assert svg.startswith("<svg") and "http://table.local:8080/" in svg and "<path" in svg


def restart_under_an_open_page(live: LiveTable) -> Feed:
    """Stop the pages while a public feed stays open past the server's grace
    second (its end withheld, as for a page that reconnected in that second),
    and start them again: the feed left behind."""
    old = Feed(live.url + "/api/events")
    old.wait_for(lambda kind, data: kind == "table")
    end = live.web._end_streams
    live.web._end_streams = lambda: None
    try:
        live.web.stop()
        assert live.web.serving.stopped(5)  # the server gives its connections 1 s, then its loop closes
    finally:
        live.web._end_streams = end
    live.web.start()
    return old


def test_finding_a_page_left_open_by_a_stopped_server_does_not_silence_the_restarted_one(live: LiveTable) -> None:
    """A CI run: the pages stopped while a phone's feed was still open (it had
    reconnected in the second the server gives its connections to close), the
    server gave up on it, and the loop closed with that feed's task never run to
    its end.  The feed stayed on the list of pages, its queue bound to the dead
    loop; after the restart every event for that audience raised on it ("Event
    loop is closed") before reaching the pages that were there."""
    old = restart_under_an_open_page(live)
    new = Feed(live.url + "/api/events")
    new.wait_for(lambda kind, data: kind == "table")
    live.tap("game/auction")  # its verdict, the lines said and a snapshot, all for every public page
    got = [(kind, data.get("event") or data.get("game")) for kind, data in new.drain()]
    assert [g for g in got if g[0] != "feedback"] == [("event", "accepted"), ("event", "say"), ("event", "say"),
                                                     ("table", "auction")]
    assert old.cut  # the page left open saw its link cut, as a browser would (and reconnected)
    old.close()
    new.close()


RESTART_THEN_EXIT = """
import sys
from pathlib import Path
sys.path.insert(0, "tests")
from companion.app.live_table import LiveTable
from test_web import restart_under_an_open_page
live = LiveTable(Path(sys.argv[1]))
old = restart_under_an_open_page(live)
live.tap("lang/en")  # an event for every public page, the one left behind included
live.close()
old.close()
print("closed")
"""


def test_finding_a_server_restarted_under_an_open_page_leaves_the_process_to_exit_cleanly(tmp_path: Path) -> None:
    """The same CI run ended in "Segmentation fault" after its summary line: the
    page's stream left pending on the closed loop, once an event had been put
    on its queue, crashed the interpreter's last garbage collection (every
    time, here).  A process, so its exit is what is tested."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", RESTART_THEN_EXIT, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "closed\n"), done.stderr[-2000:]


def _in_flight(live: LiveTable, client: httpx.Client, path: str, body: dict[str, Any],
               queued: int) -> tuple[threading.Thread, list[httpx.Response]]:
    """Post ``body`` from ``client`` while the loop is held, and return once the
    table's inbox holds ``queued`` items (the post's among them): in flight."""
    answer: list[httpx.Response] = []
    tok = token(client)
    posting = threading.Thread(target=lambda: answer.append(
        client.post(path, json=body, headers={"X-CSRF-Token": tok}, timeout=10)))
    posting.start()
    for _ in range(250):
        if live.loop.inbox.qsize() >= queued:
            break
        threading.Event().wait(0.02)
    assert live.loop.inbox.qsize() >= queued, "the page's control never reached the table"
    return posting, answer


def _hold(live: LiveTable) -> threading.Event:
    """Keep the loop busy (a slow card, say) until the event is set."""
    held, release = threading.Event(), threading.Event()
    live.loop.submit(lambda: (held.set(), release.wait(10)))
    assert held.wait(5)
    return release


def test_finding_a_pages_press_is_answered_by_its_own_verdict_not_by_the_panels(live: LiveTable) -> None:
    """A page's control took the first verdict of any input of its name: the
    panel's next, queued just before the page's, answered the page ("accepted":
    the game began), and the page's own refusal reached no one.  Each control
    now carries an id and is answered by it."""
    live.tap("game/auction", "player/red", "player/blue")  # seated: next begins the game
    with httpx.Client(base_url=live.url) as red:
        assert pair(live, red, "red").status_code == 200
        release = _hold(live)
        live.loop.submit(ButtonPressed("next"))  # the panel's, queued first: the game begins
        posting, answer = _in_flight(live, red, "/api/press", {"button": "next"}, queued=2)
        release.set()
        posting.join(10)
        verdicts = [e for e in live.events if e["event"] in ("accepted", "rejected") and e.get("input") == "next"]
        assert [e["event"] for e in verdicts[-2:]] == ["accepted", "rejected"]
        assert answer[0].status_code == 409, answer[0].json()  # red's own next came in the bidding: not now
        assert answer[0].json()["reason"] == "not now"


def test_two_submits_of_the_same_field_in_flight_each_get_their_own_answer(live: LiveTable) -> None:
    seat_auction(live)
    with httpx.Client(base_url=live.url) as red, httpx.Client(base_url=live.url) as blue:
        assert pair(live, red, "red").status_code == 200
        assert pair(live, blue, "blue").status_code == 200
        release = _hold(live)
        first, red_answer = _in_flight(live, red, "/api/submit", {"field": "bid", "value": 9}, queued=1)
        second, blue_answer = _in_flight(live, blue, "/api/submit", {"field": "bid", "value": 3}, queued=2)
        release.set()
        first.join(10)
        second.join(10)
        assert red_answer[0].status_code == 409 and "bid" in red_answer[0].json()["reason"]  # out of range
        assert blue_answer[0].status_code == 200 and blue_answer[0].json()["ok"] is True
        assert red.get("/api/me").json()["bid"] is None and blue.get("/api/me").json()["bid"] == 3


def test_finding_a_pages_control_hears_its_verdict_and_what_it_changed_in_one_answer(live: LiveTable) -> None:
    """A page's control heard back on three channels: the HTTP verdict, the
    seat's feed (its ``tell``, its ``rejected``) and the feed's ``me``, the page
    showing whichever came first — through an ``Outputs.answering`` the loop set
    just before the verdict.  Now its answer is one: the verdict, what the table
    told that seat for it, and the seat's page after it."""
    seat_auction(live)
    with httpx.Client(base_url=live.url) as red:
        assert pair(live, red, "red").status_code == 200
        tok = token(red)
        ok = red.post("/api/submit", json={"field": "bid", "value": 3}, headers={"X-CSRF-Token": tok}).json()
        assert ok["ok"] is True and ok["me"]["bid"] == 3  # its page as the bid left it
        assert [t["key"] for t in ok["told"]] == ["auc.bid_taken"] and ok["told"][0]["text"]
        bad = red.post("/api/press", json={"button": "next"}, headers={"X-CSRF-Token": tok})
        assert bad.status_code == 409 and bad.json()["reason"] == "not now"
        assert bad.json()["told"] == [] and bad.json()["me"] == ok["me"]  # refused: nothing changed
    assert not hasattr(live.loop.out, "answering")  # no "who is being answered" left on the seam


def test_finding_a_line_stays_the_present_only_until_the_table_moves_without_a_word_however_late_the_pushes_run(
        tmp_path: Path) -> None:
    """A line said, then two bids (no word, the count moves): the line is the past.  On a
    busy serving loop the bids' pushes ran together after both, each reading the newest
    snapshot; the first took the line as the bids' own, and "0 of 3 bids" stood under
    "2 of 3" until the next word."""
    live = LiveTable(tmp_path, games={"auction": Auction}, web={"pair_window_s": 5})
    try:
        live.tap("game/auction", "player/red", "player/blue", "player/green")
        live.press("next")
        live.tap("auc/mark")  # a word: "marked 1"
        said = [e for e in live.events if e.get("event") == "say"][-1]["text"]
        answered = threading.Event()
        live.web.serving.hand_over(lambda: answered.set())
        assert answered.wait(5) and live.web.now["line"] == said
        busy, ran = threading.Event(), threading.Event()
        live.web.serving.hand_over(busy.wait, 10)  # the serving loop held: what comes next waits, in order
        for seat, bid in (("red", 1), ("blue", 2)):
            live.loop.submit(Submit(seat, "bid", bid))
        live.settle()
        assert [e for e in live.events if e.get("event") == "say"][-1]["text"] == said  # no word since
        live.web.serving.hand_over(ran.set)
        busy.set()
        assert ran.wait(5)
        assert live.web.public_state(history=False)["now"] == {"line": None, "key": None}
    finally:
        live.close()
