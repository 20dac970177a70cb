"""The whole venue: a whole venue evening replayed.

Three tables, two games each, played by real simulated tables (the games' examples),
their plays and table events published as contract messages (docs/integrate/mqtt.md) by
plain paho clients to a real mosquitto, with every play sent twice, two
events repeated and a dozen bad messages mixed in.  The venue's league is
checked against ratings computed here, independently of venue/: openskill's
Plackett-Luce called directly on the teams and ranks this test derives from
the games' own results; wins counted by hand."""

from __future__ import annotations

import calendar
from pathlib import Path
from typing import Any

import httpx
import pytest
from openskill.models import PlackettLuce
from venue_kit import Table, play_message, renamed, simulate, state, wait

from venue.app import Venue

EVENING = calendar.timegm((2026, 1, 1, 18, 0, 0))  # 18:00 UTC: the café opens
MIN = 60.0
# Each table names its players in its config (players: names:); t3's orange seat is
# left unnamed: nobody the league can know (it plays with a fresh rating, kept nowhere).
NAMES = {
    "t1": {"red": "aki", "blue": "ben", "green": "chie", "yellow": "dan", "purple": "emi"},
    "t2": {"red": "fumi", "blue": "goro", "green": "hana", "yellow": "ichi", "purple": "jun"},
    "t3": {"red": "kai", "blue": "lea", "green": "mio", "yellow": "nao", "purple": "goro"},
}
GAMES = [  # (table, script, minutes after 18:00 the game starts)
    ("t1", "seven-knights/basic-5p.yaml", 60), ("t1", "one-night.yaml", 100),
    ("t2", "madness-hour/4p.yaml", 70), ("t2", "madness-hour/5p.yaml", 130),
    ("t3", "demagogos/6p.yaml", 80), ("t3", "seven-knights/advanced-5p.yaml", 150),
]


def sides_of(game: str, record: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, tuple[Any, Any]]:
    """The side each player finished on, from the game's own result (the rules,
    not the venue): name → (team, place)."""
    players = [p["name"] for p in record["players"]]
    if game == "seven-knights":  # the last round: who scored, and for which side
        verdict = [e for e in events if e["event"] == "formation"][-1]["verdict"]
        points = [e for e in events if e["event"] == "round_scored"][-1]["points"]
        other = "knights" if verdict == "witch" else "witch"
        return {n: (verdict if points[n] > 0 else other, None) for n in players}
    if game == "one-night":  # the werewolves' team, and the village (everyone else here)
        return {p["name"]: ("werewolf" if p["role"] == "werewolf" else "village", None) for p in record["players"]}
    if game == "madness-hour":
        return {p["name"]: ("winners" if p["winner"] else "losers", None) for p in record["players"]}
    assert game == "demagogos"
    place = {e["player"]: e["place"] for e in events if e["event"] == "dt_exit"}
    return {n: (None, place.get(n)) for n in players}


def expected_ratings(plays: list[dict[str, Any]]) -> dict[str, Any]:
    """openskill called directly: each play's teams and ranks as this test reads the rules."""
    model = PlackettLuce()
    rating: dict[str, Any] = {}
    for msg in sorted(plays, key=lambda m: (m["ended"], m["table"], int(m["id"].rpartition("/")[2]))):
        players = msg["players"]
        named = {p["name"] for p in players if p["name"] != p["seat"]}
        if msg["game"] == "demagogos":  # free-for-all by finishing place; who did not finish shares the next
            last = max(p["place"] for p in players if p["place"]) + 1
            teams = [[p["name"]] for p in players]
            ranks = [p["place"] or last for p in players]
        else:  # the winning team first, the losing team(s) after
            by_team: dict[str, list[str]] = {}
            for p in players:
                by_team.setdefault(p["team"], []).append(p["name"])
            won = {p["team"] for p in players if p["winner"]}
            teams = list(by_team.values())
            ranks = [1 if team in won else 2 for team in by_team]
        before = [[rating.get(n) or model.rating() for n in team] for team in teams]
        after = model.rate(before, ranks=ranks)
        for team, rated in zip(teams, after, strict=True):
            for n, r in zip(team, rated, strict=True):
                if n in named:
                    rating[n] = r
    return rating


