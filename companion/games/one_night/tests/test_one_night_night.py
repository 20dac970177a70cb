"""One Night Werewolf: the deck, the night script (no tell), the discussion timer,
and resuming the night after a power cut.  Harness: test_one_night.py."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.core.engine import Setup
from companion.core.events import (
    CancelTimer,
    Draw,
    Drawn,
    Input,
    Press,
    Say,
    SetTimer,
    Sound,
    Submit,
    Tap,
    TimerFired,
)
from companion.games.one_night.engine import OneNight
from companion.games.one_night.tests.test_one_night import COLOURS, NEXT, Table, make

ROLE_ORDER = ["onw.seer.wake", "onw.werewolf.wake", "onw.thief.wake"]


def night(table: Table) -> list[tuple[float, Any]]:
    """Every output from `next` to the morning line, with its scheduled time."""
    start = len(table.log)
    table.feed(NEXT)
    table.run_until("discussion")
    return [(round(t, 6), out) for t, out in table.log[start:]]


def deck_said(engine: OneNight) -> tuple[dict[str, int], int]:
    out = engine.start()
    roles = {o.params["role"]: o.params["count"] for o in out if isinstance(o, Say) and o.key == "onw.deck.role"}
    (centre,) = [o.params["count"] for o in out if isinstance(o, Say) and o.key == "onw.deck.centre"]
    return roles, centre


# ------------------------------------------------------------------------ decks
@pytest.mark.parametrize("n, villagers, centre", [(3, 1, 2), (4, 2, 2), (5, 3, 2), (6, 4, 2), (7, 4, 1)])
def test_deck_per_player_count(n: int, villagers: int, centre: int) -> None:
    # 4 players: 2 villagers, 2 werewolves, seer, thief; +1 villager a player; [ruling] the set
    # holds 4 villagers: 3 players get 1, 7 players keep 4 and only 1 centre card.
    assert deck_said(make(n)) == ({"villager": villagers, "werewolf": 2, "seer": 1, "thief": 1}, centre)
    assert make(n).cards == tuple(
        [f"onw/villager/{i}" for i in range(1, villagers + 1)]
        + ["onw/werewolf/1", "onw/werewolf/2", "onw/seer/1", "onw/thief/1"])


def test_deck_override_from_config_changes_the_deck_the_cards_and_the_night() -> None:
    options: dict[str, Any] = {"deck": {"4": {"villager": 3, "werewolf": 1, "seer": 1}}}  # YAML: str keys
    engine = make(4, **options)
    assert deck_said(engine) == ({"villager": 3, "werewolf": 1, "seer": 1}, 1)
    assert "onw/thief/1" not in engine.cards and "onw/villager/3" in engine.cards
    keys = [o.key for _, o in night(Table.started(4, **options)) if isinstance(o, Say)]
    assert "onw.thief.wake" not in keys and "onw.seer.wake" in keys
    assert deck_said(make(5, **options))[0]["villager"] == 3  # other counts keep the default


# ------------------------------------------------------------------- the night
def test_night_script_for_five_players_with_default_options() -> None:
    table = Table.started(5)
    script = [(t, o.key if isinstance(o, Say) else o) for t, o in night(table)
              if not isinstance(o, (SetTimer, Draw))]
    assert script == [
        (0, "onw.night.start"), (0, Sound("table-tapping", True)),
        (3, "onw.seer.wake"), (13, "onw.seer.sleep"),
        (16, "onw.werewolf.wake"), (26, "onw.werewolf.sleep"),
        (29, "onw.thief.wake"), (39, "onw.thief.sleep"),
        (42, Sound("table-tapping", False)), (42, "onw.night.morning"),
        (42, "onw.discussion.start"),
    ]
    assert table.engine.eyes_closed is False


def test_night_is_quiet_and_every_role_in_the_deck_is_called_at_every_count() -> None:
    for n in range(3, 8):
        table = Table.started(n)
        table.feed(NEXT)
        assert table.engine.eyes_closed
        table.run_until("discussion")
        assert [k for _, k in table.says() if k.endswith(".wake")] == ROLE_ORDER


def test_masking_off_plays_no_ambience() -> None:
    assert not any(isinstance(o, Sound) for _, o in night(Table.started(masking=False)))


def test_pace_multiplies_windows_and_pauses() -> None:
    says = [(t, o.key) for t, o in night(Table.started(pace=0.5)) if isinstance(o, Say)]
    assert says[:3] == [(0, "onw.night.start"), (1.5, "onw.seer.wake"), (6.5, "onw.seer.sleep")]
    assert says[-2] == (21, "onw.night.morning")


def windows(seed: int, **options: Any) -> list[float]:
    times = {o.key: t for t, o in night(Table.started(seed=seed, **options)) if isinstance(o, Say)}
    return [times[f"onw.{r}.sleep"] - times[f"onw.{r}.wake"] for r in ("seer", "werewolf", "thief")]


def test_jitter_differs_by_seed_stays_in_range_and_replays_the_same() -> None:
    drawn = [windows(seed, jitter_s=[0, 5]) for seed in range(20)]
    assert all(10 <= w <= 15 for ws in drawn for w in ws)
    assert len({tuple(ws) for ws in drawn}) == 20
    assert len({w for ws in drawn for w in ws}) > 50  # roles differ too, not one draw per night
    assert windows(7, jitter_s=[0, 5]) == drawn[7]


def test_night_is_the_same_whoever_plays_and_whatever_was_dealt() -> None:
    # The engine never learns the deal; the night may depend on the player count only.
    a = night(Table(OneNight(Setup(players=COLOURS[:5], options={"jitter_s": [1, 4]})), seed=3))
    b = night(Table(OneNight(Setup(players=("white", "orange", "ann", "bo", "cy"),
                                   options={"jitter_s": [1, 4]})), seed=3))
    assert a == b


TABLE_INPUTS = st.one_of(
    st.sampled_from([Press("next"), Press("back"), Press("repeat")]),
    st.sampled_from([f"player/{c}" for c in COLOURS + ("black",)]
                    + ["onw/werewolf/1", "onw/werewolf/2", "onw/seer/1", "onw/thief/1", "onw/villager/3",
                       "onw/villager/4", "skb/knight/1", "game/one-night", "lang/ja"]).map(Tap),
)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10), taps=st.lists(st.tuples(st.floats(0, 41.9), TABLE_INPUTS), max_size=12))
def test_no_tell_the_night_ignores_every_tap_and_button(seed: int, taps: list[tuple[float, Input]]) -> None:
    options: dict[str, Any] = {"jitter_s": [0, 3]}
    quiet = night(Table.started(seed=seed, **options))
    table = Table.started(seed=seed, **options)
    table.feed(NEXT)
    for t, inp in sorted(taps, key=lambda x: x[0]):
        table.advance(t - table.t)
        if table.engine.state.step != "night":
            break
        refusal = table.refused(inp)  # and the state is unchanged
        assert refusal.key in ("onw.refuse.night", "refuse.quiet")
    table.run_until("discussion")
    assert [(round(t, 6), o) for t, o in table.log[-len(quiet):]] == quiet
    assert len(table.journal) == 1 + sum(isinstance(i, TimerFired | Drawn) for i in table.journal)


# -------------------------------------------------------------- the discussion
def discussion(**options: Any) -> Table:
    table = Table.started(**options)
    table.feed(NEXT)
    table.run_until("discussion")
    return table


def test_discussion_says_its_length_warns_and_calls_the_vote() -> None:
    table = discussion()  # starts at 42 s, 3 minutes
    assert table.log[-2][1] == Say("onw.discussion.start", {"minutes": 3})
    table.run_until("count")
    assert table.says(43) == [
        (162, "onw.discussion.one_minute_left"), (212, "onw.discussion.seconds_left"),
        (222, "onw.discussion.time_up"), (222, "onw.vote.call"),
        (224, "onw.vote.one"), (225, "onw.vote.two"), (226, "onw.vote.three"), (226, "onw.count.prompt"),
    ]


def test_discussion_warnings_are_configurable_and_skip_those_beyond_the_length() -> None:
    table = discussion(discussion_min=1, warnings_s=[120, 60, 30])
    assert table.log[-2][1] == Say("onw.discussion.start_one")
    table.run_until("vote")
    assert [k for _, k in table.says(43)] == ["onw.discussion.seconds_left", "onw.discussion.time_up",
                                              "onw.vote.call"]
    table = discussion(discussion_min=5, warnings_s=[120])
    table.run_until("vote")
    assert table.says(43)[0] == (42 + 180, "onw.discussion.minutes_left")


def test_next_ends_the_discussion_early() -> None:
    table = discussion()
    table.advance(30)
    out = table.feed(NEXT)
    assert out[:2] == [CancelTimer("discussion"), Say("onw.discussion.ended")]
    assert table.engine.state.step == "vote" and "discussion" not in table.timers
    table.run_until("count")
    assert table.t == 72 + 4


def test_finding_a_minute_asked_for_while_paused_shows_on_the_paused_clocks_at_once() -> None:
    """Paused, the clocks show the time the discussion goes on from: +1 min adds to it
    there and then, as it does to a running clock (and as going on says it)."""
    table = discussion()  # 3 minutes
    table.feed(Submit("blue", "pause", 1))
    before = table.engine.public_view()["paused_s"]
    table.feed(Submit("red", "more_time", 1))
    assert table.engine.public_view()["paused_s"] == before + 60
    out = table.feed(Submit("blue", "pause", 0))
    assert Say("onw.discussion.minutes_left", {"minutes": 4}) in out  # said as the paused clocks showed it


# ---------------------------------------------------------------------- resume
def run_night_with_cuts(cuts: list[float], seed: int = 0, jitter: tuple[float, float] = (0, 0)) -> Table:
    table = Table.started(seed=seed, jitter_s=list(jitter))
    table.feed(NEXT)
    for cut in sorted(cuts):
        table.advance(cut - table.t)
        if table.engine.state.step != "night":
            break
        table = table.power_cut()
    table.run_until("discussion")
    return table


def test_resume_in_a_role_window_restarts_that_turn_from_its_wake_line() -> None:
    table = run_night_with_cuts([20])  # werewolves awake since 16
    says = table.says(20)
    assert says[:3] == [(20, "onw.resume.night"), (20, "onw.werewolf.wake"), (30, "onw.werewolf.sleep")]
    assert any(isinstance(o, Sound) and o.on for t, o in table.log if t == 20)


def test_resume_after_a_sleep_line_replays_that_turn_never_skips_to_the_next() -> None:
    table = run_night_with_cuts([14])  # seer's sleep line at 13, the pause until 16 still hers
    assert [k for _, k in table.says(14)][:4] == [
        "onw.resume.night", "onw.seer.wake", "onw.seer.sleep", "onw.werewolf.wake"]
    cut = [o for t, o in table.log if t == 14 and isinstance(o, CancelTimer)]
    assert cut == [CancelTimer("night:werewolf:wake")]


def test_resume_before_the_first_turn_says_the_night_again() -> None:
    table = run_night_with_cuts([1])
    assert [k for _, k in table.says(1)][:3] == ["onw.resume.night", "onw.night.start", "onw.seer.wake"]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 5), cuts=st.lists(st.floats(0.01, 45), max_size=5))
def test_resume_never_skips_a_role_however_often_the_power_fails(seed: int, cuts: list[float]) -> None:
    table = run_night_with_cuts(cuts, seed, jitter=(0, 4))
    wakes = [k for _, k in table.says() if k.endswith(".wake")]
    # Each role's last wake line comes after every earlier role's, and each is followed by its sleep line.
    assert [k for i, k in enumerate(wakes) if k not in wakes[i + 1:]] == ROLE_ORDER
    keys = [k for _, k in table.says()]
    for role in ("seer", "werewolf", "thief"):
        last_wake = max(i for i, k in enumerate(keys) if k == f"onw.{role}.wake")
        assert f"onw.{role}.sleep" in keys[last_wake:]
    # The journal (with turns replayed) rebuilds the same state.
    assert table.power_cut().engine.state == table.engine.state


def test_resume_in_the_discussion_rearms_from_the_last_tick() -> None:
    table = discussion()  # 42: 3 minutes; ticks at 102 (2 min left), 162 (1 min), 212, 222
    table.advance(130 - table.t)
    resumed = table.power_cut()
    assert resumed.says(130) == [(130, "onw.resume.discussion"), (130, "onw.discussion.minutes_left"),
                                 (130, "onw.discussion.prompt")]
    assert Say("onw.discussion.minutes_left", {"minutes": 2}) in [o for t, o in resumed.log if t == 130]  # as the clocks
    assert resumed.timers == {"discussion": 130 + 60}
    resumed.run_until("vote")
    assert resumed.says(131) == [(190, "onw.discussion.one_minute_left"), (240, "onw.discussion.seconds_left"),
                                 (250, "onw.discussion.time_up"), (250, "onw.vote.call")]


def test_night_refuses_a_beat_out_of_turn_but_takes_a_replayed_beat_of_the_current_turn() -> None:
    table = Table.started()
    table.feed(NEXT)
    table.advance(14)  # seer's sleep line said at 13
    assert table.refused(TimerFired("night:thief:wake")).key == "onw.refuse.stale_timer"
    assert table.refused(TimerFired("night:start")).key == "onw.refuse.stale_timer"
    assert table.refused(TimerFired("discussion")).key == "onw.refuse.stale_timer"
    # After a restart replayed the seer's turn, her sleep beat comes again: it is taken.
    assert table.feed(TimerFired("night:seer:sleep"))[0] == Say("onw.seer.sleep")
