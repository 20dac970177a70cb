"""The table loop: inputs from the sources (reader, panel, pages) in, through
the table and the active game, out through the outputs seam to the sinks of
each output's audience (speaker, panel, log, public page, each player's page).

One thread runs it.  Sources only ``submit`` (thread-safe); the loop journals
every accepted input durably *before* any feedback, makes the secret draws
the games ask for (journaled the same way), keeps the timers, and on start
rebuilds the table by replaying the journal.  What it says and to whom is the
outputs seam's (runtime.outputs), pairing the pairing desk's (runtime.pairing),
the reader's notices runtime.notices', the pages runtime.pages', a finished
game's record runtime.plays': each hands back, none calls the loop.  It
imports no hardware, voice or web module: the wiring subscribes those.
"""

from __future__ import annotations

import heapq
import itertools
import queue
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from companion.core import tags
from companion.core.events import (
    LOG,
    ButtonPressed,
    CancelTimer,
    Draw,
    Drawn,
    Housekeeping,
    Input,
    Output,
    Press,
    ReaderStatus,
    Refusal,
    Report,
    Say,
    SetTimer,
    ShellError,
    Sound,
    Submit,
    TagSeen,
    Tap,
    Tell,
    TimerFired,
)
from companion.core.messages import PageInput, PairRequest, ReadSide
from companion.core.table import PLAYING, Table
from companion.runtime.clock import BEHIND_S, Clock, Record
from companion.runtime.draws import Drawer, DrawError
from companion.runtime.inbox import Inbox
from companion.runtime.journal import Journal, JournalError
from companion.runtime.notices import ReaderNotices, journal_notices
from companion.runtime.outputs import Narrate, Outputs
from companion.runtime.pages import PageProjection
from companion.runtime.pairing import PairingDesk
from companion.runtime.plays import game_started, play_record, utc
from companion.runtime.router import Router

# An observer sees each step of the loop's work, on the loop's thread:
# ("event", item, None) as an item leaves the inbox, ("input", inp, at) before
# an input is handled (``at``: a timer's due time), ("journaled", inp, seconds
# the append took) once it is durable, ("read_side", None, seconds the page
# projection took) and ("done", inp, None) when its outputs are out.
Observer = Callable[[str, Any, Any], None]

_STOP = object()
SESSION_GAP_S = 6 * 3600  # a start this long after the last input begins a new games night
TIMER_RETRY_S = 0.5  # a timer whose journal write failed fires again this much later


