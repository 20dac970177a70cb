"""One Night's editions and the roles tables play (rules/one-night-werewolf.md, *Editions*):
the deck built by tapping it, the wake order per deck, the same night for any deal of a deck,
the verdict table, the doppelganger's and the hunter's reveal, and the examples' results."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from companion.app.simulate import run_script
from companion.core.engine import Setup
from companion.core.events import Press, Refusal, Report, Say, Tap
from companion.games.one_night import OneNight
from companion.games.one_night.night import called_roles
from companion.games.one_night.roles import EDITIONS, ROLES, in_edition, key_of
from companion.games.one_night.verdict import dead, verdict
from conftest import example_script, example_scripts

ROOT = Path(__file__).resolve().parents[4]
SEATS = ("red", "blue", "green", "yellow", "purple")


def simulate(tmp_path: Path, steps: list[dict[str, Any]], seed: int = 3, lang: str = "en",
             name: str = "s") -> list[dict[str, Any]]:
    script = tmp_path / f"{name}.yaml"
    script.write_text(json.dumps({"seed": seed, "config": {"language": lang, "games": {"one-night": {
        "jitter_s": [0, 2], "discussion_min": 1}}}, "steps": steps}))
    out = io.StringIO()
    run_script(script, out=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def seated(*before: str, seats: tuple[str, ...] = SEATS) -> list[dict[str, Any]]:
    return [{"tap": "game/one-night"}, *({"tap": t} for t in before), *({"tap": f"player/{s}"} for s in seats)]


# ------------------------------------------------------------ building the deck
def test_role_card_taps_are_counted_aloud_and_refused_with_the_reason(tmp_path: Path) -> None:
    events = simulate(tmp_path, [*seated("rules/ultimate", "onw/werewolf/1", "onw/madman/1", "onw/villager/4",
                                         "onw/werewolf/1", "onw/robber/1")])
    said = [(e["key"], e.get("params")) for e in events if e["event"] == "say" and e["key"].startswith("onw.")]
    texts = [e["text"] for e in events if e["event"] == "say" and e["key"] == "onw.deck.tapped"]
    assert texts == ["Werewolf. 1 in the deck: werewolf.", "Robber. 2 in the deck: werewolf and robber."]
    refused = [e["reason"] for e in events if e["event"] == "rejected"]
    assert refused == ["the ultimate edition has no madman", "the ultimate set holds 3 villager cards",
                       "onw/werewolf/1 is in the deck already"]
    assert [k for k, _ in said if k.startswith("onw.refuse")] == [
        "onw.refuse.not_in_edition", "onw.refuse.set_holds", "onw.refuse.card_in_deck"]


@pytest.mark.parametrize("cards, reason", [
    (["werewolf/1", "werewolf/2", "seer/1", "thief/1", "mason/1", "villager/1", "villager/2", "villager/3"],
     "a mason alone: masons come in pairs or not at all"),
    (["werewolf/1", "werewolf/2", "seer/1", "thief/1", "villager/1", "villager/2", "villager/3"],
     "1 cards missing: 5 players and 3 in the centre"),
    (["werewolf/1", "werewolf/2", "seer/1", "thief/1", "villager/1", "villager/2", "villager/3", "drunk/1",
      "insomniac/1"], "1 cards too many for 5 players"),
])
def test_next_refuses_a_deck_that_cannot_be_played_naming_what_is_wrong(tmp_path: Path, cards: list[str],
                                                                        reason: str) -> None:
    events = simulate(tmp_path, [*seated("rules/ultimate", *(f"onw/{c}" for c in cards)), {"press": "next"}])
    (rejected,) = [e for e in events if e["event"] == "rejected"]
    assert rejected["input"] == "next" and rejected["reason"] == reason
    assert not [e for e in events if e["event"] == "game_started"]


@pytest.mark.parametrize("players, cards, ok", [
    (5, 7, True), (5, 6, False), (7, 9, True), (7, 8, True),  # rule 7: at 7 players 1 centre card too
])
def test_rule_7_jinrou_centre_is_two_cards_or_one_at_seven_players(players: int, cards: int, ok: bool) -> None:
    deck = [f"onw/villager/{i}" for i in range(1, 5)] + ["onw/werewolf/1", "onw/werewolf/2", "onw/seer/1",
                                                         "onw/thief/1", "onw/madman/1", "onw/tanner/1"]
    names = tuple(f"p{i}" for i in range(players))
    if ok:
        OneNight.check_cards(names, (), {}, deck[:cards])
    else:
        with pytest.raises(Refusal):
            OneNight.check_cards(names, (), {}, deck[:cards])


def test_no_role_taps_deal_the_editions_default_deck_and_the_deck_is_public(tmp_path: Path) -> None:
    """Rule 8: ultimate's default decks (players + 3); the deck is said at the deal, shown on the
    public view and in onw_result."""
    for n, last in ((3, None), (4, "drunk"), (5, "insomniac"), (6, "minion"), (7, "hunter"), (8, "tanner"),
                    (9, "villager"), (10, "doppelganger")):
        engine = OneNight(Setup(tuple(f"p{i}" for i in range(n)), ("ultimate",)))
        assert sum(engine.deck.values()) == n + 3 and engine.deck.get("mason") is None
        if last:
            smaller = OneNight(Setup(tuple(f"p{i}" for i in range(n - 1)), ("ultimate",))).deck
            assert {r: c - smaller.get(r, 0) for r, c in engine.deck.items() if c != smaller.get(r, 0)} == {last: 1}
    assert OneNight(Setup(SEATS[:3], ("ultimate",))).deck == {
        "villager": 1, "werewolf": 2, "seer": 1, "thief": 1, "troublemaker": 1}
    engine = OneNight(Setup(SEATS, ("ultimate",)))
    said = [o for o in engine.start() if isinstance(o, Say) and o.key == "onw.deck.role"]
    assert [o.params["role"] for o in said] == ["villager", "werewolf", "seer", "robber", "troublemaker", "drunk",
                                                "insomniac"]
    assert engine.public_view()["deck"] == engine.deck and engine.public_view()["edition"] == "ultimate"


# ------------------------------------------------------------------- the night
def test_ultimate_wakes_in_the_published_order_with_the_doppelgangers_sub_steps() -> None:
    every = {r: ROLES[r].copies for r in in_edition("ultimate") if not ROLES[r].box}  # the base box
    assert called_roles(every, "ultimate") == (
        "doppelganger", "doppelganger-minion", "werewolf", "minion", "mason", "seer", "thief", "troublemaker",
        "drunk", "insomniac", "doppelganger-insomniac")
    assert called_roles({**every, "doppelganger": 0}, "ultimate") == (
        "werewolf", "minion", "mason", "seer", "thief", "troublemaker", "drunk", "insomniac")
    assert called_roles({r: ROLES[r].copies for r in in_edition("jinrou")}) == ("seer", "werewolf", "thief")


def night(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    start = next(i for i, e in enumerate(events) if e.get("key") == "onw.night.start")
    end = next(i for i, e in enumerate(events) if e.get("key") == "onw.night.morning")
    return [(e["t"], e["event"], e.get("key"), e.get("text"), e.get("sound"), e.get("action"))
            for e in events[start:end + 1] if e["event"] in ("say", "ambience")]


def deck_with(edition: str, role: str, players: int) -> list[str]:
    """A playable deck holding ``role``: its cards, then the default deck's, to players + centre."""
    cards = [f"onw/{role}/{i}" for i in range(1, (2 if role in EDITIONS[edition].pairs else 1) + 1)]
    for r, n in EDITIONS[edition].default_decks[players].items():
        cards += [f"onw/{r}/{i}" for i in range(1, n + 1) if f"onw/{r}/{i}" not in cards]
    return cards[:players + EDITIONS[edition].centre[0] + ROLES[role].extra]  # the alpha wolf's centre card


