"""Madness Hour at the table, through the real loop, router, journal and
simulated hardware: the Girl's secret, refusals, a power cut, the scripts."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from companion.app.simulate import load_script
from companion.core.events import TABLE, Submit
from companion.games.madness_hour import MadnessHour
from conftest import Table as SimTable
from conftest import example_script, example_scripts
from voice.base import RecordingVoice

ROOT = Path(__file__).resolve().parents[4]
SCRIPTS = [example_script("madness-hour.yaml"), *example_scripts("madness-hour/*.yaml")]


class Table(SimTable):
    """The shared simulated table, also recording everything public: the
    router's TABLE messages (log events, commands: beeps, LEDs), the speech,
    the public page."""

    def __init__(self, state: Path, **overrides: Any) -> None:
        self.voice = RecordingVoice()
        self.public: list[Any] = []
        super().__init__(state, voice=self.voice, **overrides)
        self.sim.app.router.subscribe(self.public.append, TABLE)

    def do(self, kind: str, value: Any) -> None:
        self.sim.step(kind, Submit(**value) if kind == "submit" else value)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.sim.loop.read_side.public())

    @property
    def engine(self) -> MadnessHour:
        engine = self.sim.loop.table.engine
        assert isinstance(engine, MadnessHour)
        return engine


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path)
    yield t
    t.close()


def seat(t: Table, *colours: str) -> None:
    t.do("tap", "game/madness-hour")
    for c in colours:
        t.do("tap", f"player/{c}")
    t.do("press", "next")


# ------------------------------------------------------------ the secret
def play_until_the_verdict(t: Table, card: str, other: str) -> list[Any]:
    """A whole game up to the verdict, the public page after every step."""
    steps: list[tuple[str, Any]] = [
        ("tap", "game/madness-hour"), ("tap", "player/red"), ("tap", "player/blue"), ("tap", "player/green"),
        ("press", "next"), ("tap", "player/red"), ("press", "repeat"),
        ("tap", f"mh/girl/{card}"),  # face down
        ("press", "repeat"), ("press", "back"),  # nothing to undo: the card is final
        ("tap", f"mh/girl/{other}"),  # a second Girl card: refused, the same way
        ("press", "next"), ("press", "next"), ("press", "back"), ("press", "next"), ("press", "repeat"),
        ("unplug", "reader"), ("plug", "reader"),
        ("tap", "mh/climax"), ("wait", 61),
        ("tap", "player/blue"), ("tap", "mh/side/keep"), ("tap", "player/green"), ("tap", "mh/side/kill"),
        ("submit", {"player": "blue", "field": "strength", "value": 3}),
        ("submit", {"player": "green", "field": "strength", "value": 3}),
        ("press", "next"),  # a tie: keep wins, green dies
        ("tap", f"mh/girl/{other}"),  # refused: the companion holds the card
        ("tap", "player/blue"), ("tap", "mh/state/sane"), ("press", "repeat"),
    ]
    pages = []
    for kind, value in steps:
        t.do(kind, value)
        pages.append(t.snapshot())
    return pages


def public_record(t: Table, pages: list[Any]) -> list[Any]:
    messages = [m.fields if hasattr(m, "fields") else m for m in t.public]
    spoken = [(line.key, line.text, line.params) for line in t.voice.lines]
    return [json.loads(json.dumps(messages, default=repr)), spoken, pages]


def test_the_girls_card_human_and_evil_god_are_identical_in_public_until_the_ending(tmp_path: Path) -> None:
    human, evil = Table(tmp_path / "human"), Table(tmp_path / "evil")
    try:
        h = public_record(human, play_until_the_verdict(human, "human", "evil-god"))
        e = public_record(evil, play_until_the_verdict(evil, "evil-god", "human"))
        assert h == e  # every public event (accepted mh/girl/*, refusals), command, line and page
        assert any(m.get("input") == "mh/girl/*" for m in h[0] if isinstance(m, dict))
        assert any(m.get("event") == "rejected" and m.get("input") == "mh/girl/*" for m in h[0]
                   if isinstance(m, dict))
        dumped = json.dumps(h)
        assert "mh/girl/human" not in dumped and "mh/girl/evil-god" not in dumped and "evil" not in dumped
        # the timers are the same too: every event at the same virtual time
        assert [ev["t"] for ev in human.events] == [ev["t"] for ev in evil.events]
        # and only now, at the verdict, do they differ
        human.do("press", "next")
        evil.do("press", "next")
        results = [[ev for ev in x.events if ev["event"] == "mh_result"] for x in (human, evil)]
        assert [r[0]["girl"] for r in results] == ["human", "evil-god"]
        assert results[0][0]["winners"] == ["red", "blue"]  # human, alive: the Girl + sane blue
        assert results[1][0]["winners"] == ["red"]  # evil god, alive: the Girl + mad survivors (none)
    finally:
        human.close()
        evil.close()


# ------------------------------------------------------------- refusals
def at_explore(t: Table) -> None:
    seat(t, "red", "blue", "green")
    t.do("tap", "player/red")
    t.do("tap", "mh/girl/human")


def at_vote(t: Table) -> None:
    at_explore(t)
    t.do("tap", "mh/climax")
    t.do("press", "next")


def at_ending(t: Table) -> None:
    at_vote(t)
    for p in ("blue", "green"):
        t.do("tap", f"player/{p}")
        t.do("tap", "mh/side/kill")


REFUSALS = [
    ("a second Girl card", at_explore, [("tap", "mh/girl/evil-god")], "mh.refuse.girl_card_twice"),
    ("a Girl card from another seat", None, [("tap", "player/blue")], "mh.refuse.not_girl_seat"),
    ("a vote before the climax", at_explore, [("tap", "mh/side/keep")], "mh.refuse.vote_before_climax"),
    ("the Girl voting", at_vote, [("tap", "player/red")], "mh.refuse.girl_votes"),
    ("a side card before a player card", at_vote, [("tap", "mh/side/kill")], "mh.refuse.side_before_player"),
    ("the Girl's player card at the ending", at_ending, [("tap", "player/red")], "mh.refuse.girl_not_here"),
    ("a component of another game", at_explore, [("tap", "skb/knight/1")], "refuse.other_game"),
    ("the verdict before every state", at_ending, [("press", "next")], "mh.refuse.ending_incomplete"),
]


@pytest.mark.parametrize(("name", "before", "steps", "key"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_change_nothing(table: Table, name: str, before: Any, steps: list[tuple[str, Any]],
                                 key: str) -> None:
    if before is None:  # the Girl has tapped her player card, her Girl card is awaited
        seat(table, "red", "blue", "green")
        table.do("tap", "player/red")
    else:
        before(table)
    state, page = copy.deepcopy(table.engine.state), table.snapshot()
    mark = len(table.events)
    for kind, value in steps:
        table.do(kind, value)
    new = table.events[mark:]
    assert [e["event"] for e in new if e["event"] in ("accepted", "rejected")] == ["rejected"]
    assert [e["key"] for e in new if e["event"] == "say"] == [key]
    assert table.engine.state == state and table.snapshot() == page


def test_a_state_card_for_one_killed_in_the_battle_is_refused(table: Table) -> None:
    at_vote(table)
    table.do("tap", "player/blue")
    table.do("tap", "mh/side/keep")
    table.do("tap", "player/green")
    table.do("tap", "mh/side/kill")
    table.do("tap", "mh/side/keep")  # no phones: the keep side won; green died
    state = copy.deepcopy(table.engine.state)
    table.do("tap", "player/green")
    assert table.events[-2]["event"] == "rejected" and table.engine.state == state
    assert [e["key"] for e in table.events if e["event"] == "say"][-1] == "mh.refuse.state_for_dead"


# ------------------------------------------------------------ a power cut
def test_a_power_cut_in_the_discussion_resumes_the_timer_and_keeps_the_secret(tmp_path: Path) -> None:
    first = Table(tmp_path)
    at_explore(first)
    first.do("tap", "mh/climax")
    first.do("wait", 35)  # the 30-seconds-left tick is journaled at 30 s
    first.close()
    again = Table(tmp_path)
    try:
        said = [(e["key"], e["text"]) for e in again.events if e["event"] == "say"]
        assert ("mh.resume.discussion", "We are back. The discussion goes on: 30 seconds left.") in said
        assert not any("human" in text for _, text in said)  # the secret is not spoken on resume
        assert again.engine.state.card == "human"  # … and it survived the restart
        start = again.events[-1]["t"]
        again.do("wait", 40)
        timed = [(e["t"] - start, e["key"]) for e in again.events if e["event"] == "say" and e["t"] > start]
        assert timed[:2] == [(20, "mh.climax.seconds_left"), (30, "mh.climax.time_up")]
    finally:
        again.close()


def test_turn_timer_is_off_by_default_and_warns_when_set(tmp_path: Path) -> None:
    quiet = Table(tmp_path / "a")
    timed = Table(tmp_path / "b", games={"madness-hour": {"turn_s": 60, "turn_warning_s": 15}})
    try:
        for t in (quiet, timed):
            at_explore(t)
            t.do("press", "next")
            t.do("wait", 70)
        assert not [e for e in quiet.events if e["event"] == "say" and e["t"] > 0]  # the turn ran on, unsaid
        keys = [(e["key"], e["text"]) for e in timed.events if e["event"] == "say" and e["t"] > 0]
        assert keys == [("mh.turn.warning", "15 seconds left in this turn."),
                        ("mh.turn.time_up", "Time is up for Red's turn.")]
    finally:
        quiet.close()
        timed.close()


# --------------------------------------------------------------- scripts
@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_each_script_ends_as_its_expect_says(path: Path, tmp_path: Path) -> None:
    overrides, steps, _ = load_script(path)
    expected = yaml.safe_load(path.read_text())["expect"]["mh_result"]
    t = Table(tmp_path, **(overrides or {}))
    try:
        for _line, kind, value in steps:
            t.sim.step(kind, value)
        (result,) = [e for e in t.events if e["event"] == "mh_result"]
        assert {k: result[k] for k in expected} == expected
    finally:
        t.close()


def test_there_is_a_script_for_every_player_count() -> None:
    assert {p.stem for p in SCRIPTS} == {"madness-hour", "2p", "3p", "4p", "5p"}
