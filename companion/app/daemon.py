"""``companion run`` — the daemon.

On a Pi: the nfcpy reader under its supervisor, the gpiozero panel, real
speech, systemd readiness and watchdog.  With ``--simulate``: the same loop
with a simulated reader and gpiozero's MockFactory, driven from this
terminal (type a tag identity, a number from ``menu``, or a button name).
"""

from __future__ import annotations

import argparse
import difflib
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from companion import threads
from companion.app import wiring
from companion.app.start import Start
from companion.app.wiring import App, build
from companion.core import tags
from companion.core.events import Aside
from companion.core.table import PAGES_OFF, PAGES_ON
from companion.core.tags import printable
from companion.runtime.clock import RealClock
from companion.runtime.inbox import Inbox


def serve(args: argparse.Namespace, cfg: dict[str, Any], start: Start) -> int:
    """``companion run`` (``run_cmd``) from its checked config, its journal's opening
    begun: the rest made while the journal is checked, the table run until stopped."""
    from companion.app import sdnotify
    from companion.app.pretty import render

    out = sys.stdout
    # People read stdout only in the readable simulation; elsewhere it is the JSON log's.
    readable = args.simulate and not args.json
    human = sys.stdout if readable else sys.stderr
    screen = Screen(out)

    def log(ev: dict[str, Any]) -> None:
        if readable:  # every line said is shown, with its time stamp, whatever the voice backend
            if text := render(ev, lang=cfg["language"]):
                screen.print(text)
        else:
            print(json.dumps(ev, ensure_ascii=False), file=out, flush=True)

    reader = wiring.make_reader(cfg, args.simulate)
    # The loop's inbox exists before any part, so the voice reports into it from
    # the start (an engine fallback, bad pack files), before the loop is built.
    inbox = Inbox()
    voice = wiring.make_voice(cfg, args.simulate, human, inbox.report_error,
                              asked_for_tts=args.voice == "tts", shown=readable)
    from companion.app.web_app import listen_socket, resolve_listen, start_web

    listen = resolve_listen(cfg, args.web)
    read_side, listener, unserved = None, None, None
    if listen is not None:
        try:
            listener = listen_socket(*listen)
        except OSError as e:  # a taken port must not keep the table from playing: it plays without pages
            unserved, listen = (listen, e.strerror or str(e)), None
    if listen is not None:
        from web.live import WatchedReadSide

        read_side = WatchedReadSide()
    app = build(cfg, clock=RealClock(), log=log, voice=voice, reader=reader, background_backups=True,
                read_side=read_side, inbox=inbox, pages=PAGES_ON if listen is not None else PAGES_OFF, start=start)
    loop = app.loop

    stopping = threading.Event()
    on_signal = stop_on_signal(loop.stop, stopping, sdnotify.stopping)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    loop.start()
    reader.start(inbox)
    if unserved is not None:  # said at the table too: a game that needs the phones is refused at its card
        (host, port), why = unserved
        message = f"the table's pages are off: they could not listen on {host}:{port} ({why})"
        inbox.report_error(message)
        print(f"companion: {message}", file=sys.stderr, flush=True)
        inbox.submit(Aside("web.off", {"en": {"port": port}}))
    if listen is not None:  # after start(): the first page already sees the replayed table
        try:
            web = start_web(app, cfg, *listen, virtual=reader if args.simulate else None, sock=listener)
            print(f"companion: the table's pages are at {web.address}", file=human, flush=True)
        except OSError as e:  # a taken port must not keep the table from playing
            inbox.report_error(str(e))
            print(f"companion: {e}", file=sys.stderr, flush=True)
    sdnotify.ready()
    wiring.start_voice_fill(app, cfg["language"], inbox.report_error)
    if args.simulate and not args.no_input:
        # Blocked reading the terminal, it cannot be asked to stop: it ends with the process.
        threads.spawn("terminal", terminal, app, stopping, out=human, screen=screen,
                      extra_players=cfg["players"]["extra"])
    interval = sdnotify.watchdog_interval()  # None unless systemd set WatchdogSec=

    def tick() -> None:  # the watchdog is fed from the loop itself: a stuck loop gets restarted
        sdnotify.watchdog()

    try:
        if interval:
            loop.run(tick=tick, tick_every=min(interval, 1.0))
        else:
            loop.run()
    finally:
        app.close()
        stuck = threads.shutdown()  # anything the devices left running: stopped, joined, named
        if stuck:
            print(f"companion: threads that did not stop: {', '.join(stuck)}", file=sys.stderr)
    return 0


def stop_on_signal(stop: Callable[[], None], stopping: threading.Event,
                   notify: Callable[[], object]) -> Callable[[int, Any], None]:
    """The SIGTERM/SIGINT handler: it sets ``stopping`` and a thread of its
    own calls ``stop`` (the loop's).  A handler runs on the main thread
    between two bytecodes, possibly inside the loop's ``inbox.get`` with the
    queue's lock held: putting on that queue from the handler would wait for
    a lock its own thread holds, and the daemon would hang until killed."""

    def stop_when_asked() -> None:
        stopping.wait()
        stop()

    threads.spawn("signal-stop", stop_when_asked, stop=stopping.set)

    def on_signal(signum: int, frame: Any) -> None:
        stopping.set()  # this Event's lock is never held by the main thread: it never waits on it
        notify()

    return on_signal


# ------------------------------------------------------------- terminal
PROMPT = "> "


