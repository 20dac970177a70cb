"""venue.schema: every message checked against the MQTT contract (docs/integrate/mqtt.md) by the venue itself;
a refusal is one line, never a traceback, and nothing unchecked is kept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from venue_kit import state

from venue import schema


def play(table: str = "t1", **kw: Any) -> dict[str, Any]:
    record = {"rules": [], "playDate": "2026-01-01 19:00:00", "durationMin": 12, "players": [
        {"name": "aki", "score": 1, "winner": True, "startPlayer": True, "sourcePlayerId": "red", "role": "seer"},
        {"name": "ben", "score": 0, "winner": False, "startPlayer": False, "sourcePlayerId": "blue", "role": "werewolf"}]}
    base = {"id": f"{table}/p/3", "table": table, "game": "one-night", "evening": 1, "play": record, "players": [
        {"name": "aki", "seat": "red", "score": 1, "winner": True, "team": "village", "place": None},
        {"name": "ben", "seat": "blue", "score": 0, "winner": False, "team": "werewolf", "place": None}]}
    return {**base, **kw}


def check(topic: str, payload: Any) -> Any:
    return schema.check(topic, payload if isinstance(payload, bytes) else json.dumps(payload).encode())


def test_each_kind_becomes_its_record() -> None:
    assert check("companion/t1/status", b"online") == schema.Status("t1", True)
    assert check("companion/t1/status", b"offline") == schema.Status("t1", False)
    assert check("companion/t1/command", b"next") == schema.Command("t1", "next")
    s = check("companion/t1/state", {**state("t1", game="one-night", step="vote", waiting_for=["aki"],
                                               deadline=1.8e9), "extra": "never kept"})
    assert isinstance(s, schema.State) and s.state is not None
    assert s.state["step"] == "vote" and "extra" not in s.state and "table" not in s.state
    result = {"executed": ["ben"], "winning_team": "village", "winners": ["aki"],
              "deck": {"werewolf": 2, "seer": 1, "thief": 1, "villager": 2},
              "final_roles": {"aki": "doppelganger:seer", "ben": "werewolf"}, "dead": ["ben"],
              "winning_teams": ["village"], "artifacts": {}, "teams": {"aki": "village", "ben": "werewolf"}}
    e = check("companion/t1/event", {"id": "t1/e/12.0", "table": "t1", "t": 1.8e9, "event": "onw_result", **result})
    assert isinstance(e, schema.Event) and e.fields == result
    p = check("companion/t1/play", play())
    assert isinstance(p, schema.Play) and p.seq == 3 and [x.team for x in p.players] == ["village", "werewolf"]
    assert p.ended == 1767294000.0 + 12 * 60  # 2026-01-01 19:00 UTC and twelve minutes


def test_a_cleared_retained_message_forgets_the_table() -> None:
    assert check("companion/t1/status", b"") == schema.Status("t1", None)
    assert check("companion/t1/state", b"") == schema.State("t1", None)


BAD = [
    ("companion/t1/state", b"\xff\xfe", "not UTF-8"),
    ("companion/t1/state", b"[1]", "not a JSON object"),
    ("companion/t1/state", b"{" * 5000, "not JSON"),
    ("companion/t1/event", b"[" * 30000 + b"]" * 30000, "nested too deep"),
    ("companion/t1/state", json.dumps(state("t2")).encode(), "not the topic's t1"),
    ("companion/T1/state", b"{}", "table id"),
    ("companion/t1/state/extra", b"{}", "not a table's topic"),
    ("other/t1/state", b"{}", "not a table's topic"),
    ("companion/t1/secret", b"{}", "no such topic"),
    ("companion/t1/status", b"Online", "online or offline"),
    ("companion/t1/command", b"reset", "a command is"),
    ("companion/t1/state", b'{"table": "t1", "pad": "' + b"x" * 65536 + b'"}', "over the 65536"),
    ("companion/t1/state", json.dumps(state("t1", lang="fr")).encode(), "lang is en or ja"),
    ("companion/t1/state", json.dumps(state("t1", night="yes")).encode(), "night is true or false"),
    ("companion/t1/state", json.dumps(state("t1", round=True)).encode(), "round is a whole number"),
    ("companion/t1/state", json.dumps(state("t1", deadline=-1)).encode(), "deadline is a UNIX time"),
    ("companion/t1/state", b'{"table": "t1", "deadline": Infinity}', "Infinity is not a JSON number"),
    ("companion/t1/state", json.dumps(state("t1", waiting_for=["a\u202eb"])).encode(), "is a name"),
    ("companion/t1/state", json.dumps(state("t1", waiting_for=["x"] * 33)).encode(), "at most 32"),
    ("companion/t1/state", json.dumps(state("t1", game="<script>")).encode(), "game is an id"),
    ("companion/t1/state", json.dumps({k: v for k, v in state("t1").items() if k != "night"}).encode(),
     "night is missing"),
    ("companion/t1/event", json.dumps({"id": "t1/e/1.0", "table": "t1", "t": 1.8e9, "event": "tell",
                                       "to": "aki", "text": "you are the seer"}).encode(), "event is one of"),
    ("companion/t1/event", json.dumps({"id": "t2/e/1.0", "table": "t1", "t": 1.8e9, "event": "dt_exit",
                                       "player": "aki", "vp": 3, "place": 1}).encode(), "names table t2"),
    ("companion/t1/event", json.dumps({"id": "t1/e/1", "table": "t1", "t": 1.8e9, "event": "dt_exit"}).encode(),
     "id is <table>/e/<seq>.<n>"),
    ("companion/t1/event", json.dumps({"id": "t1/e/1.0", "table": "t1", "t": 1.8e9, "event": "dt_exit",
                                       "player": "aki", "vp": 3, "place": 0}).encode(), "place is a whole number from 1"),
    ("companion/t1/event", json.dumps({"id": "t1/e/1.0", "table": "t1", "t": 1.8e9, "event": "formation",
                                       "tiles": [], "excluded": [], "verdict": "maybe"}).encode(), "verdict is one of"),
    *[("companion/t1/event", json.dumps({"id": "t1/e/1.0", "table": "t1", "t": 1.8e9, "event": "onw_result",
                                        "executed": [], "winning_team": "village", "winners": [], "dead": [],
                                        "final_roles": {}, "winning_teams": ["village"], "deck": deck,
                                        "artifacts": {}, "teams": {}}).encode(),
       why) for deck, why in (({"seer": 0}, "deck['seer'] is a whole number from 1"),
                              ({"seer": "1"}, "deck['seer'] is a whole number"), (["seer"], "deck maps"))],
    ("companion/t1/play", json.dumps(play(id="t1/p/x")).encode(), "id is <table>/p/<play id>"),
    ("companion/t1/play", json.dumps(play(table="t1", id="t1/p/3", players=[])).encode(), "players is a list"),
    ("companion/t1/play", json.dumps(play(players=[play()["players"][0]] * 2)).encode(), "the same name"),
    ("companion/t1/play", json.dumps(play(players=[play()["players"][0], {**play()["players"][1], "name": "AKI"}])
                                     ).encode(), "the same name"),
    ("companion/t1/play", json.dumps(play(players=[play()["players"][0], {**play()["players"][1], "seat": "red"}])
                                     ).encode(), "the same seat"),
    ("companion/t1/play", json.dumps(play(players=[play()["players"][0], {**play()["players"][1], "name": "cho"}])
                                     ).encode(), "name different players"),
    ("companion/t1/play", json.dumps(play(play={**play()["play"], "playDate": "2026-02-30 19:00:00"})).encode(),
     "not a date"),
    ("companion/t1/play", json.dumps(play(play={**play()["play"], "durationMin": -1})).encode(), "durationMin"),
    ("companion/t1/play", json.dumps(play(play={**play()["play"], "players": "aki"})).encode(), "play.players"),
    ("companion/t1/play", json.dumps(play(evening="1")).encode(), "evening is a whole number"),
]


@pytest.mark.parametrize("topic, payload, why", BAD, ids=[b[2] for b in BAD])
def test_a_bad_message_is_one_line_and_no_record(topic: str, payload: bytes, why: str) -> None:
    problem = schema.check(topic, payload)
    assert isinstance(problem, schema.Problem), problem
    assert why in problem.why and "\n" not in problem.why and len(problem.why) < 200


def test_a_problem_never_echoes_a_long_or_unprintable_topic() -> None:
    problem = schema.check("companion/" + "x" * 500 + "\x07/state", b"{}")
    assert isinstance(problem, schema.Problem) and len(problem.why) < 160 and "\x07" not in problem.why
