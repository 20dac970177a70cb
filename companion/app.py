"""The composition root: the one place that wires the shell (readers, panel,
voice) to the core (session, loop, journal, clock) from a loaded config."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion import config as configmod
from companion.clock import Clock
from companion.events import ButtonPressed, Say
from companion.journal_guard import GameEndBackups, StateLock, open_journal
from companion.loop import Log, TableLoop
from companion.session import Session
from companion.store import Journal


def state_dir(cfg: dict[str, Any]) -> Path:
    return Path(cfg["state_dir"] or os.environ.get("STATE_DIRECTORY", "").split(":")[0] or "state")


def journal_seed(cfg: dict[str, Any], journal: Journal) -> int:
    """The seed is part of the journal: a replay must make the same random
    choices as the original run, so an unconfigured seed is chosen once and kept."""
    if cfg["seed"] is not None:
        return int(cfg["seed"])
    stored = journal.meta("seed")
    if stored is None:
        stored = str(int.from_bytes(os.urandom(4), "big") >> 1)  # os.urandom: the secrets module costs 4 MB of RSS
        journal.set_meta("seed", stored)
    return int(stored)


@dataclass
class App:
    loop: TableLoop
    journal: Journal
    reader: Any
    panel: Any
    voice: Any
    lock: StateLock | None = None

    def close(self) -> None:
        for part in (self.reader, self.panel, self.voice):
            try:
                part.stop() if hasattr(part, "stop") else part.close()
            except Exception:  # closing must not hide the reason we are closing
                pass
        self.journal.close()
        if self.lock is not None:
            self.lock.release()


def build(cfg: dict[str, Any], *, clock: Clock, log: Log, voice: Any, reader: Any,
          panel_factory: Callable[[Callable[[str], None]], Any] | None = None,
          journal_path: Path | None = None, background_backups: bool = False) -> App:
    from voice.lines import Narrator

    path = journal_path or state_dir(cfg) / "journal.sqlite"
    lock = StateLock(path)  # one daemon per journal: StateLocked names the other one
    try:
        journal, notices = open_journal(path, Journal)  # checked, recovered, bad rows quarantined
    except BaseException:
        lock.release()
        raise
    session = Session(seed=journal_seed(cfg, journal), lang=cfg["language"], options=cfg["games"],
                      names=cfg["players"]["names"])
    tag_map = configmod.load_tag_map(cfg["reader"]["tag_map"], cfg["players"]["extra"])
    holder: dict[str, TableLoop] = {}

    def on_button(name: str) -> None:
        holder["loop"].submit(ButtonPressed(name))

    panel, panel_error = _make_panel(panel_factory or _default_panel(cfg), on_button)
    errors: list[Callable[[str], None]] = []  # the loop's, once it exists
    backups = GameEndBackups(journal, lambda msg: errors[0](msg), background=background_backups)
    loop = TableLoop(session, journal, clock, narrate=Narrator(), voice=voice, feedback=panel, log=log,
                     tag_map=tag_map, extra_players=cfg["players"]["extra"], on_game_end=backups,
                     notices=[(Say(n.key, n.params) if n.key else None, n.message) for n in notices])
    holder["loop"] = loop
    errors.append(loop.report_error)
    if panel_error:
        loop.report_error(panel_error)
    return App(loop, journal, reader, panel, voice, lock)


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
    from hardware.panel import Panel, mock_factory

    pcfg = cfg["panel"]

    def make(on_button: Callable[[str], None]) -> Any:
        if pcfg["backend"] != "mock":
            return Panel.from_config(on_button, pcfg)
        # Mock pins are driven by software with no contact bounce, and a
        # simulated long press should not cost seconds of real time.
        return Panel.from_config(on_button, {**pcfg, "bounce_s": None, "hold_back_s": 0.05},
                                 pin_factory=mock_factory())
    return make
