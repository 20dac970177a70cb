"""A finished game's record is a pure function of the table's result and
times (companion/runtime/plays.py); the journal holds it
to its shape, and BG Stats' shape is the export's (web/bgstats.py)."""

from __future__ import annotations

from companion.core.table import FinishedPlay
from companion.runtime.journal import play_problem
from companion.runtime.plays import play_record
from web.bgstats import record

PLAY = FinishedPlay("madness-hour", ("basic",), ("Aki", "Bo"), ("red", "blue"), {"Aki": 5, "Bo": 3}, ("Aki",),
                    {"Bo": "cultist"})
WALL = 1_800_000_000.0  # 2027-01-15 08:00 UTC


def test_a_play_record_its_length_is_table_time_and_its_date_the_start() -> None:
    rec = play_record(PLAY, started=100.0, t=100.0 + 47 * 60, wall=WALL)
    assert rec["durationMin"] == 47
    assert rec["playDate"] == "2027-01-15 07:13:00"  # the end's wall less the length
    assert rec["players"] == [
        {"name": "Aki", "score": 5, "winner": True, "startPlayer": True, "sourcePlayerId": "red"},
        {"name": "Bo", "score": 3, "winner": False, "startPlayer": False, "sourcePlayerId": "blue",
         "role": "cultist"}]
    assert play_record(PLAY, started=100.0, t=100.0 + 47 * 60, wall=WALL) == rec  # pure
    assert play_record(PLAY, started=None, t=5.0, wall=WALL)["durationMin"] == 0  # a start not seen


def test_the_journal_keeps_the_record_and_the_export_shapes_it_for_bg_stats() -> None:
    rec = play_record(PLAY, started=0.0, t=600.0, wall=WALL)
    assert play_problem(rec) is None
    pushed = record({"id": 1, "evening": 2, "game": "madness-hour", **rec}, games={})
    assert pushed["sourceName"] and pushed["game"]["sourceGameId"] == "madness-hour"
    assert [p["role"] for p in pushed["players"] if "role" in p] == ["cultist"]
    assert "sourceName" not in rec and "game" not in rec  # not the journal's business