class Screen:
    """What the person at the terminal sees.  A line that arrives while they
    are typing at the prompt (narration on a timer) goes above the prompt,
    which is then drawn again with what they had typed (readline's buffer),
    so nothing they typed is overwritten."""

    def __init__(self, out: TextIO, typed: Callable[[], str] | None = None) -> None:
        self.out = out
        self.typed = typed or _typed
        self.prompting = False  # set by the terminal while input() waits
        self._lock = threading.Lock()

    def print(self, text: str) -> None:
        with self._lock:
            if self.prompting:
                self.out.write(f"\r\033[K{text}\n{PROMPT}{self.typed()}")
            else:
                self.out.write(text + "\n")
            self.out.flush()


def _typed() -> str:
    try:
        import readline

        return readline.get_line_buffer()
    except ImportError:  # pragma: no cover - readline is missing on some builds
        return ""


def _menu() -> list[str]:
    from companion.games import component_sets

    return [i for ids in component_sets().values() for i in ids]


TERMINAL_HELP = """\
  skb/knight/3, player/red, …   lay that tag on the reader (Tab completes)
  12                            the tag numbered 12 in 'menu'
  uid:04A1B2C3                  a tag known only by its UID (through the tag map)
  text:anything                 a tag carrying this text, known or not (the table's refusal)
  next  back  repeat            press a button;  hold: hold back (restart the step / abandon)
  unplug  plug                  take the reader away and give it back
  leds  menu  help  quit"""


COMMAND_WORDS = ("next", "back", "repeat", "hold", "unplug", "plug", "leds", "menu", "help", "quit")


def not_understood(cmd: str, words: Sequence[str]) -> str:
    """The terminal's answer to a word that is no tag and no command: a typo
    is the person's, so it is answered here and never laid on the reader
    (where the table would say "I don't know that tag" and light the error LED)."""
    close = difflib.get_close_matches(cmd, words, n=1, cutoff=0.6)
    hint = f"did you mean `{close[0]}`? " if close else ""
    return f"  {printable(cmd)!r} is no tag and no command: {hint}(help lists them; text:{printable(cmd)} lays it anyway)"


def terminal(app: App, stopping: threading.Event, inp: TextIO | None = None,
             out: TextIO | None = None, screen: Screen | None = None,
             extra_players: Iterable[str] = ()) -> None:
    """Commands from a person: an identity (``skb/knight/3``), a number from
    ``menu``, ``uid:04A1…``, ``text:…``, a button (``next``/``back``/``repeat``/
    ``hold``), ``unplug``/``plug``, ``leds``, ``help``, ``quit``.  Anything
    else is answered here and reaches nothing (``not_understood``)."""
    from companion.games import identities

    inp, out = inp or sys.stdin, out or sys.stdout
    interactive = inp is sys.stdin and inp.isatty() and out is sys.stdout
    menu = _menu()
    extra_players = tuple(extra_players)
    menu += [f"player/{p}" for p in extra_players if f"player/{p}" not in menu]
    components = frozenset(identities())  # the games' cards and pieces
    words = menu + list(COMMAND_WORDS)
    try:
        import readline

        readline.set_completer(lambda text, state: ([w for w in words if w.startswith(text)] + [None])[state])
        readline.set_completer_delims(" ")
        readline.parse_and_bind("tab: complete")
    except ImportError:  # pragma: no cover - readline is missing on some builds
        pass
    print("Type a tag (tab completes, 'menu' lists numbers), next/back/repeat/hold, unplug/plug, quit.",
          file=out, flush=True)
    (reader, panel), loop = wiring.simulated(app), app.loop
    while not stopping.is_set():
        try:
            if interactive and screen is not None:
                screen.prompting = True
            line = input(PROMPT) if interactive else inp.readline()
        except EOFError:
            line = ""
        finally:
            if screen is not None:
                screen.prompting = False
        if not line:
            loop.stop()
            return
        cmd = line.strip()
        if not cmd:
            continue
        if cmd in ("quit", "exit"):
            loop.stop()
            return
        if cmd == "help":
            print(TERMINAL_HELP, file=out)
        elif cmd == "menu":
            for i, ident in enumerate(menu, 1):
                print(f"{i:3} {ident}", file=out)
        elif cmd == "leds":
            _show_leds(panel, out)
        elif cmd in ("next", "back", "repeat"):
            panel.press(cmd)
        elif cmd == "hold":
            panel.hold("back", panel.hold_back_s * 1.5)
        elif cmd == "unplug":
            reader.unplug()
        elif cmd == "plug":
            reader.plug()
        elif cmd.isdigit() and 1 <= int(cmd) <= len(menu):
            reader.present(text=menu[int(cmd) - 1])
        elif cmd.startswith("uid:"):
            if not tags.valid_uid(cmd[4:]):
                print(f"  uid: takes the tag's UID in hex (8 to 20 digits 0-9, A-F), e.g. uid:04A1B2C3; "
                      f"not {printable(cmd[4:])!r}", file=out, flush=True)
                continue
            reader.present(uid=cmd[4:])
        elif cmd.startswith("text:") and cmd[5:]:
            reader.present(text=cmd[5:])
        elif tags.is_known(cmd, extra_players, components):
            reader.present(text=cmd)
        else:
            print(not_understood(cmd, words), file=out, flush=True)
            continue
        time.sleep(0.05)  # let the loop answer before the next prompt
        if not cmd.startswith(("menu", "help", "leds")):
            _show_leds(panel, out)


def _show_leds(panel: Any, out: TextIO) -> None:
    print("  LEDs  " + "  ".join(f"{k} {'●' if v else '○'}" for k, v in panel.state().items()),
          file=out, flush=True)


