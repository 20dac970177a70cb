"""The outputs seam: everything the loop and its desks send the sinks goes
through here, as the core's ``Event`` and ``Command`` messages on the router
(every sink subscribes to the audiences it may receive: companion.app.wiring).

The table's rules for what is sent live here, each once:
 - the night's silence: nothing the shell says (a refusal, a notice, an
   announcement, a pairing prompt) is heard or lit while eyes are closed —
   only the game's own lines are (``quiet``, ``shell_say``, ``reject``);
 - a submit's privacy: its verdict goes to the submitting player's page only
   (``accept``, ``reject``), as a display name's does (``named``);
 - a page's answer: each verdict is also returned, as the ``Answer`` the loop
   hands back on the control's own request, with what the input told that
   seat (``told``) — the seam keeps no "who is being answered";
 - what ``repeat`` says: the table lines of the last accepted input, minus
   the lines that are no instruction (``remember``, ``repeat``).
 - what the broker hears beyond the table's state: the TABLE-audience
   verdicts and scores, and each finished play, as outbox rows journaled
   with their input (``letters``; runtime.outbox), only when it publishes.

The desks (pairing, reader notices) return ``Out`` values; ``send`` carries
them out, so none of them calls the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from companion.core.events import LOG, TABLE, Housekeeping, Output, Refusal, Report, Say, Sound, Submit, Tell
from companion.core.messages import Answer, Command, CommandName, Event, seat_audience
from companion.core.table import NAMED, Table
from companion.runtime import outbox
from companion.runtime.journal import Letters

Narrate = Callable[[str, Mapping[str, Any], str], Any]  # (key, params, lang) -> Line with .text
NOT_REPEATED = frozenset({"table.language", "undo.done", "pairing.done"})  # lines repeat never says again


@dataclass(frozen=True)
class Emit:
    """A log/page event: ``{"t", "event", **fields}`` to ``audience``."""

    event: str
    audience: str = TABLE
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ShellSay:
    """Lines the shell has for the table (not the game's): never said at night."""

    says: tuple[Say, ...]


Out = Emit | ShellSay | Say | Command  # what a desk hands back for ``send``


class Outputs:
    def __init__(self, table: Table, router: Any, narrate: Narrate, clock: Any,
                 publish_as: str | None = None, epoch: str = "",
                 publishes: frozenset[str] = outbox.TABLE_ONLY) -> None:
        self.table, self.router, self.narrate, self.clock = table, router, narrate, clock
        self.publish_as = publish_as  # the table's id on an MQTT broker; None: it publishes nothing
        self.epoch = epoch  # the journal's (runtime.journal.EPOCH): in every id published
        self.publishes = publishes  # the events it publishes: the games' manifests', handed in by the app
        self._t0 = clock.now()  # the events' ``t``: seconds since this run began
        # The table's lines of the last accepted input: what repeat says again,
        # in the language of the moment.
        self.last_says: list[Say] = []
        self._activity: dict[str, Any] | None = None  # as last told (``activity``)

    @property
    def quiet(self) -> bool:
        """Eyes are closed: the night must sound the same whatever happens."""
        return self.table.eyes_closed

    # ------------------------------------------------------------ the seam
    def emit(self, event: str, audience: str = TABLE, line: Any = None, **fields: Any) -> None:
        self.router.publish(Event(audience, {"t": round(self.clock.now() - self._t0, 3), "event": event,
                                             **fields}, line))

    def error(self, message: str) -> None:
        self.emit("error", LOG, message=message)

    def command(self, name: CommandName, args: Mapping[str, Any], audience: str = TABLE) -> None:
        self.router.publish(Command(name, dict(args), audience))

    def say(self, says: Iterable[Say], aside: bool = False) -> None:
        """The table's lines, narrated in the table's language, in order.
        ``aside``: the shell's announcement (the pages' address), not the game's:
        heard, but no page shows it as the line in force."""
        for s in says:
            line = self.narrate(s.key, s.params, self.table.lang)
            extra: dict[str, Any] = {"aside": True} if aside else {}
            self.emit("say", line=line, key=line.key, text=line.text, lang=line.lang, **extra)

    def shell_say(self, says: Iterable[Say], aside: bool = False) -> bool:
        """The shell's lines, unless eyes are closed (then nothing: False)."""
        if self.quiet:
            return False
        self.say(says, aside)
        return True

    def instruction(self) -> Any:
        """The line in force, as ``repeat`` would end on it, in the table's
        language (a narrated line: ``key``, ``text``); None by night or before any."""
        if self.quiet or not self.last_says:
            return None
        last = self.last_says[-1]
        return self.narrate(last.key, last.params, self.table.lang)

    def tell(self, out: Tell) -> None:
        line = self.narrate(out.key, out.params, self.table.lang)
        fields: dict[str, Any] = {"to": out.to, "key": line.key, "text": line.text, "lang": line.lang}
        if out.data:
            fields["data"] = dict(out.data)
        self.emit("tell", self.audience(f"player:{out.to}"), line=line, **fields)

    def activity(self, engine: Any, timed: bool) -> None:
        """Tell the shell, when it changes, which game is being played and
        whether the table runs on the clock (a game timer is armed: One
        Night's night, discussion and vote count): the ``activity`` command.
        Background work (the voice's cache fill) holds off while ``timed``,
        so no cue wakes late behind it; and fills the game's lines first."""
        now = {"game": engine.game if engine is not None else None, "timed": timed}
        if now != self._activity:
            self._activity = now
            self.command("activity", now)

    def game(self, out: Output) -> None:
        """One of the game's outputs for the sinks (the loop keeps timers and draws)."""
        if isinstance(out, Say):
            self.say([out])
        elif isinstance(out, Tell):
            self.tell(out)
        elif isinstance(out, Report):
            self.emit(out.event, self.audience(out.audience), **dict(out.fields))
        elif isinstance(out, Sound):
            self.emit("ambience", sound=out.sound, action="start" if out.on else "stop")
            self.command("sound", {"sound": out.sound, "on": out.on})

    def send(self, outs: Iterable[Out]) -> None:
        """Carry out what a desk handed back, in order."""
        for out in outs:
            if isinstance(out, Emit):
                self.emit(out.event, out.audience, **dict(out.fields))
            elif isinstance(out, ShellSay):
                self.shell_say(out.says)
            elif isinstance(out, Say):
                self.say([out])
            else:
                self.router.publish(out)

    def audience(self, audience: str) -> str:
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
            self.error(f"a private line for {audience.removeprefix('player:')} went to no "
                       f"page: two seats ({', '.join(seats)}) answer to that name")
        return LOG

    def letters(self, outputs: list[Output], wall: float, finished: Any,
                play: tuple[int, str, Mapping[str, Any]] | None) -> Letters | None:
        """What one input publishes through the outbox (journaled with it), or None."""
        return None if self.publish_as is None else outbox.letters(self.publish_as, outputs, wall, finished, play,
                                                                        self.epoch, self.publishes)

    # ------------------------------------------------------------ verdicts
    # Each verdict is sent to its audiences and returned: the ``Answer`` a page's
    # control hears back (the loop adds what changed), whoever else hears of it.
    def accept(self, label: Any, submit: Submit | None = None) -> Answer:
        """An accepted input.  Everyone may know that a player has submitted,
        never what — unless the game names it "" in public: then even the
        fact is the player's (a gift)."""
        if submit is not None:
            self.emit("accepted", TABLE if label else seat_audience(submit.player), input="submit",
                      player=self.table.name_of(submit.player), field=submit.field)
            return Answer(True)
        self.emit("accepted", input=label)
        self.command("feedback", {"ok": True})
        return Answer(True)

    def reject(self, label: str, refusal: Refusal, submit: Submit | None = None) -> Answer:
        if submit is not None:
            # The reason may tell something about a sealed value: it goes to the
            # submitting player's page only, and nothing is heard or lit.
            text = self.narrate(refusal.key, refusal.params, self.table.lang).text
            self.emit("rejected", seat_audience(submit.player), input="submit",
                      player=self.table.name_of(submit.player), field=submit.field, reason=refusal.reason,
                      key=refusal.key, text=text)
            return Answer(False, refusal.reason, refusal.key, text)
        if self.quiet:  # at night a refusal is neither heard nor seen by those awake
            # The page that pressed (if one did) is answered with one sentence, the same
            # whatever was refused and why: the night's, never the reason (the log's alone).
            line = self.narrate("refuse.night", {}, self.table.lang)
            self.emit("rejected", LOG, line=line, input=label, reason=refusal.reason)
            return Answer(False, "not during the night", line.key, line.text)
        # The sentence the room hears is the one a page that pressed shows, in the table's language.
        line = self.narrate(refusal.key, refusal.params, self.table.lang)
        self.emit("rejected", line=line, input=label, reason=refusal.reason)
        self.command("feedback", {"ok": False})
        self.emit("say", line=line, key=line.key, text=line.text, lang=line.lang)
        return Answer(False, refusal.reason, line.key, line.text)

    def refuse(self, label: Any, refusal: Refusal, inp: Any) -> Answer:
        """A refused input's verdict: a page's display name to that page alone
        (``named``), a submit to its player's page, anything else as the table refuses."""
        if isinstance(inp, Housekeeping) and inp.kind == NAMED:
            return self.named(inp, refusal)
        return self.reject(label, refusal, inp if isinstance(inp, Submit) else None)

    def named(self, inp: Housekeeping, refusal: Refusal | None = None) -> Answer:
        """A page's display name (``named`` housekeeping): its verdict goes to
        that seat's page only, neither heard nor lit (a phone's own business:
        the room is not interrupted, and by night nothing differs).  The page
        shows ``text``, the refusal in the table's language."""
        seat = str(inp.data.get("seat", ""))
        fields: dict[str, Any] = {"input": "name", "player": self.table.name_of(seat)}
        if refusal is None:
            self.emit("accepted", seat_audience(seat), **fields, name=self.table.state.called.get(seat))
            return Answer(True)
        text = self.narrate(refusal.key, refusal.params, self.table.lang).text
        self.emit("rejected", seat_audience(seat), **fields, reason=refusal.reason, key=refusal.key, text=text)
        return Answer(False, refusal.reason, refusal.key, text)

    def told(self, outputs: Iterable[Output], seat: str | None) -> tuple[dict[str, str], ...]:
        """What one input's outputs tell ``seat`` (its ``Tell``s, as its page has
        them): the table's own word in the answer to that seat's control."""
        if seat is None:
            return ()
        lines = (self.narrate(o.key, o.params, self.table.lang) for o in outputs
                 if isinstance(o, Tell) and self.table.audience_id(f"player:{o.to}") == seat)
        return tuple({"key": line.key, "text": line.text} for line in lines)

    # -------------------------------------------------------------- repeat
    def remember(self, spoken: Iterable[Say]) -> None:
        """One input's table lines, all of them, become what ``repeat`` says
        again.  A language card's own line and "Undone." are not instructions:
        repeat says the instruction in force (after back, the restored step's prompt)."""
        kept = [s for s in spoken if s.key not in NOT_REPEATED]
        if kept:
            self.last_says = kept

    def repeat(self) -> Answer:
        """The table's lines of the last accepted input (or timer) again: the
        instruction a player missed, not the refusal or reader notice since,
        and never a private line."""
        if self.quiet:
            return self.reject("repeat", Refusal("refuse.quiet", "not during the night"))
        if not self.last_says:
            return self.reject("repeat", Refusal("refuse.nothing_to_repeat", "nothing to repeat yet"))
        verdict = self.accept("repeat")
        self.say(self.last_says)
        return verdict
