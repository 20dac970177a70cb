"""Kill the real daemon with SIGKILL at random instants and restart it: no
accepted input lost or doubled, the same scores as an uninterrupted run, and
a first line that says where the table is.  The short version of
``python qa/reliability/run.py`` (see ``qa/reliability/crash.py`` for every check)."""

from __future__ import annotations

import sqlite3
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from qa.reliability.crash import CrashResult, crash_run, plan_kills  # noqa: E402
from qa.reliability.proc import Daemon, parse_event  # noqa: E402
from qa.reliability.scripts import Script, generate, press, tap  # noqa: E402

# 20 runs: Seven Knights (any rule set and player count) and One Night (fast
# night), one or two SIGKILLs each; eight at a time, as they mostly wait (the
# longer One Night runs first).
RUNS = [(3100 + i, ["one-night"]) for i in range(8)] + [(3000 + i, ["seven-knights"]) for i in range(12)]


def _report(results: list[CrashResult]) -> str:
    lines = []
    for r in results:
        if not r.ok:
            lines.append(f"seed {r.seed} {r.games}: lost {r.lost} doubled {r.doubled} "
                         f"mismatches {r.mismatches}")
            lines += [f"    {p}" for p in r.problems[:6]]
            lines.append("    script:\n" + "\n".join("      " + s for s in r.script_yaml.splitlines()[:400]))
    return "\n".join(lines)


def test_killed_daemon_loses_nothing_doubles_nothing_and_scores_the_same(tmp_path: Path) -> None:
    def one(run: tuple[int, list[str]]) -> CrashResult:
        seed, games = run
        work = tmp_path / str(seed)
        work.mkdir()
        return crash_run(seed, work, script=generate(seed, games=games))

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, RUNS))
    assert all(r.ok for r in results), _report(results)
    assert sum(r.kills for r in results) >= len(RUNS)
    assert sum(r.checked for r in results) > 20 * 20


# ------------------------------------------- the harness itself notices faults
def _short_script() -> Script:
    steps = [tap("game/seven-knights"), *(tap(f"player/{c}") for c in ("red", "blue", "green", "white")),
             press("next"), press("next"), tap("junk/tag", wrong=True), press("next"), press("next"),
             tap("skb/knight/2"), tap("skb/knight/1"), tap("skb/knight/2"), tap("skb/knight/4"),
             press("repeat"), press("next")]
    return Script(1, steps, [])


def _delete_first_input(state: Path) -> None:
    db = sqlite3.connect(state / "journal.sqlite")
    # the first input from the table (the journal opens with the daemon's settings)
    db.execute("""DELETE FROM inputs WHERE seq = (SELECT min(seq) FROM inputs WHERE input NOT LIKE '{"table"%')""")
    db.commit()
    db.close()


def _double_last_input(state: Path) -> None:
    db = sqlite3.connect(state / "journal.sqlite")
    db.execute("INSERT INTO inputs (t, wall, input) SELECT t, wall, input FROM inputs ORDER BY seq DESC LIMIT 1")
    db.commit()
    db.close()


def _kill_late(monkeypatch: pytest.MonkeyPatch) -> None:
    # One kill, after most of the script, so the journal has something to break.
    monkeypatch.setattr("qa.reliability.crash.plan_kills", lambda rng, steps, k: [(steps - 3, 0.0)])


def test_the_harness_notices_a_lost_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _kill_late(monkeypatch)
    r = crash_run(1, tmp_path, script=_short_script(), tamper=_delete_first_input)
    assert r.kills == 1
    assert r.lost >= 1 and not r.ok


def test_the_harness_notices_a_doubled_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _kill_late(monkeypatch)
    r = crash_run(1, tmp_path, script=_short_script(), tamper=_double_last_input)
    assert r.kills == 1
    assert r.doubled >= 1 and not r.ok


def test_kill_plans_stay_inside_the_script() -> None:
    import random

    for seed in range(200):
        plan = plan_kills(random.Random(seed), 30, 2)
        assert 1 <= len(plan) <= 2
        assert all(0 <= at < 30 and 0 <= delay <= 0.4 for at, delay in plan)
        assert plan == sorted(plan)


def test_event_lines_are_found_among_the_people_facing_output() -> None:
    assert parse_event('> {"t": 0.1, "event": "accepted", "input": "next"}') == {
        "t": 0.1, "event": "accepted", "input": "next"}
    assert parse_event('  🔊 Ready. Tap a game card to begin.') is None
    assert parse_event('{"t": 1, "event": "say", "key": "a"}> ') == {"t": 1, "event": "say", "key": "a"}


def test_run_simulate_json_prints_only_json_lines_on_stdout(tmp_path: Path) -> None:
    """The harness reads the event log from stdout: nothing else may be there."""
    d = Daemon(tmp_path)
    start = d.mark()
    d.send("game/seven-knights")
    d.response(start)
    d.quit()
    assert d.events and not d.other, d.other[:5]


def test_a_restart_during_a_long_press_confirmation_says_so(tmp_path: Path) -> None:
    """Regression (found by the campaign, fixed in f95b2d9): the resume used to
    say the step while every tap was refused with 'press next to confirm'."""
    from qa.reliability.inproc import Runner
    from qa.reliability.scripts import Step

    r = Runner(tmp_path)
    for step in [tap("game/seven-knights"), *(tap(f"player/{c}") for c in ("red", "blue", "green", "white")),
                 press("next"), tap("skb/knight/2"), press("next"), tap("skb/knight/1"), Step("hold", "back")]:
        assert r.step(step)["event"] == "accepted"
    r.close()
    again = Runner(tmp_path)
    try:
        said = [e["key"] for e in again.events if e["event"] == "say"]
        pending = again.sim.loop.table.state.confirm is not None
        # either the question is asked again, or the confirmation did not survive the restart
        assert (pending and any(k.startswith("table.confirm_") for k in said)) or \
            (not pending and again.step(tap("skb/knight/3"))["event"] == "accepted"), said
    finally:
        again.close()


@pytest.mark.parametrize("first", range(0, 80, 20))
def test_generated_scripts_are_taken_as_the_generator_marks_them(tmp_path: Path, first: int) -> None:
    """The campaign's scripts say which steps the rules refuse (``wrong``); if
    the rules move on (a tile before the command phase, back to seating, the
    vote count), a mark that no longer holds would send a script down another
    path than the one written.  Every marked step is refused, every other one
    accepted."""
    from qa.reliability.inproc import run_script

    for seed in range(first, first + 20):
        script = generate(seed)
        ref = run_script(script, tmp_path / str(seed))
        for step, resp in zip(script.steps, ref.responses, strict=True):
            if resp is None or step.value == "repeat":  # waits, plugging; repeat is always taken
                continue
            assert (resp["event"] == "rejected") == step.wrong, (seed, step, resp)