JUNK = [  # (topic, payload): each one refused, none kept
    ("companion/t1/state", b"not json"),
    ("companion/t1/play", b'{"table": "t2", "id": "t2/p/9"}'),  # another table's name on t1's topic
    ("companion/t1/status", b"maybe"),
    ("companion/t1/what", b"{}"),  # no such topic
    ("companion/t2/event", b'{"id": "t2/e/1.0", "table": "t2", "t": 1, "event": "tell", "to": "fumi"}'),  # private
    ("companion/t2/event", b'{"id": "t2/e/1.0", "table": "t2", "t": NaN, "event": "dt_exit"}'),
    ("companion/t3/event", b"[" * 20000 + b"]" * 20000),
    # over 64 KiB, within the packet size the venue takes (a larger one the broker drops unread)
    ("companion/t3/state", b'{"table": "t3", "pad": "' + b"x" * (64 * 1024) + b'"}'),
    ("companion/t1/state", b'{"table": "t1", "game": null, "step": null, "waiting_for": [], "round": null, '
                           b'"totals": {}, "deadline": null, "night": false, "lang": "fr", "online": true}'),
]


def bad_plays(good: dict[str, Any]) -> list[tuple[str, Any]]:
    """Plays that look right but are not: each refused."""
    out = []
    other_id = {**good, "id": "t1/p/99"}  # t1's id on t2's topic
    out.append(("companion/t2/play", {**other_id, "table": "t2"}))
    twins = {**good, "players": [good["players"][0], {**good["players"][1], "name": good["players"][0]["name"]}]}
    out.append((f"companion/{good['table']}/play", twins))  # one person twice
    garbled = {**good, "players": [{**good["players"][0], "name": "aki\u202e"}, *good["players"][1:]]}
    out.append((f"companion/{good['table']}/play", garbled))  # a right-to-left override in a name
    return out


@pytest.fixture
def evening() -> dict[str, Any]:
    """The six games, simulated (about a second each), as contract messages."""
    plays, events, seq = [], [], {"t1": 0, "t2": 0, "t3": 0}
    for table, script, minutes in GAMES:
        record, evs = simulate(script, EVENING + minutes * MIN)
        names = NAMES[table]
        record, evs = renamed(record, names), renamed(evs, names)
        seq[table] += 1
        msg = play_message(table, seq[table], record, sides_of(record["game"], record, evs))
        msg["ended"] = EVENING + minutes * MIN + 60 * record["durationMin"]  # the test's own bookkeeping
        plays.append(msg)
        for n, e in enumerate(evs):
            events.append({"id": f"{table}/e/{seq[table] * 100 + n}.0", "table": table, **e})
    # last week: the season knows aki, ben and fumi before tonight
    week = EVENING - 7 * 24 * 3600
    last_week = {"id": "t1/p/1000", "table": "t1", "game": "one-night", "evening": 0,
                 "play": {"rules": [], "playDate": _date(week), "durationMin": 10, "players": [
                     {"name": n, "score": s, "winner": bool(s), "startPlayer": i == 0, "sourcePlayerId": seat,
                      "role": role}
                     for i, (n, seat, s, role) in enumerate([("aki", "red", 1, "werewolf"), ("ben", "blue", 0, "seer"),
                                                             ("fumi", "green", 0, "villager")])]},
                 "players": [{"name": "aki", "seat": "red", "score": 1, "winner": True, "team": "werewolf", "place": None},
                             {"name": "ben", "seat": "blue", "score": 0, "winner": False, "team": "village", "place": None},
                             {"name": "fumi", "seat": "green", "score": 0, "winner": False, "team": "village",
                              "place": None}],
                 "ended": week + 600}
    return {"plays": plays, "events": events, "last_week": last_week}