@pytest.mark.parametrize("edition, role", [(e, r) for e in EDITIONS for r in in_edition(e)])
def test_two_deals_of_one_deck_give_the_same_night_for_every_role(tmp_path: Path, edition: str, role: str) -> None:
    """The night is a function of the deck and the secret jitter only: other players, the cards
    tapped in another order and taps at night change no line, no time, no sound."""
    rules = ("rules/ultimate",) if edition == "ultimate" else ()
    deck = deck_with(edition, role, 5)
    a = simulate(tmp_path, [*seated(*rules, *deck), {"press": "next"}, {"press": "next"}, {"wait": 200}], name="a")
    b = simulate(tmp_path, [*seated(*rules, *reversed(deck), seats=("white", "black", "orange", "red", "blue")),
                            {"press": "next"}, {"press": "next"}, {"wait": 7}, {"tap": f"onw/{role}/1"},
                            {"press": "repeat"}, {"wait": 200}], name="b")
    assert night(a) == night(b)
    keys = [k for _, _, k, *_ in night(a)]
    prefix = EDITIONS[edition].prefix
    assert (f"{prefix}.{key_of(role)}.wake" in keys) == (edition in ROLES[role].wake)  # woken whatever the centre holds
    assert {s for _, ev, _, _, s, _ in night(a) if ev == "ambience"} == {"table-tapping"}


