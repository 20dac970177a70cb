"""The composition root: the one place that wires the shell (readers, panel,
voice) to the core (table, loop, journal, clock) from a loaded config."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from companion.app import config as configmod
from companion.core import threads
from companion.core.events import TABLE, ButtonPressed, Say
from companion.core.messages import ReadSide
from companion.core.table import PAGES_ASSUMED, Table
from companion.runtime.backups import GameEndBackups
from companion.runtime.clock import Clock
from companion.runtime.draws import Drawer
from companion.runtime.inbox import Inbox
from companion.runtime.journal import Journal
from companion.runtime.journal_guard import open_journal
from companion.runtime.loop import TableLoop
from companion.runtime.router import LogSink, PanelSink, Router, SpeakerSink
from companion.runtime.state_lock import StateLock

Log = Callable[[dict[str, Any]], None]


def state_dir(cfg: dict[str, Any]) -> Path:
    return Path(cfg["state_dir"] or os.environ.get("STATE_DIRECTORY", "").split(":")[0] or "state")


@dataclass
class App:
    loop: TableLoop
    journal: Journal
    router: Router
    reader: Any
    panel: Any
    voice: Any
    sinks: dict[str, Any]  # name → the sink subscribed to the router (log, speaker, panel)
    lock: StateLock | None = None

    def close(self) -> None:
        """Close every device (each stops and joins its own workers; closing
        twice is harmless).  The process's last word on threads is
        ``threads.shutdown()``, which the commands call on their way out."""
        for part in (self.reader, self.panel, self.voice):
            try:
                part.stop() if hasattr(part, "stop") else part.close()
            except Exception:  # closing must not hide the reason we are closing
                pass
        self.journal.close()
        if self.lock is not None:
            self.lock.release()


def recording_voice() -> Any:
    """A voice that keeps what it is asked to say (simulations, tests)."""
    from voice.base import RecordingVoice

    return RecordingVoice()


def build(cfg: dict[str, Any], *, clock: Clock, log: Log, voice: Any, reader: Any,
          panel_factory: Callable[[Callable[[str], None]], Any] | None = None,
          journal_path: Path | None = None, draws: Mapping[str, Any] | None = None,
          games: Mapping[str, Any] | None = None, background_backups: bool = False,
          read_side: ReadSide | None = None, inbox: Inbox | None = None,
          pages: str = PAGES_ASSUMED) -> App:
    """The daemon's parts, wired: the journal (locked to this process,
    checked, recovered), the table loop in the middle, the reader and the
    panel's buttons feeding it, and the sinks (log, speaker, panel)
    subscribed to the router by audience.  ``games``: the registry (tests
    may hand in their own engines); ``read_side``: the one the pages read
    (companion.app.web_app); ``inbox``: the loop's, when a part built
    before this call (the voice) already reports into it; ``pages``: are the
    players' pages served (``on``, ``off``) or does a script stand for them
    (``assumed``; core.table)."""
    from companion.app import catalogue
    from companion.games import registry

    games = games if games is not None else registry()
    path = journal_path or state_dir(cfg) / "journal.sqlite"
    lock = StateLock(path)  # one daemon per journal: StateLocked names the other one
    try:
        journal, notices = open_journal(path, Journal)  # checked, recovered, bad rows quarantined
    except BaseException:
        lock.release()
        raise
    table = Table(games, lang=cfg["language"], options=cfg["games"], names=cfg["players"]["names"],
                  pages=pages)
    tag_map = configmod.load_tag_map(cfg["reader"]["tag_map"], cfg["players"]["extra"])
    router = Router()
    sinks: dict[str, Any] = {"log": LogSink(log), "speaker": SpeakerSink(voice)}
    router.subscribe(sinks["log"].receive)
    router.subscribe(sinks["speaker"].receive, TABLE)
    if hasattr(voice, "cache"):  # a voice with a WAV cache: its background fill keeps out of the table's way
        from voice.prerender import FillGate

        sinks["fill"] = FillGate(catalogue.game_line_folders(games.values()))
        router.subscribe(sinks["fill"].receive, TABLE)
    # The inbox comes first, so each part is handed its way in as it is built.
    inbox = inbox if inbox is not None else Inbox()
    backups = GameEndBackups(journal, inbox.report_error, background=background_backups)
    panel, panel_error = _make_panel(panel_factory or _default_panel(cfg),
                                     lambda name: inbox.submit(ButtonPressed(name)))
    if panel_error:
        inbox.report_error(panel_error)
    loop = TableLoop(table, journal, clock, narrate=catalogue.narrator(games.values()), router=router,
                     drawer=Drawer(cfg["seed"], draws), tag_map=tag_map, extra_players=cfg["players"]["extra"],
                     extra_identities=[i for g, cls in games.items() for i in (f"game/{g}", *cls.components)],
                     on_game_end=backups, read_side=read_side, pair_window_s=cfg["web"]["pair_window_s"],
                     notices=[(Say(n.key, n.params) if n.key else None, n.message) for n in notices],
                     inbox=inbox)
    sinks["panel"] = PanelSink(panel)
    router.subscribe(sinks["panel"].receive, TABLE)
    return App(loop, journal, router, reader, panel, voice, sinks, lock)

def make_voice(cfg: dict[str, Any], simulate: bool, out: TextIO, on_error: Callable[[str], None],
               asked_for_tts: bool = False, shown: bool = False) -> Any:
    """The voice backend; ``shown``: the terminal already shows every line
    said (the readable simulation), so the console voice would print it twice."""
    backend = cfg["voice"]["backend"]
    if simulate and backend == "tts" and not asked_for_tts:
        backend = "console"  # a simulation speaks only when asked to (--voice tts)
    if backend == "tts":
        from companion.app.catalogue import line_folders
        from voice.tts_voice import TtsVoice

        return TtsVoice({**cfg["voice"], "cache_dir": cfg["voice"]["cache_dir"]
                         or str(state_dir(cfg) / "voice-cache")}, on_error=on_error, lines_dir=line_folders())
    from voice.console import ConsoleVoice, SilentVoice

    return SilentVoice() if backend == "silent" or shown else ConsoleVoice(out)


def make_reader(cfg: dict[str, Any], simulate: bool) -> Any:
    if simulate or cfg["reader"]["backend"] == "simulated":
        from hardware.sim_reader import SimulatedReader

        return SimulatedReader()
    from hardware.nfc_reader import NfcConfig, NfcReader  # supervised: a lost reader is retried, never fatal

    return NfcReader(NfcConfig.from_checked(cfg["reader"]))


def start_voice_fill(app: App, lang: str, on_error: Callable[[str], None]) -> None:
    """Fill the WAV cache behind the table's back (a voice that has one), so
    cues then cost no synthesis: on its own thread, the table's language
    first, holding off while the table runs on the clock (``FillGate``, fed
    by the router since ``build``)."""
    gate = app.sinks.get("fill")
    if gate is not None:
        threads.spawn("prerender", _fill, app.voice, lang, on_error, gate, stop=gate.stop)


def _fill(voice: Any, lang: str, on_error: Callable[[str], None], gate: Any = None) -> None:
    from voice.prerender import fill

    try:
        fill(voice, [lang, "en", "ja"], gate=gate)  # the table's language first, at low priority
    except Exception as e:  # no espeak-ng, disk full: live synthesis still works, or says why
        on_error(f"voice prerender stopped: {type(e).__name__}: {e}")



def _make_panel(factory: Callable[[Callable[[str], None]], Any],
                on_button: Callable[[str], None]) -> tuple[Any, str | None]:
    """The configured panel; off a Pi (or with its pins taken) a panel on
    gpiozero's MockFactory instead, so the table still runs on taps alone."""
    import warnings

    try:
        with warnings.catch_warnings():  # gpiozero warns per factory it tries; the error below says it all
            warnings.simplefilter("ignore")
            return factory(on_button), None
    except Exception as e:  # gpiozero raises a zoo of BadPinFactory/PinInUse/OSError here
        from hardware.panel import Panel, mock_factory

        panel = Panel(on_button, pin_factory=mock_factory())
        return panel, f"panel unavailable ({type(e).__name__}: {e}); running without buttons and LEDs"


def _default_panel(cfg: dict[str, Any]) -> Callable[[Callable[[str], None]], Any]:
    from dataclasses import replace

    from hardware.panel import PanelConfig

    mock = cfg["panel"]["backend"] == "mock"
    pcfg = PanelConfig.from_checked(cfg["panel"])

    def make(on_button: Callable[[str], None]) -> Any:
        if not mock:
            from hardware.panel import Panel

            return Panel.from_config(on_button, pcfg)
        from hardware.sim_panel import SimulatedPanel

        # Mock pins are driven by software with no contact bounce, and a
        # simulated long press should not cost seconds of real time.
        return SimulatedPanel.from_config(on_button, replace(pcfg, bounce_s=None, hold_back_s=0.05))
    return make
