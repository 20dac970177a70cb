"""Fuzz: hypothesis-generated table scripts — taps of every identity in
``companion.tags.COMPONENT_SETS`` and junk, buttons (hold too), waits,
unplugs, across all games — keep every invariant of ``reliability.fuzz``:
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

from reliability.fuzz import check, mutated_games, random_script, table_scripts  # noqa: E402
from reliability.inproc import load_config  # noqa: E402
from reliability.scripts import Step  # noqa: E402

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
    from companion.events import Refusal
    from companion.session import Session

    real = Session.handle

    def leaky(self: Session, inp: object) -> object:
        try:
            return real(self, inp)
        except Refusal:
            self.state.games_started += 100
            raise

    monkeypatch.setattr(Session, "handle", leaky)
    with pytest.raises(AssertionError, match="refusal changed"):
        check(GAME, tmp_path, CFG)


def test_the_checker_notices_a_journal_that_drops_an_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from companion.store import Journal

    real = Journal.append

    def forgetful(self: Journal, inp: object, *a: object, **kw: object) -> int:
        if getattr(inp, "identity", "") == "skb/knight/2":
            return 0
        return real(self, inp, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Journal, "append", forgetful)
    with pytest.raises(AssertionError, match="replay"):
        check(GAME, tmp_path, CFG)
