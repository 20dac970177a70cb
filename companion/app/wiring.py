"""The composition root: the one place that wires the shell (readers, panel,
voice) to the core (table, loop, journal, clock) from a loaded config."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from companion import threads
from companion.app import config as configmod
from companion.app.start import Start, begin, state_dir
from companion.core import wire
from companion.core.events import Say
from companion.core.messages import Device, ReadSide
from companion.core.table import PAGES_ASSUMED, Table
from companion.runtime.backups import GameEndBackups
from companion.runtime.clock import Clock
from companion.runtime.draws import Drawer
from companion.runtime.inbox import Inbox
from companion.runtime.journal import Journal
from companion.runtime.loop import TableLoop
from companion.runtime.router import LogSink, PanelSink, Router, SpeakerSink
from companion.runtime.state_lock import StateLock
from companion.runtime.wal_keeper import WalKeeper
from mqtt import settings as mqtt_settings

if TYPE_CHECKING:  # the shell's types; its modules are imported where a part is made
    from hardware.base import Reader
    from hardware.panel import Panel
    from hardware.sim_panel import SimulatedPanel
    from hardware.sim_reader import SimulatedReader
    from voice.base import Voice
    from voice.prerender import FillGate

Log = Callable[[dict[str, Any]], None]


@dataclass
class App:
    loop: TableLoop
    journal: Journal
    router: Router
    reader: Reader
    panel: Panel
    voice: Voice
    sinks: dict[str, Device]  # name → the output device attached to the router, in the order attached
    lock: StateLock | None = None
    wal: WalKeeper | None = None  # folds the journal's WAL off the tap's path

    def attach(self, name: str, device: Device) -> None:
        """Hand ``device`` what it wants from now on; ``close`` closes it."""
        self.router.attach(device)
        self.sinks[name] = device

    def close(self) -> None:
        """Close the reader, then every device, the last attached first (each
        stops and joins its own workers; closing twice is harmless).  The
        process's last word on threads is ``threads.shutdown()``, which the
        commands call on their way out."""
        parts: list[Reader | Device] = [self.reader, *reversed(self.sinks.values())]
        for part in parts:
            try:
                part.close()
            except Exception:  # closing must not hide the reason we are closing
                pass
        if self.wal is not None:
            self.wal.close()
        self.journal.close()  # and its mirror
        if self.lock is not None:
            self.lock.release()


@dataclass(frozen=True)
class Parts:
    """What a device's maker is handed: the checked config and the parts
    built before the devices (the log, the voice, the panel)."""

    cfg: dict[str, Any]
    log: Log
    voice: Voice
    panel: Panel
    games: Mapping[str, Any]  # the registry: whose lines the fill renders first
    loop: TableLoop | None = None  # a device that reads the table (on the loop's thread) or feeds its inbox


@dataclass(frozen=True)
class DevicePlan:
    """An output device the wiring attaches: its name, and how it is made
    from the ``Parts`` (None: not wanted with this config)."""

    name: str
    make: Callable[[Parts], Device | None] = field(compare=False)


def _fill_gate(parts: Parts) -> Device | None:
    """A voice with a WAV cache: its background fill keeps out of the table's way."""
    if getattr(parts.voice, "cache", None) is None:
        return None
    from companion.app import catalogue
    from voice.prerender import FillGate

    return FillGate(catalogue.game_line_folders(parts.games.values()))


def _mqtt_link(parts: Parts) -> Device | None:
    """The table on an MQTT broker (``mqtt.broker`` set): its outbox on a
    connection of its own to the journal, commands into the inbox."""
    from mqtt import settings

    if not settings.enabled(parts.cfg) or parts.loop is None:
        return None
    from companion.runtime.outbox import OutboxStore
    from mqtt.link import make_link

    loop = parts.loop
    link = make_link(parts.cfg, view=loop.table, outbox=OutboxStore(loop.journal.path, loop.journal.connection),
                     inbox=loop.inbox)
    if parts.cfg["mqtt"]["homeassistant"]:
        _home_assistant(link, parts)
    return link


def _home_assistant(link: Any, parts: Parts) -> None:
    """Home Assistant's device discovery rides the link: sent at every
    connection and again whenever Home Assistant says it is back (its
    ``homeassistant/status`` birth).  The payload names games and steps,
    never a deal: the same by night as by day."""
    import companion
    from companion.app import catalogue
    from companion.games import manifests
    from mqtt import homeassistant, settings

    assert parts.loop is not None
    table, games = parts.loop.table, tuple(parts.games.values())
    names = catalogue.page_games(catalogue.narrator(games).lines, games)
    tid, commands = settings.table_id(parts.cfg), bool(parts.cfg["mqtt"]["commands"])

    def announce(client: Any = None) -> None:
        """``client``: the one just connected (the link may not hold it yet)."""
        topic, body = homeassistant.discovery(tid, manifests(games), commands=commands, lang=table.lang, names=names,
                                              sw=getattr(companion, "__version__", None))
        if client is not None:
            client.publish(topic, body, qos=1)
        else:
            link.publish(topic, body)

    link.on_connected(announce)
    link.subscribe(homeassistant.HA_STATUS_TOPIC,
                   lambda message: announce() if homeassistant.on_ha_status(message.payload) else None,
                   every_s=homeassistant.REPUBLISH_S)


