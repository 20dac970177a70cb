"""Fuzz: hypothesis-generated table scripts — taps of every identity in
``companion.games.component_sets()`` and junk, buttons (hold too), waits,
unplugs, across all games — keep every invariant of ``qa.reliability.fuzz``:
nothing escapes, every refusal has a reason and changes nothing, scores move
only with their events and add up, and the journal replays to the same state."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from qa.reliability.fuzz import check, mutated_games, random_script, table_scripts  # noqa: E402
from qa.reliability.inproc import load_config  # noqa: E402
from qa.reliability.scripts import Step  # noqa: E402

CFG = load_config()
FUZZ = settings(deadline=None, max_examples=120, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.data_too_large])


@FUZZ
@given(table_scripts())
def test_random_table_scripts_keep_every_invariant(steps: list[Step]) -> None:
    with tempfile.TemporaryDirectory(prefix="companion-fuzz-") as tmp:
        check(steps, Path(tmp), CFG)


@settings(FUZZ, max_examples=40)
@given(mutated_games())
def test_whole_games_with_random_steps_mixed_in_keep_every_invariant(steps: list[Step]) -> None:
    with tempfile.TemporaryDirectory(prefix="companion-fuzz-") as tmp:
        check(steps, Path(tmp), CFG)


def test_seeded_random_scripts_keep_every_invariant(tmp_path: Path) -> None:
    """The campaign's own (non-hypothesis) generator, a few seeds."""
    for seed in range(10):
        check(random_script(seed), tmp_path / str(seed), CFG)


# ------------------------------------------- the checker notices broken rules
GAME = [Step("tap", "game/seven-knights"), *(Step("tap", f"player/{c}") for c in ("red", "blue", "green", "white")),
        Step("press", "next"), Step("tap", "onw/seer/1"), Step("tap", "skb/knight/2"), Step("tap", "skb/knight/2")]


def test_the_checker_notices_a_refusal_that_changes_the_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from companion.core.events import Refusal
    from companion.core.table import Table

    real = Table.handle

    def leaky(self: Table, inp: object) -> object:
        try:
            return real(self, inp)
        except Refusal:
            self.state.games_started += 100
            raise

    monkeypatch.setattr(Table, "handle", leaky)
    with pytest.raises(AssertionError, match="refusal changed"):
        check(GAME, tmp_path, CFG)


def test_the_checker_notices_a_journal_that_drops_an_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from companion.runtime.journal import Journal

    real = Journal.append

    def forgetful(self: Journal, inp: object, *a: object, **kw: object) -> int:
        if getattr(inp, "identity", "") == "skb/knight/2":
            return 0
        return real(self, inp, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Journal, "append", forgetful)
    with pytest.raises(AssertionError, match="replay"):
        check(GAME, tmp_path, CFG)


# ------------------------------------------- found while fuzzing One Night's timers
ONW_START = [Step("tap", "game/one-night"), *(Step("tap", f"player/{c}") for c in ("red", "blue", "green")),
             Step("press", "next"), Step("press", "next")]


def test_back_during_the_vote_count_does_not_stall_the_game(tmp_path: Path) -> None:
    """Regression (fixed in f95b2d9): a timer was an undo point, so ``back`` in
    the vote count restored vote_at and the next count timer was refused as stale."""
    from qa.reliability.inproc import Runner

    r = Runner(tmp_path, CFG)
    try:
        for step in ONW_START:
            r.step(step)
        r.wait(5.0)  # the fast night is over
        assert r.step(Step("press", "next"))["event"] == "accepted"  # discussion ended: the count starts
        r.wait(0.6)  # "one"
        r.step(Step("press", "back"))
        r.wait(60.0)
        assert r.sim.loop.table.engine.state.step == "count"  # the count, after the vote
    finally:
        r.close()


def test_back_during_the_discussion_does_not_stretch_it(tmp_path: Path) -> None:
    """Regression (fixed in f95b2d9): ``back`` undid the last minute tick, so a
    3-minute discussion ended after 4 minutes."""
    from qa.reliability.inproc import Runner, load_config

    cfg = load_config({"seed": 1, "games": {"one-night": {"window_s": 1, "pace": 0.25, "discussion_min": 3}}})
    r = Runner(tmp_path, cfg)
    try:
        for step in ONW_START:
            r.step(step)
        r.wait(3.75)  # morning: the discussion starts now
        start = r.sim.clock.now()
        r.wait(61.0)  # one minute tick
        r.step(Step("press", "back"))
        r.wait(300.0)
        up = next(e["t"] for e in r.events if e["event"] == "say" and e["key"] == "onw.discussion.time_up")
        assert up - start == pytest.approx(180.0, abs=1.0)
    finally:
        r.close()
