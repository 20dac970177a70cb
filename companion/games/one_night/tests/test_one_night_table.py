"""One Night on the whole simulated table: the night sounds and lasts the
same whatever the deal and whatever the table does meanwhile (no tell)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from companion.app.simulate import run_script

SEATS = ["player/red", "player/blue", "player/green", "player/yellow", "player/purple"]


def night(tmp_path: Path, name: str, during: list[dict], seed: int = 5, lang: str = "en") -> list[tuple]:
    steps = [{"tap": "game/one-night"}, *({"tap": s} for s in SEATS), {"press": "next"}, {"press": "next"},
             *during, {"wait": 60}]
    script = tmp_path / f"{name}.yaml"
    script.write_text(json.dumps({"seed": seed, "config": {"language": lang, "games": {"one-night": {
        "jitter_s": [0, 3]}}}, "steps": steps}))
    out = io.StringIO()
    run_script(script, out=out)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    start = next(i for i, e in enumerate(events) if e.get("key") == "onw.night.start")
    end = next(i for i, e in enumerate(events) if e.get("key") == "onw.night.morning")
    return [(e["t"], e["key"], e["text"]) for e in events[start:end + 1] if e["event"] == "say"]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_night_is_the_same_whatever_happens_at_the_table(tmp_path: Path, lang: str) -> None:
    quiet = night(tmp_path, "quiet", [], lang=lang)
    busy = night(tmp_path, "busy", [
        {"wait": 4}, {"tap": "onw/seer/1"}, {"press": "repeat"}, {"press": "back"}, {"press": "next"},
        {"wait": 9.5}, {"tap": "onw/werewolf/2"}, {"tap": "game/seven-knights"}, {"tap": "lang/ja"},
        {"uid": "04DEADBEEF"}, {"hold": "back"}, {"unplug": "reader"}, {"plug": "reader"},
        {"wait": 3}, {"tap": "player/red"}, {"tap": "onw/thief/1"}], lang=lang)
    assert [k for _, k, _ in quiet][:3] == ["onw.night.start", "onw.seer.wake", "onw.seer.sleep"]
    assert busy == quiet  # the reader's coming and going is told after the night


def test_jitter_changes_with_the_seed_only(tmp_path: Path) -> None:
    a = night(tmp_path, "a", [], seed=1)
    b = night(tmp_path, "b", [], seed=2)
    assert [k for _, k, _ in a] == [k for _, k, _ in b]
    assert [t for t, _, _ in a] != [t for t, _, _ in b]
    assert night(tmp_path, "a2", [], seed=1) == a


def test_night_refusals_are_silent(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(json.dumps({"steps": [{"tap": "game/one-night"}, *({"tap": s} for s in SEATS),
                                            {"press": "next"}, {"press": "next"}, {"wait": 5},
                                            {"tap": "onw/seer/1"}, {"press": "repeat"}]}))
    out = io.StringIO()
    run_script(script, out=out)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    rejected = [i for i, e in enumerate(events) if e["event"] == "rejected"]
    assert len(rejected) == 2
    assert all(events[i + 1]["event"] != "say" or events[i + 1]["key"].startswith("onw.")
               for i in rejected if i + 1 < len(events))
    assert not [e for e in events if e["event"] == "say" and e["key"].startswith("refuse")]


def test_a_reader_lost_at_night_is_told_in_the_morning(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(json.dumps({"steps": [{"tap": "game/one-night"}, *({"tap": s} for s in SEATS),
                                            {"press": "next"}, {"press": "next"}, {"wait": 5},
                                            {"unplug": "reader"}, {"wait": 60}]}))
    out = io.StringIO()
    run_script(script, out=out)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    said = {e["key"]: e["t"] for e in events if e["event"] == "say"}
    assert said["reader.lost"] == said["onw.night.morning"]  # with the morning, not during the night
    unplugged = next(e["t"] for e in events if e["event"] == "reader" and e["state"] == "disconnected")
    assert unplugged == 5.0  # logged at once, spoken only when the night is over
