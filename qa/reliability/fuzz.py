"""Fuzzing table scripts: hypothesis strategies for scripts (anything a table
can do, with a bias towards getting deep into a game) and the invariants
every run must keep.

``check(steps, state)`` plays a script on a Simulation and raises
``AssertionError`` (with the step) on the first broken invariant:
- no exception escapes the daemon, and no ``error`` event (nothing failed here);
- every ``rejected`` has a non-empty ``reason``; a refused tap or button
  changes neither the table nor the engine state;
- scores change only with ``round_scored`` / ``onw_result`` / ``game_over``:
  the engine's totals only in a step that reports ``round_scored``, the
  table's standings and the journal's plays only in one that ends a game;
- totals are sums of points: each ``round_scored`` total is the game's points
  so far, ``game_over`` repeats the last totals, ``session_scores`` equals the
  journal's plays added up;
- replaying the journal into a fresh Simulation on the same state directory
  gives the same table state and the same engine state;
- (``liveness=True``) a step that waits on a timer (the One Night night,
  discussion and vote) always has one pending, so the game cannot stall.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from companion.core.tags import COLOURS
from companion.games import component_sets
from qa.reliability.inproc import Runner, load_config, normalise_plays, totals
from qa.reliability.scripts import Step, generate

COMPONENT_SETS = component_sets()
IDENTITIES = sorted({i for ids in COMPONENT_SETS.values() for i in ids})
JUNK = ["junk/tag", "", "   ", "player/", "player/Red", "player/red ", "skb/knight/0", "skb/knight/8",
        "skb/Witch", "rules/", "rules/advanced-plus", "rules/x" * 20, "game/", "game/chess", "lang/fr",
        "onw/villager/5", "dt/box/0", "mh/girl/", "next", "ジャンク", "\x00", "player/red/extra"]
GAME_PARTS = {
    "seven-knights": (*COMPONENT_SETS["seven-knights"], "rules/basic", "rules/special", "rules/advanced",
                      "rules/cooperative"),
    "one-night": COMPONENT_SETS["one-night"],
    "madness-hour": COMPONENT_SETS["madness-hour"],
    "demagogos": COMPONENT_SETS["demagogos"],
}


# ------------------------------------------------------------- strategies
def _step(game: str | None = None) -> st.SearchStrategy[Step]:
    parts = list(GAME_PARTS[game]) + [f"player/{c}" for c in COLOURS] if game else IDENTITIES
    anything = st.one_of(
        st.builds(Step, st.just("tap"), st.sampled_from(IDENTITIES + JUNK)),
        st.builds(Step, st.just("uid"), st.from_regex(r"[0-9A-Fa-f: ]{0,22}", fullmatch=True)),
        st.builds(Step, st.just("press"), st.sampled_from(["next", "back", "repeat"])),
        st.builds(Step, st.just("hold"), st.sampled_from(["back", "back", "next", "repeat"])),
        st.builds(Step, st.just("wait"), st.floats(0, 400, allow_nan=False, allow_infinity=False)),
        st.builds(Step, st.sampled_from(["unplug", "plug"]), st.just("reader")),
    )
    focused = st.one_of(
        st.builds(Step, st.just("tap"), st.sampled_from(parts)),
        st.builds(Step, st.just("press"), st.sampled_from(["next", "next", "back"])),
        st.builds(Step, st.just("wait"), st.sampled_from([1.0, 5.0, 15.0, 60.0])),
    )
    return st.one_of(focused, focused, anything)


@st.composite
def table_scripts(draw: st.DrawFn, max_steps: int = 60) -> list[Step]:
    """A game card (any of the four, or none), maybe rule cards, some players,
    ``next``, then anything — mostly that game's parts."""
    game = draw(st.sampled_from([None, "seven-knights", "seven-knights", "one-night", "one-night",
                                 "madness-hour", "demagogos"]))
    steps: list[Step] = []
    if game is not None:
        steps.append(Step("tap", f"game/{game}"))
        if game == "seven-knights" and draw(st.booleans()):
            steps.append(Step("tap", draw(st.sampled_from(GAME_PARTS[game][-4:]))))
        n = draw(st.integers(0, 9))
        steps += [Step("tap", f"player/{c}") for c in draw(st.permutations(COLOURS))[:n]]
        steps.append(Step("press", "next"))
    steps += draw(st.lists(_step(game), max_size=max_steps))
    return steps


