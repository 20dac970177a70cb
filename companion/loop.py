"""The table loop: events from the reader and the panel in, through the
session and the active game, out as speech, LEDs, beeps and the event log.

One thread runs it.  Readers and buttons only ``submit`` (thread-safe); the
loop journals every accepted input durably *before* any feedback, keeps the
timers the games ask for, and on start rebuilds the table by replaying the
journal.  It imports no hardware or voice module: those are handed in as
small callables/objects (``narrate``, ``voice``, ``feedback``, ``log``).
"""

from __future__ import annotations

import heapq
import itertools
import queue
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from companion import tags
from companion.clock import Clock
from companion.events import (
    ButtonPressed,
    CancelTimer,
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
    TagSeen,
    Tap,
    TimerFired,
)
from companion.session import PLAYING, Session
from companion.store import Journal, JournalError


class Feedback(Protocol):
    def led(self, name: str, on: bool, flash: bool = False) -> None: ...
    def beep(self, long: bool = False) -> None: ...


class VoiceOut(Protocol):
    def speak(self, line: Any) -> None: ...
    def ambience(self, sound: str, on: bool) -> None: ...


Narrate = Callable[[str, Mapping[str, Any], str], Any]  # (key, params, lang) -> Line with .text
Log = Callable[[dict[str, Any]], None]

_STOP = object()
SESSION_GAP_S = 6 * 3600  # a start this long after the last input begins a new games night
NOT_REPEATED = frozenset({"session.language", "undo.done"})  # lines repeat never says again
TIMER_RETRY_S = 0.5  # a timer whose journal write failed fires again this much later


