"""The one wiring place: every part is handed what it needs when it is built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from companion.app import config
from companion.app.wiring import build
from companion.runtime.clock import VirtualClock
from companion.runtime.inbox import Inbox
from hardware.sim_reader import SimulatedReader
from voice.base import RecordingVoice


def test_an_error_reported_before_the_loop_exists_reaches_the_log(tmp_path: Path) -> None:
    """The voice is made before the loop (the daemon needs it to build the
    sinks) and may report at once (an engine fallback): it reports into the
    loop's inbox, which exists first — nothing waits in a holder for the loop."""
    cfg = config.load([], {"panel": {"backend": "mock"}})
    inbox = Inbox()
    inbox.report_error("voice: piper is missing; English falls back to espeak-ng")
    events: list[dict[str, Any]] = []
    app = build(cfg, clock=VirtualClock(), log=events.append, voice=RecordingVoice(), reader=SimulatedReader(),
                journal_path=tmp_path / "journal.sqlite", inbox=inbox)
    try:
        assert app.loop.inbox is inbox
        app.loop.start()
        app.panel.press("next")  # the panel, built before the loop, was handed the same inbox
        app.loop.pump()
        errors = [e for e in events if e.get("event") == "error"]
        assert [e["message"] for e in errors] == ["voice: piper is missing; English falls back to espeak-ng"]
        assert any(e.get("key") == "refuse.tap_game_card" for e in events), events  # next, before a game card
    finally:
        app.close()