# Every output device, in the order the router hands each message on.  A new
# device is a module (a ``Device``: ``wants``, ``receive``, ``close``), its
# config part (companion/app/config.py's SCHEMA, config/companion.yaml) and
# one line here (docs/develop/adding-a-device.md).
DEVICES: tuple[DevicePlan, ...] = (
    DevicePlan("log", lambda p: LogSink(p.log)),
    DevicePlan("speaker", lambda p: SpeakerSink(p.voice)),
    DevicePlan("fill", _fill_gate),
    DevicePlan("panel", lambda p: PanelSink(p.panel)),
    DevicePlan("mqtt", _mqtt_link),
)


def recording_voice() -> Voice:
    """A voice that keeps what it is asked to say (simulations, tests)."""
    from voice.base import RecordingVoice

    return RecordingVoice()


def build(cfg: dict[str, Any], *, clock: Clock, log: Log, voice: Voice, reader: Reader,
          panel_factory: Callable[[Inbox], Panel] | None = None,
          journal_path: Path | None = None, draws: Mapping[str, Any] | None = None,
          games: Mapping[str, Any] | None = None, background_backups: bool = False,
          read_side: ReadSide | None = None, inbox: Inbox | None = None,
          pages: str = PAGES_ASSUMED, devices: Sequence[DevicePlan] = DEVICES,
          journal_class: type[Journal] | None = None, start: Start | None = None) -> App:
    """The daemon's parts, wired: the journal (locked to this process,
    checked, recovered), the table loop in the middle, the reader and the
    panel's buttons feeding it, and the output ``devices`` (log, speaker,
    fill gate, panel) attached to the router, each by what it wants.  ``games``: the registry (tests
    may hand in their own engines); ``read_side``: the one the pages read
    (companion.app.web_app); ``inbox``: the loop's, when a part built
    before this call (the voice) already reports into it; ``pages``: are the
    players' pages served (``on``, ``off``) or does a script stand for them
    (``assumed``; core.table); ``journal_class``: the journal's (a modeled
    SD card, qa/bench/tap_feedback.py); ``start``: the lock and the journal's
    opening, begun earlier (``app.start``), else begun here."""
    start = start or begin(cfg, journal_path, journal_class)
    made: list[Panel] = []
    try:  # made while the journal is checked (app.start)
        from companion.app import catalogue
        from companion.games import manifests, registry

        games = games if games is not None else registry()
        # The inbox comes first, so each part is handed its way in as it is built.
        inbox = inbox if inbox is not None else Inbox()
        panel, panel_error = _make_panel(panel_factory or _default_panel(cfg), inbox)
        made.append(panel)
        table = Table(games, lang=cfg["language"], options=cfg["games"], names=cfg["players"]["names"],
                      pages=pages)
        tag_map = configmod.load_tag_map(cfg["reader"]["tag_map"], cfg["players"]["extra"])
        narrate = catalogue.narrator(games.values())
        narrate.lines(cfg["language"])  # read now, while SQLite reads: the start's first line needs them
        journal, notices = start.journal()
    except BaseException:
        start.let_go(made)
        raise
    lock, mirror_dir = start.lock, start.mirror_dir
    router = Router()
    backups = GameEndBackups(journal, inbox.report_error, background=background_backups)
    if panel_error:
        inbox.report_error(panel_error)
    loop = TableLoop(table, journal, clock, narrate=narrate, router=router,
                     drawer=Drawer(cfg["seed"], draws), tag_map=tag_map, extra_players=cfg["players"]["extra"],
                     extra_identities=[i for g, cls in games.items() for i in (f"game/{g}", *cls.components)],
                     after_input=backups.after_input,
                     read_side=read_side, pair_window_s=cfg["web"]["pair_window_s"],
                     notices=[(Say(n.key, n.params) if n.key else None, n.message) for n in notices],
                     inbox=inbox, publish_as=mqtt_settings.table_id(cfg) if mqtt_settings.enabled(cfg) else None,
                     publishes=wire.published(manifests(tuple(games.values()))))
    if mirror_dir is not None:
        _mirror(journal, mirror_dir, loop)
    # Folds the WAL at quiet moments (the daemon: on a thread of its own), never in a tap's commit.
    wal = WalKeeper(journal, inbox.report_error, background=background_backups,
                    timed=lambda: bool(loop.pending_timers()))
    loop.observers.append(wal.observe)
    app = App(loop, journal, router, reader, panel, voice, {}, lock, wal)
    parts = Parts(cfg, log, voice, panel, games, loop)
    for plan in devices:
        device = plan.make(parts)
        if device is not None:
            app.attach(plan.name, device)
    start.built = True
    return app