def test_a_roles_own_window_is_configurable() -> None:
    engine = OneNight(Setup(SEATS, ("ultimate",), {"windows": {"seer": 20}}))
    engine.state.jitter_ms = [0] * len(called_roles(engine.deck, "ultimate"))
    delays = {seg.name: seg.delay for seg in engine.script}
    assert delays["night:seer:wake"] == 20 and delays["night:thief:wake"] == 10


# ----------------------------------------------------------------- the verdict
# Each row: the rule it checks, the final roles (players a, b, c, d, e in seat order), the
# executed, the dead hunters' votes; expected dead, winning teams and winners, worked out by
# hand from rules/one-night-werewolf.md (*Who wins*, rules 1-6).
VERDICTS = [
    ("1: the tanner dies alone, a werewolf held: tanner wins; 3: the dead tanner denies the werewolves",
     "tanner werewolf villager seer minion", ["a"], {}, ["a"], ["tanner"], ["a"]),
    ("4: a tanner and a werewolf die: tanner and village win",
     "tanner werewolf villager seer", ["a", "b"], {}, ["a", "b"], ["village", "tanner"], ["a", "c", "d"]),
    ("2a: a werewolf dies: the village wins, the minion loses",
     "werewolf werewolf villager minion", ["a"], {}, ["a"], ["village"], ["c"]),
    ("3: a werewolf held, no werewolf dies, no tanner: werewolves and minion win",
     "werewolf werewolf villager minion", ["c"], {}, ["c"], ["werewolf"], ["a", "b", "d"]),
    ("5: the minion dies, a werewolf held, no werewolf dies: the minion still wins",
     "werewolf werewolf villager minion", ["d"], {}, ["d"], ["werewolf"], ["a", "b", "d"]),
    ("2b: no werewolf held, nobody dies: the village wins",
     "villager seer thief", [], {}, [], ["village"], ["a", "b", "c"]),
    ("3: no werewolf held, someone other than the minion dies: the minion wins alone",
     "minion villager seer", ["b"], {}, ["b"], ["werewolf"], ["a"]),
    ("3: no werewolf held, a villager and the tanner die: the tanner denies the minion",
     "minion villager tanner seer", ["b", "c"], {}, ["b", "c"], ["tanner"], ["c"]),
    ("6: no werewolf held, only the minion dies: the village wins, not the minion",
     "minion villager seer", ["a"], {}, ["a"], ["village"], ["b", "c"]),
    ("6: the same with the madman (jinrou)",
     "madman villager seer", ["a"], {}, ["a"], ["village"], ["b", "c"]),
    ("4: no werewolf held, a villager dies, no minion: nobody wins",
     "villager seer thief", ["a"], {}, ["a"], [], []),
    ("hunter chain: a hunter shot by a hunter shoots too; the werewolf dies: the village wins",
     "hunter hunter werewolf villager", ["a"], {"a": "b", "b": "c"}, ["a", "b", "c"], ["village"], ["a", "b", "d"]),
    ("hunter shoots the tanner: the tanner wins, no werewolf died: the village loses, the werewolves are denied",
     "hunter tanner werewolf villager", ["a"], {"a": "b"}, ["a", "b"], ["tanner"], ["b"]),
    ("the doppelganger who copied a werewolf is a werewolf: it wins with them",
     "doppelganger:werewolf villager seer", ["b"], {}, ["b"], ["werewolf"], ["a"]),
    ("the doppelganger who copied the tanner wins alone when it dies; a living tanner does not",
     "tanner doppelganger:tanner werewolf villager", ["b"], {}, ["b"], ["tanner"], ["b"]),
    ("3 with the madman (jinrou): a werewolf held and none dies: werewolves and madman win",
     "werewolf madman villager", ["c"], {}, ["c"], ["werewolf"], ["a", "b"]),
    ("a dead hunter's vote at an already dead player ends the chain",
     "hunter werewolf villager", ["a", "b"], {"a": "b"}, ["a", "b"], ["village"], ["a", "c"]),
]


