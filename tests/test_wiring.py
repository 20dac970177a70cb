"""The one wiring place: every part is handed what it needs when it is built."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from companion.app import config
from companion.app.wiring import DEVICES, DevicePlan, Parts, build, simulated
from companion.core.events import TABLE
from companion.core.messages import Command, Message, Wants, wants
from companion.runtime.clock import VirtualClock
from companion.runtime.inbox import Inbox
from companion.runtime.journal import SCHEMA_VERSION, Journal
from hardware.sim_reader import SimulatedReader
from qa.reliability.proc import child_env, python
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


# ------------------------------------------------------------ devices have one shape
class Ring:
    """A recording stand-in for an LED ring: green on an accepted input, red
    on a refusal, and nothing else heard."""

    wants = wants(TABLE, ("feedback",))

    def __init__(self, brightness: float) -> None:
        self.brightness = brightness
        self.shown: list[tuple[str, float]] = []
        self.heard: list[Message] = []
        self.closed = 0

    def receive(self, message: Message) -> None:
        self.heard.append(message)
        if isinstance(message, Command):
            self.shown.append(("green" if message.args["ok"] else "red", self.brightness))

    def close(self) -> None:
        self.closed += 1


def test_a_new_device_is_one_plan_and_closes_with_the_app(tmp_path: Path) -> None:
    """The README's recipe ("Adding a device"): a module with wants, receive
    and close, made from the parts by one DevicePlan; the wiring attaches it
    as it attaches its own, and App.close closes it (once, twice harmless)."""
    cfg = config.load([], {"panel": {"backend": "mock"}})
    rings: list[Ring] = []

    def make_ring(parts: Parts) -> Ring:
        rings.append(Ring(brightness=0.5 if parts.cfg["language"] == "en" else 1.0))
        return rings[-1]

    app = build(cfg, clock=VirtualClock(), log=lambda ev: None, voice=RecordingVoice(), reader=SimulatedReader(),
                journal_path=tmp_path / "journal.sqlite", devices=[*DEVICES, DevicePlan("ring", make_ring)])
    try:
        assert list(app.sinks) == ["log", "speaker", "panel", "ring"]  # no WAV cache here: no fill gate
        app.loop.start()
        app.reader.start(app.loop.inbox)
        app.loop.pump()
        for tag in ("game/seven-knights", "player/red", "skb/knight/1"):  # the last one: not yet
            simulated(app)[0].present(text=tag)
            app.loop.pump()
        ring, = rings
        assert ring.shown == [("green", 0.5), ("green", 0.5), ("red", 0.5)]
        assert all(isinstance(m, Command) and m.name == "feedback" for m in ring.heard)  # nothing it did not want
    finally:
        app.close()
        app.close()
    assert ring.closed == 2


class Closing:
    """A device that only knows how to close, and says when it was closed."""

    wants = Wants()

    def __init__(self, name: str, order: list[str], fail: bool = False) -> None:
        self.name, self.order, self.fail = name, order, fail

    def receive(self, message: Message) -> None:
        pass

    def close(self) -> None:
        self.order.append(self.name)
        if self.fail:
            raise OSError("the ring's serial port is gone")


def test_app_close_closes_the_reader_then_each_device_last_attached_first(tmp_path: Path) -> None:
    """Through Device.close alone (before: reader, panel and voice by hasattr
    stop/close, and no other device at all): one that fails to close does
    not keep the others open."""
    cfg = config.load([], {"panel": {"backend": "mock"}})
    order: list[str] = []
    plans = [DevicePlan(n, lambda p, n=n: Closing(n, order, fail=n == "b")) for n in ("a", "b", "c")]
    reader = SimulatedReader()
    app = build(cfg, clock=VirtualClock(), log=lambda ev: None, voice=RecordingVoice(), reader=reader,
                journal_path=tmp_path / "journal.sqlite", devices=[*DEVICES, *plans])
    app.loop.start()
    before = set(threading.enumerate())  # another test's reader may still be winding down
    reader.start(app.loop.inbox)
    supervising = [t for t in threading.enumerate()
                   if t.name == "simulated reader-supervisor" and t not in before]
    assert len(supervising) == 1
    app.close()
    assert order == ["c", "b", "a"]
    assert not supervising[0].is_alive() and not reader.present(text="player/red")


def test_closing_the_app_kills_no_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemon stopping with feedback still flashing logs no thread's
    traceback: every device thread ends before its pin or port goes."""
    died: list[str] = []
    monkeypatch.setattr(threading, "excepthook", lambda a: died.append(f"{a.thread}: {a.exc_type.__name__}"))
    cfg = config.load([], {"panel": {"backend": "mock"}})
    app = build(cfg, clock=VirtualClock(), log=lambda ev: None, voice=RecordingVoice(), reader=SimulatedReader(),
                journal_path=tmp_path / "journal.sqlite")
    app.loop.start()
    app.reader.start(app.loop.inbox)
    reader, panel = simulated(app)
    for i in range(30):
        reader.present(text="player/red" if i % 2 else "skb/knight/1")  # refusals: the error LED, a long beep
        panel.press("repeat")
        app.loop.pump()
    closers = [threading.Thread(target=app.close) for _ in range(2)]  # as a signal and a finally may
    for c in closers:
        c.start()
    for c in closers:
        c.join(10)
    time.sleep(0.4)  # a blink started late would die within its 0.15 s on-time
    assert died == []