@st.composite
def mutated_games(draw: st.DrawFn) -> list[Step]:
    """A whole generated game with random steps inserted and some removed, so
    the fuzz reaches scoring and the end of games."""
    seed = draw(st.integers(0, 10_000))
    steps = list(generate(seed, wrong=0.1).steps)
    for _ in range(draw(st.integers(0, 6))):
        i = draw(st.integers(0, len(steps)))
        steps.insert(i, draw(_step()))
    for _ in range(draw(st.integers(0, 3))):
        if steps:
            del steps[draw(st.integers(0, len(steps) - 1))]
    return _with_waits(steps)


# -------------------------------------------------------------- invariants
def _snapshot(r: Runner) -> dict[str, Any]:
    s = r.sim.loop.table
    engine = s.engine
    return {
        "table": copy.deepcopy(s.state),
        "engine": engine,
        "engine_type": type(engine).__name__,
        "engine_state": copy.deepcopy(engine.state) if engine is not None else None,
        "engine_totals": dict(getattr(engine.state, "totals", {}) or {}) if engine is not None else None,
        "standings": copy.deepcopy(s.state.standings),
        "plays": len(r.sim.app.journal.plays()),
    }


class _Scores:
    """Follows the scoring events of one run."""

    def __init__(self) -> None:
        self.acc: dict[str, int] | None = None
        self.last_totals: dict[str, int] | None = None

    def see(self, ev: dict[str, Any], plays: list[dict[str, Any]]) -> None:
        kind = ev["event"]
        if kind == "game_started":
            self.acc = {p: 0 for p in ev["players"]}
            self.last_totals = None
        elif kind == "round_scored":
            assert self.acc is not None, "round_scored outside a game"
            assert set(ev["points"]) == set(self.acc), ev
            for p, pts in ev["points"].items():
                assert isinstance(pts, int) and pts >= 0, ev
                self.acc[p] += pts
            assert ev["totals"] == self.acc, f"totals are not the sum of points: {ev} vs {self.acc}"
            self.last_totals = dict(ev["totals"])
        elif kind == "game_over":
            assert self.last_totals is not None and ev["totals"] == self.last_totals, ev
            top = max(ev["totals"].values())
            assert sorted(ev["winners"]) == sorted(p for p, t in ev["totals"].items() if t == top), ev
        elif kind == "onw_result":
            assert self.acc is not None and set(ev["winners"]) <= set(self.acc), ev
            assert ev["winning_team"] in ("village", "werewolf", "nobody"), ev
            assert set(ev["executed"]) <= set(self.acc), ev
        elif kind == "session_scores":
            want = totals(normalise_plays(plays)).get(ev["game"], {})
            assert ev["totals"] == want, f"table totals {ev['totals']} are not the plays added up {want}"


TIMED_STEPS = {"OneNight": ("night", "discussion", "vote")}