@pytest.mark.parametrize("rule, roles, executed, votes, died, teams, winners", VERDICTS, ids=[v[0] for v in VERDICTS])
def test_verdict_table(rule: str, roles: str, executed: list[str], votes: dict[str, str], died: list[str],
                       teams: list[str], winners: list[str]) -> None:
    players = "abcde"[:len(roles.split())]
    final = dict(zip(players, roles.split(), strict=True))
    everyone_dead = dead(executed, final, votes)
    assert everyone_dead == died
    v = verdict(players, final, executed, [p for p in everyone_dead if p not in executed])
    assert list(v.winning_teams) == teams
    assert v.winning_team == (teams[0] if teams else "nobody")
    assert list(v.winners) == winners


# ------------------------------------------------- the reveal, on the engine
def feed(engine: OneNight, *inputs: Any) -> list[Any]:
    out: list[Any] = []
    for inp in inputs:
        out += engine.handle(Tap(inp) if isinstance(inp, str) else inp)
    return out


def at_reveal(cards: tuple[str, ...], players: tuple[str, ...] = SEATS[:3]) -> OneNight:
    engine = OneNight(Setup(players, ("ultimate",), {}, cards))
    engine.state.step = "reveal"  # the night and the vote as the other tests play them
    return engine


def test_the_doppelganger_shows_the_role_it_copied_then_plays_it_and_a_dead_hunter_is_asked() -> None:
    cards = ("onw/doppelganger/1", "onw/hunter/1", "onw/werewolf/1", "onw/villager/1", "onw/seer/1", "onw/thief/1")
    engine = at_reveal(cards)
    feed(engine, "player/red", "onw/doppelganger/1")
    with pytest.raises(Refusal) as refused:
        feed(engine, "player/blue")  # the copied role's card first
    assert refused.value.key == "onw.refuse.copied_expected"
    with pytest.raises(Refusal):
        feed(engine, "onw/tanner/1")  # not in this deck
    feed(engine, "onw/hunter/1", "player/blue", "onw/werewolf/1", "player/green", "onw/villager/1", "player/red")
    out = feed(engine, Press("next"))
    assert engine.state.step == "hunter" and engine.waiting() == ["red"]
    assert [o.key for o in out if isinstance(o, Say)] == ["onw.hunter.ask"]
    out = feed(engine, "player/blue")
    (report,) = [o.fields for o in out if isinstance(o, Report)]
    assert report == {"executed": ["red"], "winning_team": "village", "winners": ["red", "green"],
                      "deck": {"villager": 1, "werewolf": 1, "seer": 1, "thief": 1, "doppelganger": 1, "hunter": 1},
                      "final_roles": {"red": "doppelganger:hunter", "blue": "werewolf",
                                                         "green": "villager"},
                      "dead": ["red", "blue"], "winning_teams": ["village"],
                      "artifacts": {}, "teams": {"red": "village", "blue": "werewolf", "green": "village"}}
    assert engine.result().teams == {"red": "village", "blue": "werewolf", "green": "village"}


def test_a_hunter_whose_vote_was_counted_shoots_without_being_asked() -> None:
    cards = ("onw/hunter/1", "onw/werewolf/1", "onw/villager/1", "onw/seer/1", "onw/thief/1", "onw/villager/2")
    engine = at_reveal(cards)
    # the count: red → blue, blue → red, green → red: red is executed, and red voted for blue
    feed(engine, "player/red", "player/blue", "player/blue", "player/red", "player/green", "player/red")
    feed(engine, "player/red", "onw/hunter/1", "player/blue", "onw/werewolf/1", "player/green", "onw/villager/1")
    out = feed(engine, Press("next"))
    assert engine.finished
    (report,) = [o.fields for o in out if isinstance(o, Report)]
    assert report["dead"] == ["red", "blue"] and report["winners"] == ["red", "green"]


