"""Scores persist in the journal; `companion scores` shows them and exports
CSV and BG Stats-shaped JSON."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from companion.app.cli import main
from companion.app.simulate import run_script
from conftest import example_script

ROOT = Path(__file__).resolve().parent.parent


def played(tmp_path: Path) -> Path:
    for script in ("seven-knights.yaml", "one-night.yaml"):
        run_script(example_script(script), state=tmp_path, out=io.StringIO())
    return tmp_path


def test_scores_show_history_and_tonights_totals(tmp_path: Path, capsys) -> None:
    state = played(tmp_path)
    assert main(["scores", "--state", str(state)]) == 0
    out = capsys.readouterr().out
    assert "No game in progress." in out
    assert "Tonight, Seven Knights Bewitched: red 9  blue 5  yellow 5  purple 2  green 0" in out
    assert "History: 2 plays" in out
    assert "winners: red" in out and "winners: blue, green, purple" in out


def test_scores_show_the_game_in_progress(tmp_path: Path, capsys) -> None:
    script = tmp_path / "part.yaml"
    script.write_text("steps:\n" + "".join(f"  - tap: {t}\n" for t in (
        "game/seven-knights", "player/red", "player/blue", "player/green", "player/yellow")) + "  - press: next\n")
    run_script(script, state=tmp_path, out=io.StringIO())
    main(["scores", "--state", str(tmp_path)])
    out = capsys.readouterr().out
    assert "Playing now: Seven Knights Bewitched — red, blue, green, yellow" in out


def test_export_json_is_shaped_like_bg_stats_plays(tmp_path: Path) -> None:
    state = played(tmp_path)
    target = tmp_path / "plays.json"
    assert main(["scores", "--state", str(state), "--export", "json", "-o", str(target)]) == 0
    plays = json.loads(target.read_text())["plays"]
    assert [p["game"]["name"] for p in plays] == ["Seven Knights Bewitched", "One Night Werewolf"]
    sk = plays[0]
    assert sk["playDate"] == "2026-01-01 19:00:00"  # the virtual clock's evening
    assert sk["durationMin"] == 9  # 540 virtual seconds
    assert sk["players"][0] == {"name": "red", "score": 9, "winner": True, "startPlayer": True, "sourcePlayerId": "red"}
    assert {p["name"]: p["score"] for p in plays[1]["players"]} == {
        "red": 0, "blue": 1, "green": 1, "yellow": 0, "purple": 1}


def test_export_csv_one_row_per_player(tmp_path: Path, capsys) -> None:
    state = played(tmp_path)
    assert main(["scores", "--state", str(state), "--export", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 10
    assert rows[0] == {"play": "1", "playDate": "2026-01-01 19:00:00", "game": "seven-knights",
                       "durationMin": "9", "player": "red", "score": "9", "winner": "1", "startPlayer": "1"}


def test_no_journal_yet(tmp_path: Path, capsys) -> None:
    assert main(["scores", "--state", str(tmp_path)]) == 0
    assert "no games played yet" in capsys.readouterr().out
