"""The table loop: inputs from the sources (reader, panel, pages) in, through the table and the
active game, out through the outputs seam (runtime.outputs) to the sinks of each audience.  One
thread runs it: sources only ``submit``; it journals every accepted input durably *before* any
feedback, makes the games' secret draws (journaled the same way) and keeps the timers (both
runtime.schedule), and on start replays the journal (runtime.replay).  Pairing, notices, the pages
and play records (runtime.pairing, .notices, .pages, .plays) hand back; none calls the loop.  What
follows an input is each part's to decide: a line held back by night (notices.HeldBack), a backup
(backups: ``after_input``).  No hardware, voice or web import: the wiring subscribes those."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from companion.core import events as ev
from companion.core import tags
from companion.core.messages import Answer, PageInput, PairRequest, ReadSide
from companion.core.table import NAMED, PLAYING, Table
from companion.runtime.clock import Clock, EveningWatch, Record
from companion.runtime.draws import Drawer
from companion.runtime.inbox import Inbox
from companion.runtime.journal import Journal, JournalError
from companion.runtime.notices import HeldBack, ReaderNotices, journal_notices
from companion.runtime.outbox import TABLE_ONLY
from companion.runtime.outputs import Narrate, Outputs
from companion.runtime.pages import PageProjection
from companion.runtime.pairing import PairingDesk
from companion.runtime.plays import game_started, play_record
from companion.runtime.replay import replay
from companion.runtime.router import Router
from companion.runtime.schedule import Schedule

# An observer sees each step of the loop's work, on the loop's thread: ("event", item, None) as an
# item leaves the inbox, ("input", inp, at) before an input is handled (``at``: a timer's due time),
# ("journaled", inp, seconds the append took) once it is durable, ("read_side", None, seconds the
# page projection took) and ("done", inp, None) when its outputs are out.
Observer = Callable[[str, Any, Any], None]

_STOP = object()


class TableLoop:
    def __init__(self, table: Table, journal: Journal, clock: Clock, *, narrate: Narrate, router: Router,
                 drawer: Drawer | None = None, read_side: ReadSide | None = None,
                 tag_map: Mapping[str, str] | None = None, extra_players: Iterable[str] = (),
                 extra_identities: Iterable[str] = (), pair_window_s: float = 30.0,
                 after_input: Callable[[list[ev.Output], bool], None] | None = None,
                 notices: Iterable[tuple[ev.Say | None, str]] = (), inbox: Inbox | None = None,
                 publish_as: str | None = None, publishes: frozenset[str] = TABLE_ONLY) -> None:
        self.table, self.journal, self.clock, self.router, self.narrate = table, journal, clock, router, narrate
        self.drawer, self.read_side = drawer or Drawer(), read_side or ReadSide()
        self.tag_map, self.extra_players = dict(tag_map or {}), tuple(extra_players)
        self.extra_identities = frozenset(extra_identities)  # games' cards beyond the contract's
        self.observers: list[Observer] = []
        self.inbox = inbox if inbox is not None else Inbox()  # made first by the wiring, for every part
        self.out = Outputs(table, router, narrate, clock, publish_as, journal.epoch, publishes)  # as: the MQTT table id
        self.desk = PairingDesk(table, narrate, clock.now, self.extra_players, pair_window_s)
        self.reader = ReaderNotices()
        self.schedule = Schedule(table, clock, self.drawer, self._input, self.out.error)  # timers and draws
        self.timers = self.schedule.timers
        self.pages = PageProjection(table, narrate, self.read_side, ask=self.inbox.put, due=self.schedule.due_wall)
        self.times = Record(clock, journal.last_times())  # what the journal records: clock.Record
        self.evening = EveningWatch(self.times)
        self._game_start: float | None = None  # the table time (the journal's t) the game in progress began
        self.after_input = after_input  # (outputs, a game ended) once they are out: the backups decide
        self.notices = list(notices)  # what start() tells the table about the journal (a recovery)
        self.held_back = HeldBack(self.reader.due)  # the parts' lines kept quiet by night, told after

    def submit(self, item: Any) -> None:
        """From any thread: what a source submits (``self.inbox``, core.messages.Inbox)."""
        self.inbox.put(item)

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
            wait = min(self.timers.next_due() - self.clock.now(), tick_every) if self.timers else tick_every
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

    def fire_due(self, now: float) -> None:
        """Fire every timer due by ``now``, in order, each at its own due time."""
        self.schedule.fire_due(now)
        self.out.activity(self.table.engine, bool(self.pending_timers()))

    def advance_to(self, t: float) -> None:
        """Virtual time only: move the clock to ``t``, firing timers on the way."""
        set_time = getattr(self.clock, "set")  # noqa: B009 - only a VirtualClock has it
        while self.timers.next_due() <= t:
            set_time(max(self.timers.next_due(), self.clock.now()))
            self.fire_due(self.clock.now())
            self.pump()
        set_time(t)

    def pending_timers(self) -> dict[str, float]:
        return self.schedule.pending()

    def _event(self, event: Any) -> None:
        if isinstance(event, PageInput):
            return self._control(event)
        self._observe("event", event)
        if isinstance(event, ev.ButtonPressed):
            self._press(event)
        elif isinstance(event, ev.TagSeen):
            self._tag(event)
        elif isinstance(event, ev.Submit) or (isinstance(event, ev.Housekeeping) and event.kind == NAMED):
            self._input(event)  # a page's input: a submit, or its player's display name
        elif isinstance(event, PairRequest):
            self.out.send(self.desk.request(event))
        elif isinstance(event, ev.ReaderStatus):
            self.out.send(self.reader.status(event, self.out.quiet))
        elif isinstance(event, ev.ShellError):
            self.out.error(event.message)
        elif isinstance(event, ev.Aside):  # its params by language
            params = event.params.get(self.table.lang) or event.params["en"]
            self.out.shell_say([ev.Say(event.key, dict(params))], aside=True)
        elif callable(event):
            event()
        else:
            self.out.error(f"unknown event {event!r} ignored")
        self.out.activity(self.table.engine, bool(self.pending_timers()))

    def _control(self, control: PageInput) -> None:
        """A page's control (a button, a submit, a display name), taken as the
        same input from anywhere else is, then answered on its own request: the
        verdict, what the table told its seat, and its seat's page after it."""
        item, seat = control.item, control.seat
        if not control.claim.take():  # its page stopped waiting and was told nothing was done
            label = getattr(item, "label", None) or getattr(item, "name", None)
            return self.out.error(f"a page's {label or type(item).__name__} came too late: not applied")
        self._observe("event", item)
        verdict = self._press(item) if isinstance(item, ev.ButtonPressed) else self._input(item, seat=seat)
        control.reply(replace(verdict or Answer(False, "nothing was done"), me=self.read_side.private(seat)))
        self.out.activity(self.table.engine, bool(self.pending_timers()))

    def _press(self, pressed: ev.ButtonPressed) -> Answer | None:
        """A button; one pressed on a seat's page goes on only where the table
        waits for that seat or for anyone (by night for nobody): else refused
        aloud, as a refusal, and nothing changes (not journaled)."""
        seat = pressed.seat
        if seat is not None and pressed.name in ("next", "back") and not self.table.may_press(seat):
            name = self.table.name_of(seat)
            return self.out.reject(pressed.name, ev.Refusal("refuse.not_your_turn",
                                                            f"the table is not waiting for {name}", player=name))
        return self._input(ev.Press(pressed.name), seat=seat)

    def _tag(self, seen: ev.TagSeen) -> None:
        identity = tags.recognise(seen, self.tag_map, self.extra_players, self.extra_identities)
        if isinstance(identity, tuple):
            self.out.reject(*identity)  # (its label, why)
        elif identity.startswith("player/") and (proof := self.desk.tap(identity.removeprefix("player/"))):
            self.out.send(proof.outs)
            if proof.housekeeping is not None:
                self._input(proof.housekeeping)  # journaled; says so (and may start the game)
            self.out.send(self.desk.settled(proof))
        else:
            self._input(ev.Tap(identity))

    def _input(self, inp: ev.Input, at: float | None = None, seat: str | None = None) -> Answer | None:
        """One input through the table; ``at`` is a timer's scheduled time,
        from which the timers it sets are measured (so schedules don't drift).
        Its verdict, if any, with what it told ``seat`` (whose page sent it)."""
        self._observe("input", inp, at)
        now = self.clock.now() if at is None else at
        self._watch_clock(now)
        public = self.table.public_label(inp)  # asked before the input changes the table; refusals too
        submit = inp if isinstance(inp, ev.Submit) else None
        named = inp if isinstance(inp, ev.Housekeeping) and inp.kind == NAMED else None
        if isinstance(inp, ev.Press) and inp.button == "repeat":
            return self.out.repeat()
        was_playing = self.table.state.phase == PLAYING
        try:
            outputs = self.table.handle(inp)
        except ev.Refusal as refusal:
            if isinstance(inp, ev.Drawn):
                self.out.error(f"draw {inp.name} refused: {refusal.reason}")
            # a timer refused is one the game no longer wants (its step moved on)
            return None if isinstance(inp, (ev.TimerFired, ev.Drawn)) else self.out.refuse(public, refusal, inp)
        finished, t, wall, game_start = self.table.finished, self.times.t(now), self.times.wall(now), self._game_start
        self._game_start = t if game_started(outputs) else game_start
        play = None if finished is None else (self.table.state.evening, finished.game,
                                              play_record(finished, self._game_start, t, wall))
        checkpoint = self.table.checkpoint() if was_playing and self.table.engine is None else None
        started = time.perf_counter()  # work done, not table time: real even on a virtual clock
        try:
            letters = self.out.letters(outputs, wall, finished, play)  # the outbox's rows: in the same transaction
            self.journal.append(inp, t, wall, play=play, checkpoint=checkpoint, letters=letters)
        except JournalError as e:
            # Not durable, so not accepted: rebuild the table as the journal has it.
            self._game_start = game_start
            self._rebuild()
            again = self.schedule.retry(inp, now)  # a timer or a draw: tried again shortly
            self.out.error(f"{e}; {again or 'the input was not taken, please tap again'}")
            return None if again else self.out.refuse(public, ev.Refusal("refuse.not_saved", "could not save; tap again"), inp)
        self._observe("journaled", inp, time.perf_counter() - started)
        self.times.recorded(now, wall)
        self.evening.played = self.evening.played or finished is not None
        self.pages.changed()
        if named is not None:  # the pages show the name before its page is told it is taken
            self._refresh_pages()
            return self.out.named(named)
        if isinstance(inp, ev.Housekeeping) and not outputs:  # the daemon's own bookkeeping: nothing to say,
            self._refresh_pages()  # but a new evening is in force: the pages know at once
            return None
        verdict = None
        if submit is not None or not isinstance(inp, (ev.TimerFired, ev.Drawn, ev.Housekeeping)):
            verdict = replace(self.out.accept(public, submit), told=self.out.told(outputs, seat))
        self._outputs(outputs, base=now)
        self.out.send(self.held_back.due(self.out.quiet))
        if self.after_input is not None:
            self.after_input(outputs, checkpoint is not None)
        self._refresh_pages()
        self._observe("done", inp)
        return verdict

    def _refresh_pages(self) -> None:
        started = time.perf_counter()
        self.pages.refresh()
        self._observe("read_side", None, time.perf_counter() - started)

    def _outputs(self, outputs: list[ev.Output], base: float) -> None:
        """Carry out one input's outputs in order; its table lines become what ``repeat``
        says.  Draws come last: each is an input of its own, journaled before what follows."""
        draws: list[ev.Draw] = []
        for out in outputs:
            if isinstance(out, ev.SetTimer):
                self.timers.arm(out.name, base + out.delay)
            elif isinstance(out, ev.CancelTimer):
                self.timers.cancel(out.name)
            elif isinstance(out, ev.Draw):
                draws.append(out)
            else:
                self.out.game(out)  # a line, a private line, a report, a sound
        self.out.remember(o for o in outputs if isinstance(o, ev.Say))
        for request in draws:
            self.schedule.draw(request, at=base)

    def _watch_clock(self, now: float) -> None:
        """A clock behind the journal is logged once; a new evening is begun once it is set."""
        message, new_evening = self.evening.check(now)
        if message is not None:
            self.out.error(message)
        if new_evening:
            self._input(ev.Housekeeping("new-evening"))

    def _rebuild(self) -> int:
        """Replay the journal into the table; returns inputs replayed."""
        n, game_start = replay(self.table, self.journal, self.out.error)
        self._game_start = self._game_start if game_start is None else game_start
        self.pages.changed()
        return n

    def start(self) -> None:
        """Rebuild from the journal, journal what changed since (settings, a
        new games night), then say where the table is."""
        self.out.emit("started", ev.LOG, replayed=self._rebuild())
        self.evening.begin(self.clock.now())  # a clock behind the journal: decided once it is set
        self._watch_clock(self.clock.now())
        st = self.table.state
        if (st.pending or {}).get("configure", st.settings) != self.table.wanted:
            self._input(ev.Housekeeping("configure", self.table.wanted))
        if self.evening.new_at_start(self.clock.wall()):
            self._input(ev.Housekeeping("new-evening"))
        self.out.send(journal_notices(self.notices))
        self.out.send(self.held_back.due(self.out.quiet))
        self._outputs(self.table.resume(), base=self.clock.now())
        self._refresh_pages()
        self.out.activity(self.table.engine, bool(self.pending_timers()))