def test_the_table_sees_each_card_once_shown_by_the_editions_name_and_the_hunters_shot_once_decided() -> None:
    cards = ("onw/doppelganger/1", "onw/hunter/1", "onw/werewolf/1", "onw/villager/1", "onw/seer/1", "onw/thief/1")
    engine = at_reveal(cards)
    assert "cards" not in engine.public_view()  # nothing shown yet: nothing to see
    feed(engine, "player/red", "onw/doppelganger/1")
    assert engine.public_view()["cards"] == {"red": ["doppelganger"]}  # the copied role is still to come
    feed(engine, "onw/hunter/1", "player/blue")
    assert engine.public_view()["cards"] == {"red": ["doppelganger", "hunter"]}  # blue taps, shows nothing yet
    feed(engine, "onw/thief/1", "player/green", "onw/werewolf/1", "player/red")
    view = engine.public_view()
    assert view["cards"] == {"red": ["doppelganger", "hunter"], "blue": ["robber"], "green": ["werewolf"]}
    assert view["executed"] == ["red"] and "shot" not in view  # the hunter is still to be asked
    feed(engine, Press("next"), "player/green")
    view = engine.public_view()
    assert view["executed"] == ["red"] and view["shot"] == ["green"] and "dead" not in view


# ------------------------------------------------------------------ examples
EXAMPLES = example_scripts("one-night/*.yaml")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_each_example_ends_as_its_expect_says(path: Path) -> None:
    expected = yaml.safe_load(path.read_text())["expect"]["onw_result"]
    out = io.StringIO()
    assert run_script(path, out=out) == 0
    (result,) = [e for e in map(json.loads, out.getvalue().splitlines()) if e["event"] == "onw_result"]
    assert {k: result[k] for k in expected} == expected


# ------------------------------------------------------------- the discussion
def test_one_more_minute_from_a_page_is_said_and_added_at_once(tmp_path: Path) -> None:
    events = simulate(tmp_path, [*seated(), {"press": "next"}, {"press": "next"}, {"wait": 60},
                                 {"submit": {"player": "red", "more_time": 1}}, {"wait": 300}])
    at = {e["key"]: e["t"] for e in events if e["event"] == "say"}
    start = at["onw.discussion.start_one"]  # a one-minute discussion
    assert start < at["onw.discussion.more_time"] == 60 < start + 60  # said when asked
    assert at["onw.discussion.one_minute_left"] == start + 60  # the minute counted in: one left at the old end
    assert at["onw.discussion.time_up"] == start + 120


def test_a_paused_discussion_stops_its_clock_and_goes_on_from_the_last_minute(tmp_path: Path) -> None:
    events = simulate(tmp_path, [*seated(), {"press": "next"}, {"press": "next"}, {"wait": 50},
                                 {"submit": {"player": "blue", "pause": 1}}, {"wait": 600},
                                 {"submit": {"player": "blue", "pause": 0}}, {"wait": 300}])
    said = [(e["t"], e["key"]) for e in events if e["event"] == "say"]
    at = dict((k, t) for t, k in said)
    assert "onw.discussion.time_up" in at and at["onw.discussion.paused"] < at["onw.discussion.go_on"]
    assert at["onw.discussion.time_up"] == at["onw.discussion.go_on"] + 60  # the minute the journal held
    assert not [k for t, k in said if at["onw.discussion.paused"] < t < at["onw.discussion.go_on"]]


# The time left as the speaker says it, in seconds, from the warnings' lines' text.
SAID_LEFT = {"onw.discussion.one_minute_left": lambda text: 60,
             "onw.discussion.minutes_left": lambda text: 60 * int(text.split()[0]),
             "onw.discussion.seconds_left": lambda text: int(text.split()[0])}