def test_the_journal_is_checked_beside_the_rest_of_a_start_and_a_failed_start_lets_go_of_all_it_holds(
        tmp_path: Path) -> None:
    """The journal is checked on a thread of its own while the start makes the
    rest (the panel, the table; a start waits for the longer of the two).  A
    journal that cannot be opened leaves no panel holding its pins and no lock
    held, and its error is the one raised; a panel that cannot be made leaves
    the journal opened beside it closed, and the lock free for the next start."""
    made: list[str] = []
    closed: list[str] = []
    opened_on: list[str] = []
    journals: list[Journal] = []

    class Panel:
        def close(self) -> None:
            closed.append(threading.current_thread().name)

    def factory(inbox: Inbox) -> Panel:
        made.append(threading.current_thread().name)
        return Panel()

    class Watched(Journal):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            opened_on.append(threading.current_thread().name)
            super().__init__(*args, **kwargs)
            journals.append(self)

    def start(where: str, panel: Any = factory, journal: Any = Watched) -> Any:
        return build(cfg, clock=VirtualClock(), log=lambda ev: None, voice=RecordingVoice(), reader=SimulatedReader(),
                     journal_path=tmp_path / where / "journal.sqlite", panel_factory=panel, journal_class=journal)

    cfg = config.load([], {})
    here = threading.current_thread().name
    start("first").close()
    assert opened_on == ["journal-open"] and made == [here]
    with pytest.raises(OSError, match="the card is read-only"):
        start("second", journal=Refusing)
    assert made == [here, here] and closed == [here, here]  # the first app's close, then the failed start's
    start("second").close()  # the failed start let its lock go

    def stopped(inbox: Inbox) -> Panel:
        raise KeyboardInterrupt  # stopped while the pins were claimed: nothing falls back to a mock panel

    with pytest.raises(KeyboardInterrupt):
        start("third", panel=stopped)
    assert len(journals) == 3  # the third start's journal, opened beside the panel, is closed again
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        journals[-1].db.execute("SELECT 1")
    start("third").close()


def test_the_lines_of_the_start_are_read_before_it_waits_for_the_journal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first thing a start says needs the narrator's lines (five files, about 13 ms):
    they are read while SQLite still checks the journal, not after it."""
    import voice.lines
    from companion.app.start import Start

    order: list[str] = []
    read, handed = voice.lines.load_lines, Start.journal

    def load_lines(lang: str, *args: Any) -> Any:
        order.append(f"lines:{lang}")
        return read(lang, *args)

    def journal(self: Start) -> Any:
        order.append("journal")
        return handed(self)

    monkeypatch.setattr(voice.lines, "load_lines", load_lines)
    monkeypatch.setattr(Start, "journal", journal)
    cfg = config.load([], {"language": "ja"})
    build(cfg, clock=VirtualClock(), log=lambda ev: None, voice=RecordingVoice(), reader=SimulatedReader(),
          journal_path=tmp_path / "journal.sqlite").close()
    assert order[:2] == ["lines:ja", "journal"]


def test_companion_run_begins_checking_the_journal_before_it_imports_the_rest_of_the_daemon(
        tmp_path: Path) -> None:
    """``companion run`` opens the journal (app.start) before it imports the daemon,
    the games' table, the panel's library: SQLite checks a long journal while they are
    imported.  A journal refused then (a newer release's) still ends the start cleanly."""
    state = tmp_path / "state"
    state.mkdir()
    db = sqlite3.connect(state / "journal.sqlite")
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    script = (
        "import json, sys\n"
        "from companion.app import cli, start\n"
        "seen, begin = [], start.Start.__init__\n"
        "def watched(self, *a, **k):\n"
        "    seen.append(sorted(m for m in ('companion.app.daemon', 'companion.runtime.loop', 'gpiozero')\n"
        "                       if m in sys.modules))\n"
        "    begin(self, *a, **k)\n"
        "start.Start.__init__ = watched\n"
        "rc = cli.main(['run', '--simulate', '--json', '--no-input', '--state', sys.argv[1]])\n"
        "print(json.dumps({'rc': rc, 'seen': seen}))\n")
    p = subprocess.run([python(), "-c", script, str(state)], capture_output=True, text=True, timeout=60,
                       env=child_env(), cwd=tmp_path)
    assert json.loads(p.stdout.splitlines()[-1]) == {"rc": 1, "seen": [[]]}, p.stderr
    assert "newer companion" in p.stderr


class Refusing:
    """A journal that cannot be opened at all (the card gone read-only as the table starts)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise OSError("the card is read-only")