class TableLoop:
    def __init__(self, session: Session, journal: Journal, clock: Clock, *, narrate: Narrate,
                 voice: VoiceOut, feedback: Feedback, log: Log,
                 tag_map: Mapping[str, str] | None = None, extra_players: Iterable[str] = (),
                 on_game_end: Callable[[], None] | None = None,
                 notices: Iterable[tuple[Say | None, str]] = ()) -> None:
        self.session = session
        self.journal = journal
        self.clock = clock
        self.narrate = narrate
        self.voice = voice
        self.feedback = feedback
        self.log = log
        self.tag_map = dict(tag_map or {})
        self.extra_players = tuple(extra_players)
        self.inbox: queue.Queue[Any] = queue.Queue()
        self._timers: list[tuple[float, int, str]] = []  # heap of (due, order, name)
        self._live: dict[str, tuple[float, int]] = {}  # name → the heap entry that counts
        self._order = itertools.count()
        self._t0 = clock.now()
        self._last_says: list[Say] = []  # what repeat says again, in the language of the moment
        self._reader_connected: bool | None = None
        self._reader_announced: bool | None = None
        self._game_start_wall: float | None = None
        self.on_game_end = on_game_end  # after a game's result is heard (backups)
        self.notices = list(notices)  # what start() tells the table about the journal (a recovery)

    # ----------------------------------------------------------- threads
    def submit(self, event: Any) -> None:
        """From any thread: a TagSeen, ReaderStatus, ButtonPressed or ShellError."""
        self.inbox.put(event)

    def report_error(self, message: str) -> None:
        """From any thread: log something the shell survived."""
        self.inbox.put(ShellError(message))

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
            self._input(TimerFired(name), at=due)

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
        return {name: due for name, (due, _) in self._live.items()}

    # ------------------------------------------------------------ events
    def _event(self, event: Any) -> None:
        if isinstance(event, ButtonPressed):
            self._input(Press(event.name))
        elif isinstance(event, TagSeen):
            self._tag(event)
        elif isinstance(event, ReaderStatus):
            self._reader(event)
        elif isinstance(event, ShellError):
            self._emit("error", message=event.message)
        else:
            self._emit("error", message=f"unknown event {event!r} ignored")

    def _tag(self, seen: TagSeen) -> None:
        label = seen.text or (f"uid:{tags.normalise_uid(seen.uid)}" if seen.uid else "unknown")
        if seen.error:
            return self._reject(label, Refusal("refuse.unreadable", f"unreadable tag: {seen.error}"))
        identity = tags.identify(seen.text, seen.uid, self.tag_map)
        if identity is None or not tags.is_known(identity, self.extra_players):
            return self._reject(label, Refusal("refuse.unknown_tag", "unknown tag"))
        self._input(Tap(identity))

    def _reader(self, status: ReaderStatus) -> None:
        if status.connected == self._reader_connected:
            return  # report each change once
        if self._reader_connected is None and status.connected:
            self._reader_announced = True  # present from the start: nothing worth saying
        self._reader_connected = status.connected
        self._emit("reader", state="connected" if status.connected else "disconnected", detail=status.detail)
        self.feedback.led("ready", status.connected)
        self._announce_reader()

    def _announce_reader(self) -> None:
        """Say the reader's state when it differs from what the table last
        heard — but never during the night, which must sound the same whatever
        happens; a change then is told when the night is over."""
        if self._reader_connected is None or self.session.quiet:
            return
        if self._reader_connected != self._reader_announced:
            key = ("reader.back" if self._reader_connected
                   else "reader.missing" if self._reader_announced is None else "reader.lost")
            self._reader_announced = self._reader_connected
            self._say_batch([Say(key)])

    # ------------------------------------------------------------ inputs
    def _input(self, inp: Input, at: float | None = None) -> None:
        """One input through the session; ``at`` is a timer's scheduled time,
        from which the timers it sets are measured (so schedules don't drift)."""
        label = inp.label
        if isinstance(inp, Press) and inp.button == "repeat":
            return self._repeat()
        was_playing = self.session.state.phase == PLAYING
        try:
            outputs = self.session.handle(inp)
        except Refusal as refusal:
            if isinstance(inp, TimerFired):
                return  # a timer the game no longer wants (its step moved on)
            return self._reject(label, refusal)
        finished = self.session.finished
        now = self.clock.now() if at is None else at
        wall = self.clock.wall() - (self.clock.now() - now)
        self._track_game_start(outputs, wall)
        play = checkpoint = None
        if finished is not None:
            play = (self.session.state.session_no, finished.game, self._play_record(finished, wall))
        if was_playing and self.session.engine is None:
            checkpoint = self.session.checkpoint()
        try:
            self.journal.append(inp, now - self._t0, wall, play=play, checkpoint=checkpoint)
        except JournalError as e:
            # Not durable, so not accepted: rebuild the table as the journal has it.
            self._rebuild()
            if isinstance(inp, TimerFired):  # nobody can tap a timer again: try it again shortly
                self._arm(inp.name, now + TIMER_RETRY_S)
                self._emit("error", message=f"{e}; timer {inp.name} will be tried again")
                return None
            self._emit("error", message=f"{e}; the input was not taken, please tap again")
            return self._reject(label, Refusal("refuse.not_saved", "could not save; tap again"))
        if isinstance(inp, Housekeeping):
            return None  # the daemon's own bookkeeping: nothing to show or say
        if not isinstance(inp, TimerFired):
            self._emit("accepted", input=label)
            self.feedback.led("ok", True, flash=True)
            self.feedback.beep()
        self._outputs(outputs, base=now)
        self._announce_reader()  # a change the night kept quiet
        if checkpoint is not None and self.on_game_end is not None:
            self.on_game_end()

    def _repeat(self) -> None:
        """The lines of the last accepted input (or timer) again: the
        instruction a player missed, not the refusal or reader notice since."""
        if self.session.quiet:
            return self._reject("repeat", Refusal("refuse.quiet", "not during the night"))
        if not self._last_says:
            return self._reject("repeat", Refusal("refuse.nothing_to_repeat", "nothing to repeat yet"))
        self._emit("accepted", input="repeat")
        self.feedback.led("ok", True, flash=True)
        self.feedback.beep()
        self._say_batch(self._last_says)

    def _reject(self, label: str, refusal: Refusal) -> None:
        self._emit("rejected", input=label, reason=refusal.reason)
        if not self.session.quiet:  # at night a refusal is neither heard nor seen by those awake
            self.feedback.led("error", True, flash=True)
            self.feedback.beep(long=True)
            self._say_batch([Say(refusal.key, refusal.params)])

    # ----------------------------------------------------------- outputs
    def _outputs(self, outputs: list[Output], base: float) -> None:
        """Carry out one input's outputs in order; its spoken lines, all of
        them, become what ``repeat`` says again."""
        says: list[Say] = []
        spoken: list[Say] = []
        for out in outputs:
            if isinstance(out, Say):
                says.append(out)
                continue
            if says:
                self._say_batch(says)
                spoken += says
                says = []
            if isinstance(out, Report):
                self._emit(out.event, **dict(out.fields))
                if out.event == "ambience":
                    self.voice.ambience(str(out.fields.get("sound")), out.fields.get("action") == "start")
            elif isinstance(out, SetTimer):
                self._arm(out.name, base + out.delay)
            elif isinstance(out, CancelTimer):
                self._live.pop(out.name, None)
        if says:
            self._say_batch(says)
            spoken += says
        # A language card's own line and "Undone." are not instructions: repeat
        # says the instruction in force (after back, the restored step's prompt).
        spoken = [s for s in spoken if s.key not in NOT_REPEATED]
        if spoken:
            self._last_says = spoken

    def _say_batch(self, says: list[Say]) -> list[Any]:
        lines = [self.narrate(s.key, s.params, self.session.lang) for s in says]
        for line in lines:
            self._speak(line)
        return lines

    def _speak(self, line: Any) -> None:
        self._emit("say", key=line.key, text=line.text, lang=line.lang)
        self.voice.speak(line)

    def _emit(self, event: str, **fields: Any) -> None:
        self.log({"t": round(self.clock.now() - self._t0, 3), "event": event, **fields})

    # ---------------------------------------------------- journal replay
    def _track_game_start(self, outputs: Iterable[Output], wall: float) -> None:
        if any(isinstance(o, Report) and o.event == "game_started" for o in outputs):
            self._game_start_wall = wall

    def _play_record(self, play: Any, wall: float) -> dict[str, Any]:
        """A finished game shaped like BG Stats' play import."""
        start = self._game_start_wall if self._game_start_wall is not None else wall
        return {
            "rules": list(play.rules),
            "playDate": datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%d %H:%M:%S"),
            "durationMin": max(0, round((wall - start) / 60)),
            "players": [{"name": p, "score": play.totals.get(p, 0), "winner": p in play.winners,
                         "startPlayer": i == 0} for i, p in enumerate(play.players)],
        }

    def _rebuild(self) -> int:
        """Replay the journal into the session; returns inputs replayed."""
        seq, cp = self.journal.checkpoint()
        n = 0
        for entry, result in self.session.replay(cp, self.journal.entries(after=seq)):
            if isinstance(result, Refusal):
                self._emit("error", message=f"journal input {entry.seq} no longer applies: {result.reason}")
                continue
            self._track_game_start(result, entry.wall)
            n += 1
        return n

    def start(self) -> None:
        """Rebuild from the journal, journal what changed since (settings, a
        new games night), then say where the table is."""
        n = self._rebuild()
        self._emit("started", replayed=n)
        st = self.session.state
        coming = (st.pending or {}).get("configure", st.settings)
        if coming != self.session.wanted:
            self._input(Housekeeping("configure", self.session.wanted))
        last = self.journal.last_wall()
        if last is not None and self.clock.wall() - last > SESSION_GAP_S:
            self._input(Housekeeping("new-session"))
        for _, message in self.notices:
            self._emit("error", message=message)
        self._say_batch([say for say, _ in self.notices if say is not None])
        self._outputs(self.session.resume(), base=self.clock.now())