class TableLoop:
    def __init__(self, table: Table, journal: Journal, clock: Clock, *, narrate: Narrate, router: Router,
                 drawer: Drawer | None = None, read_side: ReadSide | None = None,
                 tag_map: Mapping[str, str] | None = None, extra_players: Iterable[str] = (),
                 extra_identities: Iterable[str] = (), pair_window_s: float = 30.0,
                 on_game_end: Callable[[], None] | None = None,
                 notices: Iterable[tuple[Say | None, str]] = (), inbox: Inbox | None = None) -> None:
        self.table, self.journal, self.clock, self.router, self.narrate = table, journal, clock, router, narrate
        self.drawer = drawer or Drawer()
        self.read_side = read_side or ReadSide()
        self.tag_map = dict(tag_map or {})
        self.extra_players = tuple(extra_players)
        self.extra_identities = frozenset(extra_identities)  # games' cards beyond the contract's
        self.observers: list[Observer] = []
        self.inbox = inbox if inbox is not None else Inbox()  # made first by the wiring, for every part
        self.out = Outputs(table, router, narrate, clock)
        self.desk = PairingDesk(table, narrate, clock.now, self.extra_players, pair_window_s)
        self.reader = ReaderNotices()
        self.pages = PageProjection(table, narrate, self.read_side, ask=self.inbox.put)
        self._timers: list[tuple[float, int, str]] = []  # heap of (due, order, name)
        self._live: dict[str, tuple[float, int]] = {}  # name → the heap entry that counts
        self._order = itertools.count()
        self._draw_retries: dict[str, Draw] = {}  # a draw whose journal write failed, by retry timer
        self._last_draw: Draw | None = None  # the request behind the Drawn being handled
        self.times = Record(clock, journal.last_times())  # what the journal records: clock.Record
        self._clock_said = False  # "the clock is behind the saved games", once a run
        self._evening_unknown = False  # the clock was behind at start: was that a new evening?
        self._played = False  # a game ended in this run
        self._game_start: float | None = None  # the table time (the journal's t) the game in progress began
        self.on_game_end = on_game_end  # after a game's result is heard (backups)
        self.notices = list(notices)  # what start() tells the table about the journal (a recovery)
        self._activity: dict[str, Any] | None = None  # as last published (``_publish_activity``)

    # ----------------------------------------------------------- threads
    def submit(self, item: Any) -> None:
        """From any thread: a TagSeen, ReaderStatus, ButtonPressed, ShellError,
        a player's ``Submit`` from their page, or a ``PairRequest``."""
        self.inbox.put(item)

    def call_soon(self, fn: Callable[[], Any]) -> None:
        """From any thread: run ``fn`` on the loop's thread, after what is queued."""
        self.inbox.put(fn)

    def announce(self, key: str, params: Mapping[str, Mapping[str, Any]]) -> None:
        """From any thread: a line the shell has for the table (the pages'
        address at start), with its params for each language (a host name is
        said one way in English, spelled in katakana in Japanese), said after
        what is queued, never at night.  Not journaled, not repeated."""
        self.call_soon(lambda: self.out.shell_say([Say(key, dict(params.get(self.table.lang) or params["en"]))]))

    def report_error(self, message: str) -> None:
        """From any thread: log something the shell survived."""
        self.inbox.report_error(message)

    def stop(self) -> None:
        self.inbox.put(_STOP)

    def pump(self) -> None:
        """Handle everything submitted so far (simulation and tests)."""
        while True:
            try:
                event = self.inbox.get_nowait()
            except queue.Empty:
                return
            if event is not _STOP:
                self._event(event)

    def run(self, tick: Callable[[], None] | None = None, tick_every: float = 1.0) -> None:
        """The real-time loop: wait for events and timers until ``stop()``."""
        last_tick = -1e9
        while True:
            wait = min(self._next_due() - self.clock.now(), tick_every) if self._timers else tick_every
            try:
                event = self.inbox.get(timeout=max(0.0, wait))
            except queue.Empty:
                event = None
            if event is _STOP:
                return
            if event is not None:
                self._event(event)
            self.fire_due(self.clock.now())
            if tick is not None and self.clock.now() - last_tick >= tick_every:
                last_tick = self.clock.now()
                tick()

    def _observe(self, stage: str, item: Any, info: Any = None) -> None:
        for observer in self.observers:
            observer(stage, item, info)

    # ------------------------------------------------------------ timers
    def _next_due(self) -> float:
        while self._timers and self._live.get(self._timers[0][2]) != self._timers[0][:2]:
            heapq.heappop(self._timers)  # cancelled or replaced
        return self._timers[0][0] if self._timers else float("inf")

    def fire_due(self, now: float) -> None:
        """Fire every timer due by ``now``, in order, each at its own due time."""
        while self._next_due() <= now:
            due, _, name = heapq.heappop(self._timers)
            del self._live[name]
            if name in self._draw_retries:
                self._draw(self._draw_retries.pop(name), at=due)
            else:
                self._input(TimerFired(name), at=due)
        self._publish_activity()

    def advance_to(self, t: float) -> None:
        """Virtual time only: move the clock to ``t``, firing timers on the way."""
        set_time = getattr(self.clock, "set")  # noqa: B009 - only a VirtualClock has it
        while self._next_due() <= t:
            set_time(max(self._next_due(), self.clock.now()))
            self.fire_due(self.clock.now())
            self.pump()
        set_time(t)

    def _arm(self, name: str, due: float) -> None:
        entry = (due, next(self._order))
        self._live[name] = entry
        heapq.heappush(self._timers, (*entry, name))

    def pending_timers(self) -> dict[str, float]:
        self._next_due()
        return {name: due for name, (due, _) in self._live.items() if name not in self._draw_retries}

    def _publish_activity(self) -> None:
        """Tell the shell, when it changes, which game is being played and
        whether the table runs on the clock (a game timer is armed: One
        Night's night, discussion and vote count): the ``activity`` command.
        Background work (the voice's cache fill) holds off while ``timed``,
        so no cue wakes late behind it; and fills the game's lines first."""
        engine = self.table.engine
        now = {"game": engine.game if engine is not None else None, "timed": bool(self.pending_timers())}
        if now != self._activity:
            self._activity = now
            self.out.command("activity", now)

    # ------------------------------------------------------------ events
    def _event(self, event: Any) -> None:
        if isinstance(event, PageInput):
            if not event.claim.take():  # its page stopped waiting and was told nothing was done
                label = getattr(event.item, "label", None) or getattr(event.item, "name", None)
                self.out.error(f"a page's {label or type(event.item).__name__} came too late: not applied")
                return
            event = event.item
        self._observe("event", event)
        if isinstance(event, ButtonPressed):
            self._input(Press(event.name))
        elif isinstance(event, TagSeen):
            self._tag(event)
        elif isinstance(event, Submit):
            self._input(event)
        elif isinstance(event, PairRequest):
            self.out.send(self.desk.request(event))
        elif isinstance(event, ReaderStatus):
            self.out.send(self.reader.status(event, self.out.quiet))
        elif isinstance(event, ShellError):
            self.out.error(event.message)
        elif callable(event):
            event()
        else:
            self.out.error(f"unknown event {event!r} ignored")
        self._publish_activity()

    def _tag(self, seen: TagSeen) -> None:
        label = seen.text or (f"uid:{tags.normalise_uid(seen.uid)}" if seen.uid else "unknown")
        if seen.error:
            return self.out.reject(label, Refusal("refuse.unreadable", f"unreadable tag: {seen.error}"))
        identity = tags.identify(seen.text, seen.uid, self.tag_map)
        if identity is None or not (tags.is_known(identity, self.extra_players)
                                    or identity in self.extra_identities):
            return self.out.reject(label, Refusal("refuse.unknown_tag", "unknown tag"))
        if identity.startswith("player/") and (proof := self.desk.tap(identity.removeprefix("player/"))):
            self.out.send(proof.outs)
            if proof.housekeeping is not None:
                self._input(proof.housekeeping)  # journaled; says so (and may start the game)
            return self.out.send(self.desk.settled(proof))
        self._input(Tap(identity))
        return None

    # ------------------------------------------------------------ inputs
    def _input(self, inp: Input, at: float | None = None) -> None:
        """One input through the table; ``at`` is a timer's scheduled time,
        from which the timers it sets are measured (so schedules don't drift)."""
        self._observe("input", inp, at)
        now = self.clock.now() if at is None else at
        self._watch_clock(now)
        public = self.table.public_label(inp)  # asked before the input changes the table; refusals too
        submit = inp if isinstance(inp, Submit) else None
        if isinstance(inp, Press) and inp.button == "repeat":
            return self.out.repeat()
        was_playing = self.table.state.phase == PLAYING
        try:
            outputs = self.table.handle(inp)
        except Refusal as refusal:
            if isinstance(inp, TimerFired):
                return None  # a timer the game no longer wants (its step moved on)
            if isinstance(inp, Drawn):
                return self.out.error(f"draw {inp.name} refused: {refusal.reason}")
            return self.out.reject(public, refusal, submit)
        finished, t, wall, game_start = self.table.finished, self.times.t(now), self.times.wall(now), self._game_start
        if game_started(outputs):
            self._game_start = t
        play = None if finished is None else (self.table.state.evening, finished.game,
                                              play_record(finished, self._game_start, t, wall))
        checkpoint = self.table.checkpoint() if was_playing and self.table.engine is None else None
        started = time.perf_counter()  # work done, not table time: real even on a virtual clock
        try:
            self.journal.append(inp, t, wall, play=play, checkpoint=checkpoint)
        except JournalError as e:
            # Not durable, so not accepted: rebuild the table as the journal has it.
            self._game_start = game_start
            self._rebuild()
            if isinstance(inp, TimerFired):  # nobody can tap a timer again: try it again shortly
                self._arm(inp.name, now + TIMER_RETRY_S)
                return self.out.error(f"{e}; timer {inp.name} will be tried again")
            if isinstance(inp, Drawn) and self._last_draw is not None:  # the engine still waits for it
                self._draw_retries[retry := f"draw-retry:{inp.name}"] = self._last_draw
                self._arm(retry, now + TIMER_RETRY_S)
                return self.out.error(f"{e}; draw {inp.name} will be tried again")
            self.out.error(f"{e}; the input was not taken, please tap again")
            return self.out.reject(public, Refusal("refuse.not_saved", "could not save; tap again"), submit)
        self._observe("journaled", inp, time.perf_counter() - started)
        self.times.recorded(now, wall)
        self._played = self._played or finished is not None
        self.pages.changed()
        if isinstance(inp, Housekeeping) and not outputs:  # the daemon's own bookkeeping: nothing to say,
            return self._refresh_pages()  # but a new evening is in force: the pages know at once
        if submit is not None or not isinstance(inp, (TimerFired, Drawn, Housekeeping)):
            self.out.accept(public, submit)
        self._outputs(outputs, base=now)
        self.out.send(self.reader.due(self.out.quiet))  # a change the night kept quiet
        if checkpoint is not None and self.on_game_end is not None:
            self.on_game_end()
        self._refresh_pages()
        self._observe("done", inp)
        return None

    def _refresh_pages(self) -> None:
        started = time.perf_counter()
        self.pages.refresh()
        self._observe("read_side", None, time.perf_counter() - started)

    # ----------------------------------------------------------- outputs
    def _outputs(self, outputs: list[Output], base: float) -> None:
        """Carry out one input's outputs in order; its table lines become what
        ``repeat`` says again.  Draws come last: each is an input of its own,
        journaled before anything follows from it."""
        says: list[Say] = []
        spoken: list[Say] = []
        draws: list[Draw] = []
        for out in outputs:
            if isinstance(out, Say):
                says.append(out)
                continue
            self.out.say(says)
            spoken, says = spoken + says, []
            if isinstance(out, Tell):
                self.out.tell(out)
            elif isinstance(out, Report):
                self.out.emit(out.event, self.out.audience(out.audience), **dict(out.fields))
            elif isinstance(out, Sound):
                self.out.emit("ambience", sound=out.sound, action="start" if out.on else "stop")
                self.out.command("sound", {"sound": out.sound, "on": out.on})
            elif isinstance(out, SetTimer):
                self._arm(out.name, base + out.delay)
            elif isinstance(out, CancelTimer):
                self._live.pop(out.name, None)
            elif isinstance(out, Draw):
                draws.append(out)
        self.out.say(says)
        self.out.remember(spoken + says)
        for request in draws:
            self._draw(request, at=base)

    def _draw(self, request: Draw, at: float) -> None:
        try:
            value = self.drawer.draw(request, self.table.state.games_started)
        except DrawError as e:
            return self.out.error(str(e))
        self._last_draw = request
        self._input(Drawn(request.name, value), at=at)
        return None

    # -------------------------------------------------------------- clock
    def _watch_clock(self, now: float) -> None:
        """Say once in the log that the wall clock is behind the journal (its
        dates then come from the journal: clock.Record).  If it was behind
        when this run began, whether that start was a new evening was not
        known: the first input after the clock is set decides it as start()
        would have, unless a game has ended since (tonight is shared by then)."""
        behind = self.times.behind(now)
        if behind > BEHIND_S and not self._clock_said:
            self._clock_said = True
            self.out.error(f"the clock is behind the saved games: it reads {utc(self.times.clock_wall(now))} UTC, "
                           f"the journal is at {utc(self.times.wall(now))} UTC; until the clock is set "
                           "(the network sets it), games are dated from the journal")
        elif behind == 0 and self._evening_unknown:
            self._evening_unknown = False
            began = self.times.clock_wall(self.times.start)  # the start, by the clock now set
            if not self._played and self.times.last_wall is not None and began - self.times.last_wall > SESSION_GAP_S:
                self._input(Housekeeping("new-evening"))

    # ---------------------------------------------------- journal replay
    def _rebuild(self) -> int:
        """Replay the journal into the table; returns inputs replayed."""
        seq, cp = self.journal.checkpoint()
        n = 0
        for entry, result in self.table.replay(cp, self.journal.entries(after=seq)):
            if isinstance(result, Refusal):
                self.out.error(f"journal input {entry.seq} no longer applies: {result.reason}")
                continue
            if game_started(result):
                self._game_start = entry.t
            n += 1
        self.pages.changed()
        return n

    def start(self) -> None:
        """Rebuild from the journal, journal what changed since (settings, a
        new games night), then say where the table is."""
        self.out.emit("started", LOG, replayed=self._rebuild())
        # A clock behind the journal (a Pi at boot) says nothing of how long the
        # table was off: no new evening now; _watch_clock decides once it is set.
        self._evening_unknown = self.times.behind(self.clock.now()) > 0
        self._watch_clock(self.clock.now())
        st = self.table.state
        if (st.pending or {}).get("configure", st.settings) != self.table.wanted:
            self._input(Housekeeping("configure", self.table.wanted))
        last = self.times.last_wall
        if last is not None and not self._evening_unknown and self.clock.wall() - last > SESSION_GAP_S:
            self._input(Housekeeping("new-evening"))
        self.out.send(journal_notices(self.notices))
        self._outputs(self.table.resume(), base=self.clock.now())
        self._refresh_pages()
        self._publish_activity()
