"""Each game's manifest (companion/games/<game>/manifest.py): what it is to
the rest of the system, declared once — and true to what its engine does."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

import companion.games
from companion.app.simulate import run_script
from companion.core import wire
from companion.core.engine import Outcome
from companion.core.manifest import Event, Manifest, choice, describe, names, word
from companion.games.one_night import OneNight
from companion.games.seven_knights import SevenKnights
from conftest import example_script
from venue import schema

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = {"seven-knights": "seven-knights.yaml", "one-night": "one-night.yaml",
            "madness-hour": "madness-hour.yaml", "demagogos": "demagogos/6p.yaml"}


def test_every_game_has_its_manifest_with_its_engines_own_declarations() -> None:
    for game in companion.games.GAMES:
        m = companion.games.manifest(game)
        assert (m.id, m.steps, m.components, m.outcomes) == (game.game, tuple(game.STEPS), game.components,
                                                             game.outcomes)
        assert m.published and not m.published & {"round_scored", "game_over"}  # the table's are the core's
    assert set(EXAMPLES) == {g.game for g in companion.games.GAMES}


@pytest.mark.parametrize("game", sorted(EXAMPLES))
def test_each_games_published_events_are_what_its_manifest_declares_and_a_venue_takes_them(game: str) -> None:
    """A whole example played: every event the outbox publishes has exactly
    its declared fields, and the venue's checks (made from the manifests) take it."""
    out = io.StringIO()
    assert run_script(example_script(EXAMPLES[game]), out=out) == 0
    log = [json.loads(line) for line in out.getvalue().splitlines()]
    declared = wire.events(companion.games.manifests())
    own = companion.games.manifest(companion.games.registry()[game]).published
    sent = [ev for ev in log if ev["event"] in declared]
    assert {ev["event"] for ev in sent} & own == own  # each declared event is made, none is dead
    for n, ev in enumerate(sent):
        fields = {k: v for k, v in ev.items() if k not in ("t", "event")}
        assert set(fields) == set(declared[ev["event"]].fields), ev
        payload = json.dumps({**fields, "id": f"t1/e/{n}.0", "table": "t1", "t": 1.8e9, "event": ev["event"]})
        record = schema.check("companion/t1/event", payload.encode())
        assert isinstance(record, schema.Event) and record.fields == fields, (record, ev)


def test_a_verdict_no_event_declares_is_a_mistake_said_on_import() -> None:
    class Wrong(SevenKnights):
        outcomes = (Outcome("formation", "verdict", ("knights", "witch")),)  # one value short

    with pytest.raises(ValueError, match="not a choice"):
        describe(Wrong, events=(Event("formation", {"verdict": choice("knights", "witch", "nobody")}),),
                 rating="teams")
    with pytest.raises(ValueError, match="no published event"):
        describe(SevenKnights, events=(), rating="teams")
    with pytest.raises(ValueError, match="rated by"):
        describe(OneNight, events=companion.games.manifest(OneNight).events, rating="elo")


def test_two_games_declaring_one_event_otherwise_is_a_mistake() -> None:
    ours = companion.games.manifest(OneNight)
    other = Manifest(type("Other", (OneNight,), {"game": "other"}),
                     (Event("onw_result", {"winners": names(), "winning_team": word()}),), "teams")
    with pytest.raises(ValueError, match="declared otherwise by one-night"):
        wire.events([ours, other])
    with pytest.raises(ValueError, match="declared otherwise by the table"):
        wire.events([Manifest(OneNight, (Event("game_over", {"winners": names()}),), "teams")])


def test_the_mqtt_contracts_event_topic_names_every_published_event() -> None:
    rows = [line for line in (ROOT / "docs" / "integrate" / "mqtt.md").read_text(encoding="utf-8").splitlines()
            if line.lstrip().startswith("| `event` |")]
    assert len(rows) == 2  # the contract's table, and what is published
    for row in rows:
        assert set(re.findall(r"`([a-z_]+)`", row)) >= wire.published(companion.games.manifests())


def test_a_play_is_rated_as_its_manifest_says_and_as_its_fields_say_without_what_it_ranks_by() -> None:
    from venue import league

    p = [{"seat": "red", "winner": True, "score": 1, "team": "village", "place": None},
         {"seat": "blue", "winner": False, "score": 5, "team": "werewolf", "place": 1},
         {"seat": "green", "winner": False, "score": 0, "team": "werewolf", "place": None}]
    assert league.sides(p, "teams") == ([[0], [1, 2]], [1, 2])  # the game's rating wins over a stray place
    assert league.sides(p) == ([[0], [1], [2]], [2, 1, 2])  # a game unknown: as its fields say
    unplaced = [{**x, "place": None} for x in p]
    assert league.sides(unplaced, "places") == league.sides(unplaced)  # nobody placed: never a crash
    assert schema.rating("demagogos") == "places" and schema.rating("one-night") == "teams"
    assert schema.rating("no-such-game") is None