def test_the_time_left_the_speaker_says_is_the_time_the_clocks_show(tmp_path: Path) -> None:
    """The clocks count down to time up; after +1 min and after a pause the
    speaker's "N left" is that same time, and going on says it too."""
    more = simulate(tmp_path, [*seated(), {"press": "next"}, {"press": "next"}, {"wait": 60},
                               {"submit": {"player": "red", "more_time": 1}}, {"wait": 300}], name="more")
    paused = simulate(tmp_path, [*seated(), {"press": "next"}, {"press": "next"}, {"wait": 50},
                                 {"submit": {"player": "blue", "pause": 1}}, {"wait": 600},
                                 {"submit": {"player": "blue", "pause": 0}}, {"wait": 300}], name="paused")
    for events in (more, paused):
        said = [e for e in events if e["event"] == "say"]
        (end,) = [e["t"] for e in said if e["key"] == "onw.discussion.time_up"]
        left = [(e["t"], SAID_LEFT[e["key"]](e["text"])) for e in said if e["key"] in SAID_LEFT]
        assert left and [round(end - t, 3) for t, _ in left] == [n for _, n in left]
    (go_on,) = [e["t"] for e in paused if e["event"] == "say" and e["key"] == "onw.discussion.go_on"]
    assert [e["key"] for e in paused if e["event"] == "say" and e["t"] == go_on][-1] in SAID_LEFT
    assert 60 in [SAID_LEFT[e["key"]](e["text"]) for e in more  # "One minute left" at 1:00
                  if e["event"] == "say" and e["key"] in SAID_LEFT]


def test_back_takes_the_last_role_card_out_and_a_restart_keeps_the_tapped_deck(tmp_path: Path) -> None:
    deck = deck_with("ultimate", "hunter", 5)
    events = simulate(tmp_path, [*seated("rules/ultimate", *deck, "onw/tanner/1"), {"press": "next"},
                                 {"press": "back"}, {"press": "back"}, {"press": "back"}, {"press": "back"},
                                 {"press": "back"}, {"press": "back"},  # the seats, then the tanner
                                 *({"tap": f"player/{s}"} for s in SEATS), {"press": "next"}])
    refused = [e["reason"] for e in events if e["event"] == "rejected"]
    assert refused == ["1 cards too many for 5 players"]
    (started,) = [e for e in events if e["event"] == "game_started"]
    said = " ".join(e["text"] for e in events if e["event"] == "say" and e["key"] == "onw.deck.role")
    assert "Hunter: 1." in said and "Tanner" not in said and started["players"] == list(SEATS)


@pytest.mark.parametrize("lang, seats_again", [("en", "tap the player cards again"),
                                                ("ja", "プレイヤーカードをもう一度タップ")])
def test_finding_a_too_long_decks_advice_says_back_takes_the_seats_off_first(tmp_path: Path, lang: str,
                                                                              seats_again: str) -> None:
    """Back undoes the last tap, and the seats were tapped after the cards: the
    advice says so (a card comes out only after every seat), and to seat again."""
    deck = deck_with("ultimate", "hunter", 5)
    events = simulate(tmp_path, [*seated("rules/ultimate", *deck, "onw/tanner/1"), {"press": "next"}], lang=lang)
    (advice,) = [e["text"] for e in events if e["event"] == "say" and e["key"] == "onw.refuse.deck_long"]
    assert seats_again in advice, advice


def test_the_export_records_each_players_final_role_and_the_edition(tmp_path: Path) -> None:
    import argparse

    from companion.app import scores

    assert run_script(example_script("one-night/ultimate-5p.yaml"), state=tmp_path / "state",
                      out=io.StringIO()) == 0
    out = io.StringIO()
    args = argparse.Namespace(state=tmp_path / "state", export="json", output=None, config=[])
    assert scores.run(args, out=out) == 0
    (play,) = json.loads(out.getvalue())["plays"]
    assert {p["name"]: p["role"] for p in play["players"]} == {
        "red": "doppelganger:hunter", "blue": "werewolf", "green": "seer", "yellow": "thief", "purple": "villager"}
    assert play["rules"] == ["ultimate"] and [p["name"] for p in play["players"] if p["winner"]] == [
        "red", "green", "yellow", "purple"]


def test_the_config_picks_the_edition_and_its_rule_card_picks_it_over_the_config() -> None:
    assert OneNight(Setup(SEATS, (), {"edition": "ultimate"})).edition == "ultimate"
    assert OneNight(Setup(SEATS, (), {"edition": "ultimate"})).deck == EDITIONS["ultimate"].default_decks[5]
    assert OneNight(Setup(SEATS, ("ultimate",), {"edition": "jinrou"})).edition == "ultimate"
    with pytest.raises(Refusal) as refused:  # jinrou is for 3 to 7
        OneNight.check_setup(tuple(f"p{i}" for i in range(8)), (), {})
    assert refused.value.key == "refuse.player_count"
    OneNight.check_setup(tuple(f"p{i}" for i in range(10)), ("ultimate",), {})
