"""The event log (DESIGN.md contract) for every shipped table script, and the
Seven Knights scripts for every rule set at every allowed player count."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from companion.app.simulate import run_script
from conftest import example_name, example_script, example_scripts

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = example_scripts()
SK_SCRIPTS = example_scripts("seven-knights/*.yaml")

# event → required fields and their types (the contract's "at least")
CONTRACT: dict[str, dict[str, Any]] = {
    "say": {"key": str, "text": str, "lang": str},
    "accepted": {"input": str},
    "rejected": {"input": str, "reason": str},
    "formation": {"tiles": list, "excluded": list, "verdict": str},
    "round_scored": {"game": str, "round": int, "points": dict, "totals": dict},
    "game_over": {"game": str, "totals": dict, "winners": list},
    "onw_result": {"executed": list, "winning_team": str, "winners": list},
    "mh_result": {"girl": str, "girl_alive": bool, "dead": list, "winners": list},
    "reader": {"state": str},
    "error": {"message": str},
}
KEY = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")


def run(path: Path, **kw: Any) -> list[dict[str, Any]]:
    out = io.StringIO()
    assert run_script(path, out=out, **kw) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def check_contract(events: list[dict[str, Any]]) -> None:
    last_t = 0.0
    for ev in events:
        assert isinstance(ev["t"], (int, float)) and ev["t"] >= last_t, ev
        last_t = ev["t"]
        for field, kind in CONTRACT.get(ev["event"], {}).items():
            assert isinstance(ev[field], kind), (field, ev)
        if ev["event"] == "say":
            assert KEY.match(ev["key"]), ev["key"]
            assert ev["lang"] in ("en", "ja") and ev["text"] and "{" not in ev["text"], ev
        if ev["event"] == "rejected":
            assert ev["reason"].strip(), ev
        if ev["event"] == "formation":
            assert ev["verdict"] in ("knights", "witch", "nobody")
            assert all(t.startswith("skb/") for t in ev["tiles"] + ev["excluded"])
        if ev["event"] == "mh_result":
            assert ev["girl"] in ("human", "evil-god")
        if ev["event"] == "reader":
            assert ev["state"] in ("connected", "disconnected")
        if ev["event"] == "onw_result":
            # DESIGN, One Night editions: winning_teams may be several or none (a tanner's is
            # one); winning_team is the first of them, or nobody
            assert set(ev["winning_teams"]) <= {"village", "werewolf", "tanner"}
            assert ev["winning_team"] == (ev["winning_teams"] or ["nobody"])[0]
            assert set(ev["dead"]) >= set(ev["executed"]) and set(ev["final_roles"]) == set(ev["winners"]) | set(
                ev["final_roles"]) and all(isinstance(n, int) for n in ev["deck"].values())
        for field in ("points", "totals"):
            if field in ev and isinstance(ev[field], dict):  # players by name, never player/…
                assert all("/" not in p for p in ev[field]), ev
        for field in ("winners", "executed", "dead"):
            if field in ev:
                assert all("/" not in p for p in ev[field]), ev
    if any(e["event"] == "round_scored" for e in events):  # totals are the sums of points
        sums: dict[str, int] = {}
        for e in events:
            if e["event"] == "game_started":
                sums = {}
            if e["event"] == "round_scored":
                for p, n in e["points"].items():
                    sums[p] = sums.get(p, 0) + n
                assert e["totals"] == sums, e


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(example_name(p)))
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_script_keeps_the_contract(path: Path, lang: str) -> None:
    events = run(path, overrides={"language": lang})
    check_contract(events)
    assert not [e for e in events if e["event"] == "error"]
    says = [e for e in events if e["event"] == "say"]
    assert says and all(e["lang"] == lang for e in says)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_same_script_same_log(path: Path) -> None:
    assert run(path) == run(path)


def test_every_rule_set_at_every_player_count_has_a_script() -> None:
    names = {p.stem for p in SK_SCRIPTS}
    expected = {f"{r}-{n}p" for r, ns in {"basic": range(4, 9), "special": range(3, 5),
                                            "advanced": range(4, 8), "cooperative": range(4, 8)}.items()
                for n in ns}
    assert names == expected


@pytest.mark.parametrize("path", SK_SCRIPTS, ids=lambda p: p.stem)
def test_seven_knights_script_scores_as_the_spec_predicts(path: Path) -> None:
    """tools/make_examples.py works out each game's result from the spec's
    scoring table; the engine must agree, with no input refused."""
    expect = yaml.safe_load(path.read_text())["expect"]
    events = run(path)
    assert not [e for e in events if e["event"] == "rejected"]
    over = [e for e in events if e["event"] == "game_over"]
    assert len(over) == 1
    assert over[0]["totals"] == expect["totals"]
    assert over[0]["winners"] == expect["winners"]
    assert [e["round"] for e in events if e["event"] == "round_scored"] == [1, 2, 3]


def test_examples_are_up_to_date(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_examples", ROOT / "tools" / "make_examples.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(mod, "OUT", tmp_path)
    mod.main()
    for made in tmp_path.glob("*.yaml"):
        assert made.read_text() == (example_script(f"seven-knights/{made.name}")).read_text(), made.name
