"""The outputs seam: the rules for what the table sends —
the night's silence, a submit's privacy, what repeat says — each in one
place (companion/runtime/outputs.py), tried here on the seam alone: no loop."""

from __future__ import annotations

from typing import Any

from companion.app.catalogue import narrator
from companion.core.events import LOG, TABLE, Refusal, Say, Submit
from companion.core.messages import Command, Event, seat_audience
from companion.core.table import Table
from companion.games import ENGINES
from companion.runtime.clock import VirtualClock
from companion.runtime.outputs import Emit, Outputs, ShellSay
from companion.runtime.router import Router


class NightTable(Table):
    eyes_closed = True  # as in One Night's night: only the game's own lines are heard


def seam(night: bool = False) -> tuple[Outputs, list[Any]]:
    table = (NightTable if night else Table)(ENGINES, lang="en")
    router, got = Router(), []
    router.subscribe(got.append)
    return Outputs(table, router, narrator(ENGINES.values()), VirtualClock()), got


def said(got: list[Any]) -> list[str]:
    return [m.fields["key"] for m in got if isinstance(m, Event) and m.name == "say"]


def test_the_shell_is_never_heard_at_night_but_the_games_lines_are() -> None:
    out, got = seam(night=True)
    assert out.shell_say([Say("reader.lost")]) is False
    out.send([ShellSay((Say("pairing.tap_card", {"player": "red"}),))])
    assert said(got) == []
    out.say([Say("reader.lost")])  # the game's own line (the loop's ``_outputs``) is said
    assert said(got) == ["reader.lost"]


def test_a_refusal_at_night_is_only_logged_nothing_heard_or_lit() -> None:
    out, got = seam(night=True)
    out.reject("next", Refusal("refuse.quiet", "not during the night"))
    assert [(m.audience, m.fields["event"]) for m in got] == [(LOG, "rejected")]


def test_a_refused_submit_reaches_only_its_player_never_the_panel_or_the_speaker() -> None:
    for night in (False, True):
        out, got = seam(night)
        out.reject("submit", Refusal("refuse.bid", "over your gems"), Submit("red", "bid", 9))
        assert [m.audience for m in got] == [seat_audience("red")]
        assert not any(isinstance(m, Command) for m in got) and said(got) == []
        assert got[0].fields["text"] and got[0].fields["reason"] == "over your gems"


def test_an_accepted_submit_is_public_without_its_value_or_private_when_the_game_hides_it() -> None:
    out, got = seam()
    out.accept("submit", Submit("red", "bid", 3))
    out.accept("", Submit("red", "gift", 2))  # the game names a gift "" in public
    assert [m.audience for m in got] == [TABLE, seat_audience("red")]
    assert all("value" not in m.fields and 3 not in m.fields.values() for m in got)
    assert not any(isinstance(m, Command) for m in got)  # no panel flash for a page's submit


def test_repeat_says_the_last_instruction_not_a_language_or_undo_line() -> None:
    out, got = seam()
    out.repeat()
    assert [m.fields.get("reason") for m in got if isinstance(m, Event)][0] == "nothing to repeat yet"
    out.remember([Say("reader.lost"), Say("undo.done")])
    out.remember([Say("table.language")])  # not an instruction: what repeat says stays
    del got[:]
    out.repeat()
    assert said(got) == ["reader.lost"]
    assert [m.args for m in got if isinstance(m, Command)] == [{"ok": True}]


def test_repeat_at_night_is_refused_silently() -> None:
    out, got = seam(night=True)
    out.remember([Say("reader.lost")])
    out.repeat()
    assert said(got) == [] and [(m.audience, m.fields["event"]) for m in got] == [(LOG, "rejected")]


def test_send_carries_a_desks_outputs_in_order() -> None:
    out, got = seam()
    out.send([Emit("paired", fields={"player": "red"}), Say("reader.back"), Command("feedback", {"ok": True})])
    assert [m.fields["event"] if isinstance(m, Event) else m.name for m in got] == ["paired", "say", "feedback"]


def test_no_piece_split_from_the_loop_imports_it() -> None:
    """The pieces hand back; the loop calls them, never the other way round."""
    import ast
    from pathlib import Path

    runtime = Path(__file__).resolve().parent.parent / "companion" / "runtime"
    for name in ("outputs", "pairing", "pages", "notices", "plays", "timers", "clock"):
        tree = ast.parse((runtime / f"{name}.py").read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert "companion.runtime.loop" not in imported, name
