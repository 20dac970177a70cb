"""The reader's notices and the journal's: each change
logged and lit once, said when the night is over (companion/runtime/notices.py)."""

from __future__ import annotations

from companion.core.events import LOG, ReaderStatus, Say
from companion.core.messages import Command
from companion.runtime.notices import ReaderNotices, journal_notices
from companion.runtime.outputs import Emit


def says(outs: list[object]) -> list[str]:
    return [o.key for o in outs if isinstance(o, Say)]


def test_a_reader_present_from_the_start_is_not_said_its_loss_is_once() -> None:
    n = ReaderNotices()
    first = n.status(ReaderStatus(True), quiet=False)
    assert says(first) == [] and Command("led", {"led": "ready", "on": True}) in first
    assert n.status(ReaderStatus(True), quiet=False) == []  # no change: nothing at all
    assert says(n.status(ReaderStatus(False, "unplugged"), quiet=False)) == ["reader.lost"]
    assert n.due(quiet=False) == []


def test_a_reader_missing_at_start_is_said_missing_then_back() -> None:
    n = ReaderNotices()
    assert says(n.status(ReaderStatus(False), quiet=False)) == ["reader.missing"]
    assert says(n.status(ReaderStatus(True), quiet=False)) == ["reader.back"]


def test_a_change_at_night_is_logged_and_lit_at_once_and_said_in_the_morning() -> None:
    n = ReaderNotices()
    n.status(ReaderStatus(True), quiet=False)
    night = n.status(ReaderStatus(False), quiet=True)
    assert says(night) == [] and Emit("reader", fields={"state": "disconnected", "detail": ""}) in night
    assert n.due(quiet=True) == []
    assert says(n.due(quiet=False)) == ["reader.lost"]
    assert n.due(quiet=False) == []  # once


def test_the_journals_notices_are_logged_then_said() -> None:
    outs = journal_notices([(Say("journal.recovered"), "recovered 3 inputs"), (None, "a note")])
    assert outs == [Emit("error", LOG, {"message": "recovered 3 inputs"}), Emit("error", LOG, {"message": "a note"}),
                    Say("journal.recovered")]