def _date(t: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def _wire(msg: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in msg.items() if k != "ended"}


def test_a_whole_venue_evening(broker: Any, tmp_path: Path, evening: dict[str, Any]) -> None:
    plays, events, last_week = evening["plays"], evening["events"], evening["last_week"]
    # the hand count: every game's winners, as the example scripts' `expect:` says them
    # (seven-knights basic-5p: purple; one-night: blue, green, purple; madness-hour 4p: green;
    #  5p: green, purple; demagogos 6p: red, yellow, orange; seven-knights advanced-5p: red)
    wins = {"emi": 2, "ben": 1, "chie": 1, "hana": 2, "jun": 1, "kai": 2, "nao": 1}
    assert {p["name"]: sum(1 for m in plays for q in m["players"] if q["name"] == p["name"] and q["winner"])
            for m in plays for p in m["players"] if p["winner"] and p["name"] != p["seat"]} == wins

    said: list[str] = []
    venue = Venue(tmp_path / "venue", (broker.host, broker.port), ("127.0.0.1", 0), ident="venue-evening",
                  since=EVENING, report=said.append).start()
    tables = {t: Table(broker, t) for t in NAMES}
    try:
        wait(venue.ear.subscribed.is_set, what="the venue's subscription")
        for t, table in tables.items():
            table.send(f"companion/{t}/status", b"online", retain=True)
            table.send(f"companion/{t}/state", state(t, game="one-night", step="discussion", deadline=EVENING + 9e3),
                       retain=True)
        tables["t1"].send("companion/t1/play", _wire(last_week))
        junk = [*JUNK, *bad_plays(_wire(plays[0]))]
        for i, msg in enumerate(plays):
            t = tables[msg["table"]]
            for e in events:
                if e["table"] == msg["table"] and int(e["id"].split("/")[2].split(".")[0]) // 100 == int(
                        msg["id"].rpartition("/")[2]):
                    t.send(f"companion/{msg['table']}/event", e)
            t.send(f"companion/{msg['table']}/play", _wire(msg))
            t.send(f"companion/{msg['table']}/play", _wire(msg))  # the outbox sent it again: a repeat
            topic, payload = junk[i]
            tables["t1"].send(topic, payload)
        for topic, payload in junk[len(plays):]:
            tables["t1"].send(topic, payload)
        for e in events[:2]:
            tables[e["table"]].send(f"companion/{e['table']}/event", e)  # two events again
        total = 3 * 2 + 1 + len(plays) * 2 + len(junk) + len(events) + 2
        wait(lambda: venue.store.counts()["messages"] >= total, what=f"{total} messages at the venue")
        board = httpx.get(venue.url + "/api/venue").json()
    finally:
        for table in tables.values():
            table.close()
        venue.stop()

    # said: one line for each topic refused (the same topic again within a minute is only counted)
    refusals = [s for s in said if s.startswith("refused: ")]
    assert sorted(r.split(":")[1].strip() for r in refusals) == sorted({topic for topic, _ in junk}), said
    assert board["counts"] == {"messages": total, "plays": len(plays) + 1, "events": len(events),
                               "duplicates": len(plays) + 2, "refused": len(junk)}
    assert [t["id"] for t in board["tables"]] == ["t1", "t2", "t3"] and all(t["online"] for t in board["tables"])

    model = PlackettLuce()
    tonight = expected_ratings(plays)
    season = expected_ratings([*plays, last_week])

    def view(ratings: dict[str, Any], by_wins: bool, with_week: bool) -> list[tuple[Any, ...]]:
        counted = [*plays, last_week] if with_week else plays
        played = {n: sum(1 for m in counted for p in m["players"] if p["name"] == n) for n in ratings}
        won = {n: sum(1 for m in counted for p in m["players"] if p["name"] == n and p["winner"]) for n in ratings}
        rows = [(n, played[n], won[n], round(r.ordinal(), 1), round(r.mu, 3), round(r.sigma, 3))
                for n, r in ratings.items()]
        key = (lambda r: (-r[2], -ratings[r[0]].ordinal(), r[0])) if by_wins else (
            lambda r: (-ratings[r[0]].ordinal(), -r[2], r[0]))
        return sorted(rows, key=key)

    def shown(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(r["name"], r["plays"], r["wins"], r["rating"], r["mu"], r["sigma"]) for r in rows]

    assert shown(board["tonight"]) == view(tonight, True, False)
    assert shown(board["season"]) == view(season, False, True)
    # the hand count again, on the board: wins tonight; aki's win of last week only in the season
    assert {r["name"]: r["wins"] for r in board["tonight"] if r["wins"]} == wins
    assert {r["name"]: r["wins"] for r in board["season"] if r["wins"]} == {**wins, "aki": 1}
    # goro played both games at t2 and both at t3 (its purple seat); the unnamed orange seat is
    # nobody; 14 people, all of them tonight (last week's three came back)
    assert next(r for r in board["tonight"] if r["name"] == "goro")["plays"] == 4
    assert "orange" not in {r["name"] for r in board["season"]} and len(board["tonight"]) == len(board["season"]) == 14
    assert board["season"][0]["rating"] == round(max(r.ordinal() for r in season.values()), 1)
    assert model.mu == 25.0  # the default the venue's ratings start from too


def test_the_same_plays_in_another_order_rate_the_same(broker: Any, tmp_path: Path, evening: dict[str, Any]) -> None:
    """Deterministic: the league orders plays by their end (then id), not by arrival."""
    boards = []
    for n, order in enumerate((evening["plays"], list(reversed(evening["plays"])))):
        venue = Venue(tmp_path / f"venue{n}", (broker.host, broker.port), None, ident=f"venue-order-{n}",
                      since=EVENING, report=lambda line: None).start()
        t = Table(broker, "t1")
        try:
            wait(venue.ear.subscribed.is_set, what="the subscription")
            for msg in order:
                t.send(f"companion/{msg['table']}/play", _wire(msg))
            wait(lambda v=venue: v.store.counts()["plays"] == len(evening["plays"]), what="the plays")
            boards.append(venue.league())
        finally:
            t.close()
            venue.stop()
    assert boards[0]["season"] == boards[1]["season"] and boards[0]["tonight"] == boards[1]["tonight"]
