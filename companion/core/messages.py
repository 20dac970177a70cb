"""What leaves the table for the sinks, and the read side the pages draw from.

The runtime's router publishes two kinds of message to every sink subscribed
to their audience (DESIGN.md, *Audiences*):

    TABLE          the speaker, the panel's LEDs and buzzer, the public page, the log
    player:<id>    that player's page (and the log)
    LOG            the log only

``Event`` is a log event (``say``, ``accepted``, ``round_scored``, ``tell``…)
with its audience and, for lines, the rendered ``line``; ``Command`` is
something a device does that is no event (``feedback``: the ok/error LED and
beep; ``sound``: the night's ambience; ``led``: the ready LED; ``activity``:
``{"game": id or None, "timed": bool}`` on every change, for background work
that must keep out of the table's way).

The shell (speaker, panel, pages) knows only these values and the small
protocols below: ``Device`` (a ``Sink`` that says what it ``wants`` and can
``close``) to receive, ``Inbox`` to send inputs back: one shape each way.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from companion.core.events import LOG, TABLE

ALL = "*"


def seat_audience(player_id: str) -> str:
    """The audience of the player seated as ``player_id`` (their page)."""
    return f"player:{player_id}"


@dataclass(frozen=True)
class Event:
    audience: str  # TABLE | LOG | seat_audience(id)
    fields: Mapping[str, Any]  # the log event: {"t", "event", ...}, JSON-ready
    line: Any = None  # the rendered line of a ``say`` or ``tell``

    @property
    def name(self) -> str:
        return str(self.fields["event"])

    @property
    def public(self) -> bool:
        return self.audience == TABLE


# What a device may be told to do: the ok/error flash and beep, the night's
# ambience, the ready LED, the table's activity, a pairing's answer.
CommandName = Literal["feedback", "sound", "led", "activity", "paired", "pair_failed"]


@dataclass(frozen=True)
class Command:
    name: CommandName
    args: Mapping[str, Any] = field(default_factory=dict)
    audience: str = TABLE


Message = Event | Command


class Claim:
    """Who has a page's request: the table (``take``, on the loop's thread,
    as it handles it) or the page (``withdraw``, when it stops waiting) —
    whichever comes first, once.  So a page told "too late, nothing was done"
    is never overtaken by the table doing it.  (``dict.setdefault`` is one
    atomic step: no lock, and the core imports no threading.)"""

    def __init__(self) -> None:
        self._by: dict[str, str] = {}

    def take(self) -> bool:
        return self._by.setdefault("by", "table") == "table"

    def withdraw(self) -> bool:
        return self._by.setdefault("by", "page") == "page"

    @property
    def withdrawn(self) -> bool:
        return self._by.get("by") == "page"


@dataclass(frozen=True)
class Answer:
    """What a page's control hears back, once, on its own request: the
    table's verdict (``ok``; a refusal's ``reason``, and the sentence for it,
    ``key`` and ``text``, as the room heard it or as only that page may read
    it), the lines the table told that seat for it (``told``: each ``key``
    and ``text``, the table's own word: "Your bid: 2."), and that seat's page
    after it (``me``, the read side's: what it changed)."""

    ok: bool
    reason: str | None = None
    key: str | None = None
    text: str | None = None
    told: tuple[Mapping[str, str], ...] = ()
    me: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PageInput:
    """A page's control (a button, a submit, a display name) that its page
    waits for: the loop handles ``item`` only if it takes ``claim`` before the
    page withdraws, and then calls ``reply`` with its ``Answer``, on the loop's
    thread, once the input's outputs are out — given by the page's server for
    this control alone.  So a page is answered by its own input's verdict,
    never by another's of the same name (the panel's next, another seat's
    bid), whatever the order they come in, and on one path."""

    item: Any
    seat: str  # the page's: whose page the answer's ``me`` is
    reply: Callable[[Answer], None]
    claim: Claim = field(default_factory=Claim)


@dataclass(frozen=True)
class PairRequest:
    """From a page: the phone asking to become seat ``seat``'s private page.
    The loop then takes that player's card, tapped within the pairing window,
    as the proof (not as a game input) and answers with a ``paired`` command
    carrying ``nonce`` to the seat's audience, which the page's server is
    listening for (or ``pair_failed`` with ``error``, ``reason`` and ``text``).

    ``commit``, called on the loop's thread once the card proved it and before
    anything is journaled or said, stores the phone's secret durably: False if
    the phone stopped waiting (nothing stored), ``OSError`` if it could not be
    stored (nothing changed).  ``undo`` forgets it again when the journal then
    fails.  ``claim``: withdrawn when the phone stops waiting."""

    seat: str
    nonce: str
    commit: Callable[[], bool] | None = None
    undo: Callable[[], None] | None = None
    claim: Claim | None = None


@dataclass(frozen=True)
class Wants:
    """What a device subscribes to: ``audiences`` (None: every one) and
    ``kinds``, the names of the events and commands it acts on (None: every
    one); the router hands it nothing else."""

    audiences: frozenset[str] | None = None
    kinds: frozenset[str] | None = None

    def __contains__(self, message: Message) -> bool:
        return ((self.audiences is None or message.audience in self.audiences)
                and (self.kinds is None or message.name in self.kinds))


def wants(audiences: str | Iterable[str] = ALL, kinds: Iterable[str] | None = None) -> Wants:
    """``Wants`` spelled as a subscription: an audience, a few, or ``ALL``."""
    heard = None if audiences == ALL else frozenset([audiences] if isinstance(audiences, str) else audiences)
    return Wants(heard, None if kinds is None else frozenset(kinds))


class Sink(Protocol):
    def receive(self, message: Message) -> None: ...


class Device(Sink, Protocol):
    """An output device (the log, the speaker, the panel's LEDs, the pages, an
    LED ring): the router hands it what it ``wants``, on the loop's thread,
    and it must not make the loop wait; ``close`` lets go of what it holds
    (threads joined, pins released) and is harmless twice."""

    @property
    def wants(self) -> Wants: ...

    def close(self) -> None: ...


class Inbox(Protocol):
    """Where every input source hands the loop what it has, from any thread,
    and the one thing a source is given to reach the table: the reader
    (``start(inbox)``), the panel, the pages and the MQTT link (each made with
    it).  One shape for every source, as every output is a ``Device``: a new
    source needs no new seam in the loop or the wiring, and a test stands in
    for the table with any object that has ``submit`` (runtime.inbox.Inbox is
    a queue that has).  What may be submitted:

    - an input: ``TagSeen``, ``ReaderStatus``, ``ButtonPressed``, a page's
      ``PageInput`` (its ``Submit``, button or display name) or ``PairRequest``;
    - ``ShellError``: something the source survived, for the log;
    - ``Aside``: a line the source has for the table (never by night);
    - a callable: run on the loop's thread, after what is queued — how a
      source reads the table (the link's state) without a lock."""

    def submit(self, item: Any) -> None: ...


class ReadSide:
    """The latest snapshots for the pages, replaced whole by the loop after
    each input and read from any thread: one reference swap, so a reader
    never sees half an update and never makes the loop wait."""

    def __init__(self) -> None:
        # (version, public version, public, private): the public version moves
        # only when the public snapshot changed, counted here on the loop's thread
        # so that it depends on the inputs alone and never on how a reader's
        # thread happened to batch the changes it saw (by night, a deal's count).
        self._snapshot: tuple[int, int, dict[str, Any], dict[str, dict[str, Any]]] = (0, 0, {}, {})
        # Which seats' pages are read (the web server knows: the seats with a
        # phone); None: every seat's, as a simulation or a test reads them.
        # Called on the loop's thread: it must only read, never wait.
        self.watching: Callable[[], Collection[str]] | None = None
        self.wanted: Callable[[], None] | None = None  # the projection's: "render for the watchers now"

    def watch(self, watching: Callable[[], Collection[str]]) -> None:
        """From any thread: from now on only these seats' pages are kept."""
        self.watching = watching
        if self.wanted is not None:
            self.wanted()

    def watched(self) -> Collection[str] | None:
        return None if self.watching is None else self.watching()

    def update(self, public: dict[str, Any], private: Mapping[str, dict[str, Any]]) -> None:
        version, public_version, last_public, _ = self._snapshot
        moved = public_version + (public != last_public)
        self._snapshot = (version + 1, moved, public, dict(private))

    @property
    def version(self) -> int:
        return self._snapshot[0]

    def public(self) -> dict[str, Any]:
        return self._snapshot[2]

    def public_versioned(self) -> tuple[int, dict[str, Any]]:
        """The public snapshot and how many times it has changed, read together."""
        return self._snapshot[1], self._snapshot[2]

    def private(self, player_id: str) -> dict[str, Any]:
        return self._snapshot[3].get(player_id, {})


__all__ = ["ALL", "LOG", "TABLE", "Answer", "Claim", "Command", "CommandName", "Device", "Event", "Inbox", "Message",
           "PageInput", "PairRequest", "ReadSide", "Sink", "Wants", "seat_audience", "wants"]