def check(steps: Iterable[Step], state: Path, cfg: dict[str, Any] | None = None, *,
          liveness: bool = False) -> Runner:
    """Play ``steps`` checking every invariant; returns the (closed) runner."""
    cfg = cfg if cfg is not None else load_config()
    r = Runner(state, cfg)
    scores = _Scores()
    steps = list(steps)
    try:
        for i, step in enumerate(steps):
            before = _snapshot(r)
            start = len(r.events)
            try:
                r.step(step)
            except Exception as e:
                raise AssertionError(f"step {i} {step}: {type(e).__name__}: {e} escaped the daemon") from e
            evs = r.events[start:]
            where = f"step {i} {step.kind} {step.value!r}"
            kinds = {e["event"] for e in evs}
            errors = [e for e in evs if e["event"] == "error"]
            assert not errors, f"{where}: {errors}"
            for e in evs:
                if e["event"] in ("accepted", "rejected"):
                    assert isinstance(e.get("input"), str), f"{where}: {e}"
                if e["event"] == "rejected":
                    assert isinstance(e.get("reason"), str) and e["reason"].strip(), f"{where}: {e}"
            plays = r.sim.app.journal.plays()
            for e in evs:
                scores.see(e, plays)
            after = _snapshot(r)
            if step.kind != "wait" and "rejected" in kinds and "accepted" not in kinds:
                assert after["table"] == before["table"], f"{where}: a refusal changed the table"
                assert after["engine_state"] == before["engine_state"], f"{where}: a refusal changed the game"
            ends = kinds & {"game_over", "onw_result"}
            if after["standings"] != before["standings"] or after["plays"] != before["plays"]:
                assert ends, f"{where}: scores changed without game_over/onw_result: {evs}"
            if (after["engine"] is before["engine"] and before["engine"] is not None
                    and after["engine_totals"] != before["engine_totals"]):
                assert "round_scored" in kinds, f"{where}: totals changed without round_scored"
            engine = after["engine"]
            if liveness and engine is not None and engine.state.step in TIMED_STEPS.get(after["engine_type"], ()):
                assert r.sim.loop.pending_timers(), \
                    f"{where}: {after['engine_type']} waits in {engine.state.step} with no timer pending"
        final = _snapshot(r)
    finally:
        r.close()
    replay = Runner(state, cfg)
    try:
        again = _snapshot(replay)
    finally:
        replay.close()
    assert again["table"] == final["table"], \
        f"replay: table {again['table']} != {final['table']}"
    assert again["engine_type"] == final["engine_type"], "replay: another game"
    assert again["engine_state"] == final["engine_state"], \
        f"replay: engine {again['engine_state']} != {final['engine_state']}"
    return r


def mutated_script(seed: int) -> list[Step]:
    """``mutated_games`` without hypothesis, for the long campaign."""
    rng = random.Random(seed)
    steps = list(generate(rng.randrange(10_000), wrong=0.1).steps)
    for _ in range(rng.randint(0, 6)):
        steps.insert(rng.randint(0, len(steps)), rng.choice(_plain_random(rng, 3) or [Step("press", "back")]))
    for _ in range(rng.randint(0, 3)):
        if steps:
            del steps[rng.randrange(len(steps))]
    return _with_waits(steps)


def random_script(seed: int, max_steps: int = 80) -> list[Step]:
    """A script for the long campaign, from a seeded random source (no
    hypothesis): like ``table_scripts``, biased the same way."""
    return _plain_random(random.Random(seed), max_steps)


def _plain_random(rng: random.Random, max_steps: int) -> list[Step]:
    game = rng.choice(["seven-knights", "one-night", "madness-hour", None])
    steps: list[Step] = []
    if game:
        steps.append(Step("tap", f"game/{game}"))
        steps += [Step("tap", f"player/{c}") for c in rng.sample(COLOURS, rng.randint(0, 8))]
        steps.append(Step("press", "next"))
    parts = list(GAME_PARTS.get(game or "", ())) + [f"player/{c}" for c in COLOURS]
    for _ in range(rng.randint(0, max_steps)):
        x = rng.random()
        if x < 0.45:
            steps.append(Step("tap", rng.choice(parts)))
        elif x < 0.6:
            steps.append(Step("tap", rng.choice(IDENTITIES + JUNK)))
        elif x < 0.8:
            steps.append(Step("press", rng.choice(["next", "next", "back", "repeat"])))
        elif x < 0.85:
            steps.append(Step("hold", rng.choice(["back", "next"])))
        elif x < 0.93:
            steps.append(Step("wait", rng.choice([0.5, 2.0, 10.0, 45.0, 200.0])))
        elif x < 0.97:
            steps.append(Step(rng.choice(["unplug", "plug"]), "reader"))
        else:
            steps.append(Step("uid", f"{rng.getrandbits(56):014X}"))
    return steps


def _with_waits(steps: list[Step]) -> list[Step]:
    """A step that waits for One Night's timers gets the time it needs first."""
    out: list[Step] = []
    for s in steps:
        if s.retry:
            out.append(Step("wait", 5.0))
        out.append(Step(s.kind, s.value))
    return out