def _mirror(journal: Journal, folder: Path, loop: TableLoop) -> None:
    """The journal's mirror: brought up to the journal, then given every input;
    a failure is logged at once and said once, never by night."""
    from companion.runtime.mirror import Mirror

    mirror = Mirror(folder)
    mirror.report = loop.inbox.report_error
    mirror.open(journal.db, journal.epoch)
    journal.mirror = mirror
    loop.held_back.add(mirror.due)


def make_voice(cfg: dict[str, Any], simulate: bool, out: TextIO, on_error: Callable[[str], None],
               asked_for_tts: bool = False, shown: bool = False) -> Voice:
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


def make_reader(cfg: dict[str, Any], simulate: bool) -> Reader:
    if simulate or cfg["reader"]["backend"] == "simulated":
        from hardware.sim_reader import SimulatedReader

        return SimulatedReader()
    from hardware.nfc_reader import NfcConfig, NfcReader  # supervised: a lost reader is retried, never fatal

    return NfcReader(NfcConfig.from_checked(cfg["reader"]))


def simulated(app: App) -> tuple[SimulatedReader, SimulatedPanel]:
    """The simulated reader and panel of an app built for a simulation (a
    script, the terminal, the page's virtual table): the hands a person
    lends them (``present``, ``unplug``, ``press``…)."""
    from hardware.sim_panel import SimulatedPanel
    from hardware.sim_reader import SimulatedReader

    reader, panel = app.reader, app.panel
    if not isinstance(reader, SimulatedReader) or not isinstance(panel, SimulatedPanel):
        raise TypeError(f"not a simulated table: {type(reader).__name__}, {type(panel).__name__}")
    return reader, panel


def start_voice_fill(app: App, lang: str, on_error: Callable[[str], None]) -> None:
    """Fill the WAV cache behind the table's back (a voice that has one), so
    cues then cost no synthesis: on its own thread, the table's language
    first, holding off while the table runs on the clock (``FillGate``, fed
    by the router since ``build``)."""
    if "fill" not in app.sinks:
        return
    from voice.prerender import FillGate

    gate = app.sinks["fill"]
    if isinstance(gate, FillGate):
        threads.spawn("prerender", _fill, app.voice, lang, on_error, gate, stop=gate.close)


def _fill(voice: Any, lang: str, on_error: Callable[[str], None], gate: FillGate | None = None) -> None:
    """``voice``: one with a WAV cache (the fill gate is made only for such a one)."""
    from voice.prerender import fill

    try:
        fill(voice, [lang, "en", "ja"], gate=gate)  # the table's language first, at low priority
    except Exception as e:  # no espeak-ng, disk full: live synthesis still works, or says why
        on_error(f"voice prerender stopped: {type(e).__name__}: {e}")



def _make_panel(factory: Callable[[Inbox], Panel], inbox: Inbox) -> tuple[Panel, str | None]:
    """The configured panel; off a Pi (or with its pins taken) a panel on
    gpiozero's MockFactory instead, so the table still runs on taps alone."""
    import warnings

    try:
        with warnings.catch_warnings():  # gpiozero warns per factory it tries; the error below says it all
            warnings.simplefilter("ignore")
            return factory(inbox), None
    except Exception as e:  # gpiozero raises a zoo of BadPinFactory/PinInUse/OSError here
        from hardware.panel import Panel, mock_factory

        panel = Panel(inbox, pin_factory=mock_factory())
        return panel, f"panel unavailable ({type(e).__name__}: {e}); running without buttons and LEDs"


def _default_panel(cfg: dict[str, Any]) -> Callable[[Inbox], Panel]:
    from dataclasses import replace

    from hardware.panel import PanelConfig

    mock = cfg["panel"]["backend"] == "mock"
    pcfg = PanelConfig.from_checked(cfg["panel"])

    def make(inbox: Inbox) -> Panel:
        if not mock:
            from hardware.panel import Panel

            return Panel.from_config(inbox, pcfg)
        from hardware.sim_panel import SimulatedPanel

        # Mock pins are driven by software with no contact bounce, and a
        # simulated long press should not cost seconds of real time.
        return SimulatedPanel.from_config(inbox, replace(pcfg, bounce_s=None, hold_back_s=0.05))
    return make
