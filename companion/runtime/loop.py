"""The table loop: inputs from the sources (reader, panel, pages) in, through
the table and the active game, out through the router to the sinks of each
output's audience (speaker, panel, log, public page, each player's page).

One thread runs it.  Sources only ``submit`` (thread-safe); the loop journals
every accepted input durably *before* any feedback, makes the secret draws
the games ask for (journaled the same way), keeps the timers, and on start
rebuilds the table by replaying the journal.  It imports no hardware, voice
or web module: the wiring subscribes those to the router.
"""

from __future__ import annotations

import copy
import heapq
import itertools
import queue
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from companion.core import tags
from companion.core.events import (
    LOG,
    TABLE,
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
from companion.core.messages import Command, Event, PageInput, PairRequest, ReadSide, seat_audience
from companion.core.table import PLAYING, Table
from companion.runtime.clock import BEHIND_S, Clock, Record
from companion.runtime.draws import Drawer, DrawError
from companion.runtime.inbox import Inbox
from companion.runtime.journal import Journal, JournalError
from companion.runtime.router import Router

Narrate = Callable[[str, Mapping[str, Any], str], Any]  # (key, params, lang) -> Line with .text
# An observer sees each step of the loop's work, on the loop's thread:
# ("event", item, None) as an item leaves the inbox, ("input", inp, at) before
# an input is handled (``at``: a timer's due time), ("journaled", inp, seconds
# the append took) once it is durable, ("read_side", None, seconds the pages'
# snapshots took to rebuild), ("done", inp, None) when its outputs are out.
Observer = Callable[[str, Any, Any], None]

_STOP = object()
SESSION_GAP_S = 6 * 3600  # a start this long after the last input begins a new games night
NOT_REPEATED = frozenset({"table.language", "undo.done", "pairing.done"})  # lines repeat never says again
TIMER_RETRY_S = 0.5  # a timer whose journal write failed fires again this much later
# "Red, tap your player card…" at most this often, table-wide: a flood of
# requests from many phones is refused, not spoken (ten seats pairing at once fit).
PAIR_PROMPTS_PER_MIN = 12


class TableLoop:
    def __init__(self, table: Table, journal: Journal, clock: Clock, *, narrate: Narrate, router: Router,
                 drawer: Drawer | None = None, read_side: ReadSide | None = None,
                 tag_map: Mapping[str, str] | None = None, extra_players: Iterable[str] = (),
                 extra_identities: Iterable[str] = (), pair_window_s: float = 30.0,
                 on_game_end: Callable[[], None] | None = None,
                 notices: Iterable[tuple[Say | None, str]] = (), inbox: Inbox | None = None) -> None:
        self.table = table
        self.journal = journal
        self.clock = clock
        self.narrate = narrate
        self.router = router
        self.drawer = drawer or Drawer()
        self.read_side = read_side or ReadSide()
        self.tag_map = dict(tag_map or {})
        self.extra_players = tuple(extra_players)
        self.extra_identities = frozenset(extra_identities)  # games' cards beyond the contract's
        self.observers: list[Observer] = []
        self.pair_window_s = pair_window_s
        self._pairing: dict[str, tuple[PairRequest, float]] = {}  # seat → (request, until): a phone waits
        self.pair_prompts_per_min = PAIR_PROMPTS_PER_MIN
        self._prompted: deque[float] = deque()  # when the last prompts were said (the loop's clock)
        self.inbox = inbox if inbox is not None else Inbox()  # made first by the wiring, for every part
        self._timers: list[tuple[float, int, str]] = []  # heap of (due, order, name)
        self._live: dict[str, tuple[float, int]] = {}  # name → the heap entry that counts
        self._order = itertools.count()
        self._draw_retries: dict[str, Draw] = {}  # a draw whose journal write failed, by retry timer
        self._last_draw: Draw | None = None  # the request behind the Drawn being handled
        self._t0 = clock.now()  # the events' ``t``: seconds since this run began
        self.times = Record(clock, journal.last_times())  # what the journal records: clock.Record
        self._clock_said = False  # "the clock is behind the saved games", once a run
        self._evening_unknown = False  # the clock was behind at start: was that a new evening?
        self._played = False  # a game ended in this run
        # The table's lines of the last accepted input: what repeat says again,
        # in the language of the moment.
        self._last_says: list[Say] = []
        self._reader_connected: bool | None = None
        self._reader_announced: bool | None = None
        self._game_start: float | None = None  # the table time (the journal's t) the game in progress began
        self.on_game_end = on_game_end  # after a game's result is heard (backups)
        self.notices = list(notices)  # what start() tells the table about the journal (a recovery)
        self._activity: dict[str, Any] | None = None  # as last published (``_publish_activity``)

    # ----------------------------------------------------------- threads
    def submit(self, item: Any) -> None:
        """From any thread: a TagSeen, ReaderStatus, ButtonPressed, ShellError,
        or a player's ``Submit`` from their page."""
        self.inbox.put(item)

    def call_soon(self, fn: Callable[[], None]) -> None:
        """From any thread: run ``fn`` on the loop's thread, after what is queued."""
        self.inbox.put(fn)

    def announce(self, key: str, params: Mapping[str, Mapping[str, Any]]) -> None:
        """From any thread: a line the shell has for the table (the pages'
        address at start), with its params for each language (a host name is
        said one way in English, spelled in katakana in Japanese), said after
        what is queued — unless eyes are closed: nothing may break the night's
        silence.  Not journaled, not repeated."""
        def say() -> None:
            if not self.table.eyes_closed:
                lang = self.table.lang
                self._say_batch([Say(key, dict(params.get(lang) or params["en"]))])
        self.call_soon(say)

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
            now = self.clock.now()
            wait = min(self._next_due() - now, tick_every) if self._timers else tick_every
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
            self.router.publish(Command("activity", now))

    # ------------------------------------------------------------ events
    def _event(self, event: Any) -> None:
        if isinstance(event, PageInput):
            if not event.claim.take():  # its page stopped waiting and was told nothing was done
                self._emit("error", LOG, message=f"a page's {_label(event.item)} came too late: not applied")
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
            self._pair_request(event)
        elif isinstance(event, ReaderStatus):
            self._reader(event)
        elif isinstance(event, ShellError):
            self._emit("error", LOG, message=event.message)
        elif callable(event):
            event()
        else:
            self._emit("error", LOG, message=f"unknown event {event!r} ignored")
        self._publish_activity()

    def _tag(self, seen: TagSeen) -> None:
        label = seen.text or (f"uid:{tags.normalise_uid(seen.uid)}" if seen.uid else "unknown")
        if seen.error:
            return self._reject(label, Refusal("refuse.unreadable", f"unreadable tag: {seen.error}"))
        identity = tags.identify(seen.text, seen.uid, self.tag_map)
        if identity is None or not (tags.is_known(identity, self.extra_players)
                                    or identity in self.extra_identities):
            return self._reject(label, Refusal("refuse.unknown_tag", "unknown tag"))
        if identity.startswith("player/") and self._pairs(identity.removeprefix("player/")):
            return None
        self._input(Tap(identity))

    # ----------------------------------------------------------- pairing
    def _pair_request(self, request: PairRequest) -> None:
        """A phone asks to be ``request.seat``'s page: that player's card,
        tapped within the window, proves it.  The secret belongs to the page's
        server, which keeps it; the table journals only the fact that the seat
        is paired (a game that needs pages waits for every seat's).  The first
        phone asking holds the seat's window; prompts are limited table-wide."""
        seat = request.seat
        if request.claim is not None and request.claim.withdrawn:
            return  # the phone stopped waiting before the table heard it: nothing to say
        if not tags.is_known(f"player/{seat}", self.extra_players):
            return self._pair_failed(request, "no_seat", "pairing.refuse.no_seat", "no such seat")
        if self.table.eyes_closed:  # a line now would break the night's silence
            return self._pair_failed(request, "night", "pairing.refuse.night", "not during the night")
        now = self.clock.now()
        held = self._pairing.get(seat)
        if held is not None and now <= held[1] and not (held[0].claim is not None and held[0].claim.withdrawn):
            return self._pair_failed(request, "busy", "pairing.refuse.busy", "this seat is being paired")
        while self._prompted and self._prompted[0] <= now - 60.0:
            self._prompted.popleft()
        if len(self._prompted) >= self.pair_prompts_per_min:
            return self._pair_failed(request, "too_many", "pairing.refuse.too_many", "too many pairing requests")
        self._prompted.append(now)
        self._pairing[seat] = (request, now + self.pair_window_s)
        self._say_batch([Say("pairing.tap_card", {"player": self.table.name_of(seat)})])

    def _pair_failed(self, request: PairRequest, error: str, key: str, reason: str, say: bool = False) -> None:
        """Tell the waiting page why, in the table's language (and the table, ``say``)."""
        params = {"player": self.table.name_of(request.seat)}
        text = self.narrate(key, params, self.table.lang).text
        if say and not self.table.eyes_closed:
            self._say_batch([Say(key, params)])
        self.router.publish(Command("pair_failed", {"seat": request.seat, "nonce": request.nonce, "error": error,
                                                    "reason": reason, "text": text}, seat_audience(request.seat)))

    def _pairs(self, seat: str) -> bool:
        """Is this player-card tap the proof a waiting phone asked for?  Only
        if the table would refuse the tap: a card the game takes now (One
        Night's reveal) goes to the game, and the window stays open.  The
        phone's secret is stored before anything is journaled or said."""
        request, until = self._pairing.get(seat, (None, 0.0))
        if request is None or self.clock.now() > until or self.table.eyes_closed:
            return False
        if self._table_takes(Tap(f"player/{seat}")):
            return False
        del self._pairing[seat]
        try:
            stored = request.commit() if request.commit is not None else True
        except OSError as e:
            self._emit("error", LOG, message=f"the pairing of {seat} was not stored: {e}")
            self._pair_failed(request, "not_saved", "pairing.refuse.not_saved", "could not save", say=True)
            return True
        if not stored:
            return False  # the phone stopped waiting: the card is an ordinary tap again
        replaced = seat in self.table.state.paired  # another phone was this seat's page
        self._input(Housekeeping("paired", {"seat": seat}))  # journaled; says so (and may start the game)
        if seat not in self.table.state.paired:  # not durable (said aloud already): the phone asks again
            if request.undo is not None:
                request.undo()
            self._pair_failed(request, "not_saved", "pairing.refuse.not_saved", "could not save")
            return True
        if replaced:  # a seat is never taken over silently: its earlier phone stops being its page
            self._say_batch([Say("pairing.replaced", {"player": self.table.name_of(seat)})])
        self._emit("paired", player=self.table.name_of(seat))
        self.router.publish(Command("feedback", {"ok": True}))
        self.router.publish(Command("paired", {"seat": seat, "nonce": request.nonce}, seat_audience(seat)))
        return True

    def _table_takes(self, tap: Tap) -> bool:
        """Would the table accept ``tap`` now?  Asked of a copy (the table is
        pure: a copy handles it exactly as the table would, and is dropped)."""
        try:
            copy.deepcopy(self.table).handle(tap)
        except Refusal:
            return False
        return True

    def _reader(self, status: ReaderStatus) -> None:
        if status.connected == self._reader_connected:
            return  # report each change once
        if self._reader_connected is None and status.connected:
            self._reader_announced = True  # present from the start: nothing worth saying
        self._reader_connected = status.connected
        self._emit("reader", state="connected" if status.connected else "disconnected", detail=status.detail)
        self.router.publish(Command("led", {"led": "ready", "on": status.connected}))
        self._announce_reader()

    def _announce_reader(self) -> None:
        """Say the reader's state when it differs from what the table last
        heard — but never while eyes are closed: the night must sound the
        same whatever happens; a change then is told when the night is over."""
        if self._reader_connected is None or self.table.eyes_closed:
            return
        if self._reader_connected != self._reader_announced:
            key = ("reader.back" if self._reader_connected
                   else "reader.missing" if self._reader_announced is None else "reader.lost")
            self._reader_announced = self._reader_connected
            self._say_batch([Say(key)])

    # ------------------------------------------------------------ inputs
    def _input(self, inp: Input, at: float | None = None) -> None:
        """One input through the table; ``at`` is a timer's scheduled time,
        from which the timers it sets are measured (so schedules don't drift)."""
        self._observe("input", inp, at)
        now = self.clock.now() if at is None else at
        self._watch_clock(now)
        public = self.table.public_label(inp)  # asked before the input changes the table; refusals too
        if isinstance(inp, Press) and inp.button == "repeat":
            return self._repeat()
        was_playing = self.table.state.phase == PLAYING
        try:
            outputs = self.table.handle(inp)
        except Refusal as refusal:
            if isinstance(inp, TimerFired):
                return None  # a timer the game no longer wants (its step moved on)
            if isinstance(inp, Drawn):
                return self._emit("error", LOG, message=f"draw {inp.name} refused: {refusal.reason}")
            return self._reject(public, refusal, inp if isinstance(inp, Submit) else None)
        finished = self.table.finished
        t, wall = self.times.t(now), self.times.wall(now)
        game_start = self._game_start
        self._track_game_start(outputs, t)
        play = checkpoint = None
        if finished is not None:
            play = (self.table.state.evening, finished.game, self._play_record(finished, t, wall))
        if was_playing and self.table.engine is None:
            checkpoint = self.table.checkpoint()
        started = time.perf_counter()  # work done, not table time: real even on a virtual clock
        try:
            self.journal.append(inp, t, wall, play=play, checkpoint=checkpoint)
        except JournalError as e:
            # Not durable, so not accepted: rebuild the table as the journal has it.
            self._game_start = game_start
            self._rebuild()
            if isinstance(inp, TimerFired):  # nobody can tap a timer again: try it again shortly
                self._arm(inp.name, now + TIMER_RETRY_S)
                self._emit("error", LOG, message=f"{e}; timer {inp.name} will be tried again")
                return None
            if isinstance(inp, Drawn) and self._last_draw is not None:  # the engine still waits for it
                retry = f"draw-retry:{inp.name}"
                self._draw_retries[retry] = self._last_draw
                self._arm(retry, now + TIMER_RETRY_S)
                self._emit("error", LOG, message=f"{e}; draw {inp.name} will be tried again")
                return None
            self._emit("error", LOG, message=f"{e}; the input was not taken, please tap again")
            return self._reject(public, Refusal("refuse.not_saved", "could not save; tap again"),
                                inp if isinstance(inp, Submit) else None)
        self._observe("journaled", inp, time.perf_counter() - started)
        self.times.recorded(now, wall)
        self._played = self._played or finished is not None
        if isinstance(inp, Housekeeping) and not outputs:
            self._refresh_read_side()  # nothing to say, but a new evening is in force: the pages know at once
            return None  # the daemon's own bookkeeping: nothing to show or say
        if isinstance(inp, Submit):
            # Everyone may know that a player has submitted, never what — unless the
            # game names it "" in public: then even the fact is the player's (a gift).
            self._emit("accepted", TABLE if public else seat_audience(inp.player), input="submit",
                       player=self.table.name_of(inp.player), field=inp.field)
        elif not isinstance(inp, (TimerFired, Drawn, Housekeeping)):
            self._emit("accepted", input=public)
            self.router.publish(Command("feedback", {"ok": True}))
        self._outputs(outputs, base=now)
        self._announce_reader()  # a change the night kept quiet
        if checkpoint is not None and self.on_game_end is not None:
            self.on_game_end()
        self._refresh_read_side()
        self._observe("done", inp)
        return None

    def _repeat(self) -> None:
        """The table's lines of the last accepted input (or timer) again: the
        instruction a player missed, not the refusal or reader notice since,
        and never a private line."""
        if self.table.eyes_closed:
            return self._reject("repeat", Refusal("refuse.quiet", "not during the night"))
        if not self._last_says:
            return self._reject("repeat", Refusal("refuse.nothing_to_repeat", "nothing to repeat yet"))
        self._emit("accepted", input="repeat")
        self.router.publish(Command("feedback", {"ok": True}))
        self._say_batch(self._last_says)

    def _reject(self, label: str, refusal: Refusal, submit: Submit | None = None) -> None:
        if submit is not None:
            # The reason may tell something about a sealed value: it goes to the
            # submitting player's page only, and nothing is heard or lit.
            self._emit("rejected", seat_audience(submit.player), input="submit",
                       player=self.table.name_of(submit.player), field=submit.field, reason=refusal.reason,
                       key=refusal.key, text=self.narrate(refusal.key, refusal.params, self.table.lang).text)
            return
        if self.table.eyes_closed:  # at night a refusal is neither heard nor seen by those awake
            self._emit("rejected", LOG, input=label, reason=refusal.reason)
            return
        self._emit("rejected", input=label, reason=refusal.reason)
        self.router.publish(Command("feedback", {"ok": False}))
        self._say_batch([Say(refusal.key, refusal.params)])

    # ----------------------------------------------------------- outputs
    def _outputs(self, outputs: list[Output], base: float) -> None:
        """Carry out one input's outputs in order; its table lines, all of
        them, become what ``repeat`` says again.  Draws come last: each is an
        input of its own, journaled before anything follows from it."""
        says: list[Say] = []
        spoken: list[Say] = []
        draws: list[Draw] = []
        for out in outputs:
            if isinstance(out, Say):
                says.append(out)
                continue
            if says:
                self._say_batch(says)
                spoken += says
                says = []
            if isinstance(out, Tell):
                self._tell(out)
            elif isinstance(out, Report):
                self._emit(out.event, self._audience(out.audience), **dict(out.fields))
            elif isinstance(out, Sound):
                self._emit("ambience", sound=out.sound, action="start" if out.on else "stop")
                self.router.publish(Command("sound", {"sound": out.sound, "on": out.on}))
            elif isinstance(out, SetTimer):
                self._arm(out.name, base + out.delay)
            elif isinstance(out, CancelTimer):
                self._live.pop(out.name, None)
            elif isinstance(out, Draw):
                draws.append(out)
        if says:
            self._say_batch(says)
            spoken += says
        # A language card's own line and "Undone." are not instructions: repeat
        # says the instruction in force (after back, the restored step's prompt).
        spoken = [s for s in spoken if s.key not in NOT_REPEATED]
        if spoken:
            self._last_says = spoken
        for request in draws:
            self._draw(request, at=base)

    def _draw(self, request: Draw, at: float) -> None:
        try:
            value = self.drawer.draw(request, self.table.state.games_started)
        except DrawError as e:
            self._emit("error", LOG, message=str(e))
            return
        self._last_draw = request
        self._input(Drawn(request.name, value), at=at)

    def _audience(self, audience: str) -> str:
        """An engine's audience (players by name) as the router's (seats by
        id).  Only the one seat answering to the name gets it: a name no seat
        has is the log's, and a name two seats share (settings forced past the
        config's check) reaches neither page — said in the log, never guessed."""
        if audience in (TABLE, LOG):
            return audience
        seat = self.table.audience_id(audience)
        if seat is not None:
            return seat_audience(seat)
        if len(seats := self.table.seats_named(audience.removeprefix("player:"))) > 1:
            self._emit("error", LOG, message=f"a private line for {audience.removeprefix('player:')} went to no "
                       f"page: two seats ({', '.join(seats)}) answer to that name")
        return LOG

    def _tell(self, out: Tell) -> None:
        line = self.narrate(out.key, out.params, self.table.lang)
        fields: dict[str, Any] = {"to": out.to, "key": line.key, "text": line.text, "lang": line.lang}
        if out.data:
            fields["data"] = dict(out.data)
        self._emit("tell", self._audience(f"player:{out.to}"), line=line, **fields)

    def _say_batch(self, says: list[Say]) -> list[Any]:
        lines = [self.narrate(s.key, s.params, self.table.lang) for s in says]
        for line in lines:
            self._speak(line)
        return lines

    def _speak(self, line: Any) -> None:
        self._emit("say", line=line, key=line.key, text=line.text, lang=line.lang)

    def _emit(self, event: str, audience: str = TABLE, line: Any = None, **fields: Any) -> None:
        self.router.publish(Event(audience, {"t": round(self.clock.now() - self._t0, 3), "event": event,
                                             **fields}, line))

    def _refresh_read_side(self) -> None:
        started = time.perf_counter()
        table = self.table
        # the game's board, labelled in the table's language like a seat's page
        board = [self.narrate(key, params, table.lang) for key, params in table.board()]
        public = {**table.public_view(), "legal": _legal_json(table.legal(None)),
                  "board": [{"key": line.key, "text": line.text} for line in board]}
        private = {seat: self._private(seat) for seat in table.state.seats}
        self.read_side.update(public, private)
        self._observe("read_side", None, time.perf_counter() - started)

    def _private(self, seat: str) -> dict[str, Any]:
        """A seat's page: its private view, and the same as lines in the
        table's language (``page``), with its forms' labels (``text``)."""
        table, lang = self.table, self.table.lang
        page = [self.narrate(key, params, lang) for key, params in table.page(seat)]
        legal = _legal_json(table.legal(seat), lambda key: self.narrate(key, {}, lang).text)
        return {**table.private_view(seat), "legal": legal,
                "page": [{"key": line.key, "text": line.text} for line in page]}

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
            self._emit("error", LOG, message=f"the clock is behind the saved games: it reads "
                       f"{_utc(self.times.clock_wall(now))} UTC, the journal is at {_utc(self.times.wall(now))} "
                       "UTC; until the clock is set (the network sets it), games are dated from the journal")
        elif behind == 0 and self._evening_unknown:
            self._evening_unknown = False
            began = self.times.clock_wall(self.times.start)  # the start, by the clock now set
            if (not self._played and self.times.last_wall is not None
                    and began - self.times.last_wall > SESSION_GAP_S):
                self._input(Housekeeping("new-evening"))

    # ---------------------------------------------------- journal replay
    def _track_game_start(self, outputs: Iterable[Output], t: float) -> None:
        if any(isinstance(o, Report) and o.event == "game_started" for o in outputs):
            self._game_start = t

    def _play_record(self, play: Any, t: float, wall: float) -> dict[str, Any]:
        """A finished game shaped like BG Stats' play import.  Its length is
        table time (monotonic, clock.Record), never a difference of wall
        clocks that may have been set in between; its date is the start as
        best known: the wall of record at the end, less that length (a Pi's
        clock is set right mid-game far more often than it is set wrong)."""
        duration = max(0.0, t - (self._game_start if self._game_start is not None else t))
        players = []
        for i, (name, seat) in enumerate(zip(play.players, play.ids, strict=True)):
            player = {"name": name, "score": play.totals.get(name, 0), "winner": name in play.winners,
                      "startPlayer": i == 0, "sourcePlayerId": seat}
            if name in play.roles:
                player["role"] = play.roles[name]
            players.append(player)
        return {
            "rules": list(play.rules),
            "playDate": _utc(wall - duration, "%Y-%m-%d %H:%M:%S"),
            "durationMin": round(duration / 60),
            "players": players,
        }

    def _rebuild(self) -> int:
        """Replay the journal into the table; returns inputs replayed."""
        seq, cp = self.journal.checkpoint()
        n = 0
        for entry, result in self.table.replay(cp, self.journal.entries(after=seq)):
            if isinstance(result, Refusal):
                self._emit("error", LOG, message=f"journal input {entry.seq} no longer applies: {result.reason}")
                continue
            self._track_game_start(result, entry.t)
            n += 1
        return n

    def start(self) -> None:
        """Rebuild from the journal, journal what changed since (settings, a
        new games night), then say where the table is."""
        n = self._rebuild()
        self._emit("started", LOG, replayed=n)
        # A clock behind the journal (a Pi at boot) says nothing of how long the
        # table was off: no new evening now; _watch_clock decides once it is set.
        self._evening_unknown = self.times.behind(self.clock.now()) > 0
        self._watch_clock(self.clock.now())
        st = self.table.state
        coming = (st.pending or {}).get("configure", st.settings)
        if coming != self.table.wanted:
            self._input(Housekeeping("configure", self.table.wanted))
        last = self.times.last_wall
        if last is not None and not self._evening_unknown and self.clock.wall() - last > SESSION_GAP_S:
            self._input(Housekeeping("new-evening"))
        for _, message in self.notices:
            self._emit("error", LOG, message=message)
        self._say_batch([say for say, _ in self.notices if say is not None])
        self._outputs(self.table.resume(), base=self.clock.now())
        self._refresh_read_side()
        self._publish_activity()


def _utc(wall: float, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A wall time as UTC text; a clock so wrong that no date fits reads as the epoch."""
    try:
        return datetime.fromtimestamp(wall, UTC).strftime(fmt)
    except (OverflowError, OSError, ValueError):
        return datetime.fromtimestamp(0, UTC).strftime(fmt)


def _label(item: Any) -> str:
    return str(getattr(item, "label", None) or getattr(item, "name", None) or type(item).__name__)


def _legal_json(legal: Any, label: Callable[[str], str] | None = None) -> dict[str, Any]:
    """``label``: a field's label key → its text, for a page."""
    return {"buttons": list(legal.buttons), "taps": list(legal.taps),
            "submits": {name: {"label": ask.label, "low": ask.low, "high": ask.high, "choices": list(ask.choices),
                               **({"text": label(ask.label)} if label else {})}
                        for name, ask in legal.submits.items()}}
