"""Values that cross the boundary of a rule engine.

Inputs are what the table does (a tap, a button, a timer running out, a
player's submit from their page, a secret draw the runtime made); outputs are
what the companion should do about it (say a line to the table, tell one
player something, report a verdict, start a timer, ask for a draw).  All are
frozen dataclasses, so engines stay pure: they take inputs and return
outputs, and never read a clock, a random source or touch I/O.

Every output has an **audience** (DESIGN.md, *Audiences*): ``TABLE`` (spoken,
on the public page, in the log), one player (their page only), or ``LOG``
(the log only).  ``Say`` is always the table's; ``Tell`` always one
player's; a ``Report`` says which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

BUTTONS = ("next", "back", "repeat")


# ---------------------------------------------------------------- inputs
@dataclass(frozen=True)
class Tap:
    """A tag laid on the reader, already resolved to its identity
    (``skb/knight/3``, ``player/red``)."""

    identity: str

    @property
    def label(self) -> str:
        return self.identity


@dataclass(frozen=True)
class Press:
    """A button: ``next``, ``back`` or ``repeat``."""

    button: str

    @property
    def label(self) -> str:
        return self.button


@dataclass(frozen=True)
class TimerFired:
    """A timer an engine asked for (``SetTimer``) has run out."""

    name: str

    @property
    def label(self) -> str:
        return f"timer/{self.name}"


@dataclass(frozen=True)
class Housekeeping:
    """The daemon's own input, journaled like a tap so a replay is exact:
    ``configure`` (the game settings in force from the next game on) and
    ``new-evening`` (a new games night: tonight's totals start again)."""

    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"table/{self.kind}"


@dataclass(frozen=True)
class Submit:
    """A value one player sent from their own page (a sealed bid, a battle
    strength): ``player`` is the seat's stable id (``red``) as it arrives, the
    table turns it into the player's name before an engine sees it.  The
    value is JSON-ready and may be secret: it never appears in a public
    output, and ``label`` carries no value."""

    player: str
    field: str
    value: Any

    @property
    def label(self) -> str:
        return "submit"


@dataclass(frozen=True)
class Drawn:
    """The result of a secret draw an engine asked for (``Draw``), made by the
    runtime from an unpredictable source and journaled like a tap, so a replay
    sees the very same value and nothing stored beforehand predicts it."""

    name: str
    value: Any

    @property
    def label(self) -> str:
        return f"draw/{self.name}"


Input = Tap | Press | TimerFired | Housekeeping | Submit | Drawn


def input_to_json(inp: Input) -> dict[str, Any]:
    if isinstance(inp, Tap):
        return {"tap": inp.identity}
    if isinstance(inp, Press):
        return {"press": inp.button}
    if isinstance(inp, Housekeeping):
        return {"table": inp.kind, "data": dict(inp.data)}
    if isinstance(inp, Submit):
        return {"submit": {"player": inp.player, "field": inp.field, "value": inp.value}}
    if isinstance(inp, Drawn):
        return {"draw": inp.name, "value": inp.value}
    return {"timer": inp.name}


class BadInput(ValueError):
    """A journal row that is no input this release knows."""


def input_from_json(data: Any) -> Input:
    """The inverse of ``input_to_json``; ``BadInput`` (a ValueError) for
    anything it never wrote (a journal row damaged or from another program)."""
    if isinstance(data, dict) and len(data) == 1:
        (kind, value), = data.items()
        if isinstance(value, str) and value:
            if kind == "tap":
                return Tap(value)
            if kind == "press":
                return Press(value)
            if kind == "timer":
                return TimerFired(value)
        if (kind == "submit" and isinstance(value, dict) and set(value) == {"player", "field", "value"}
                and isinstance(value["player"], str) and isinstance(value["field"], str)):
            return Submit(value["player"], value["field"], value["value"])
    if (isinstance(data, dict) and set(data) == {"draw", "value"} and isinstance(data["draw"], str)
            and data["draw"]):
        return Drawn(data["draw"], data["value"])
    if (isinstance(data, dict) and set(data) <= {"table", "data"} and isinstance(data.get("table"), str)
            and isinstance(data.get("data") or {}, dict)):
        return Housekeeping(data["table"], data.get("data") or {})
    raise BadInput(f"not an input: {str(data)[:80]}")


# --------------------------------------------------------------- outputs
TABLE = "table"  # everyone: spoken, the public page, the log
LOG = "log"  # the log only (what the daemon keeps for itself)


def to_player(name: str) -> str:
    """The audience of one player (by the name the engine knows them by)."""
    return f"player:{name}"


@dataclass(frozen=True)
class Say:
    """Say the line ``key`` to the whole table, filled with ``params``.

    Params are plain data; by convention ``player``/``players`` hold player
    names and ``tile``/``tiles`` hold tag identities, so the narrator can
    translate them into the table's language.
    """

    key: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tell:
    """A private line for one player's page only (``to``: their name): never
    spoken, never on a public page, never said again by ``repeat``.
    ``data`` is structured detail for the page (JSON-ready)."""

    to: str
    key: str
    params: Mapping[str, Any] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)


# The contract's event for a round's points (DESIGN, "Event log"): every game
# with rounds reports it; the runtime takes it as "a round is settled" (backups).
ROUND_SCORED = "round_scored"


@dataclass(frozen=True)
class Report:
    """A structured event (the table's ``round_scored``, ``game_over``, or a
    game's own: those it publishes are in its manifest); ``fields`` are
    JSON-ready.  ``audience``: ``TABLE``
    (public page and log), ``LOG``, or ``to_player(name)``."""

    event: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    audience: str = TABLE


@dataclass(frozen=True)
class Sound:
    """Start or stop a looping background sound (the night's table tapping):
    a command for the speaker, not a line."""

    sound: str
    on: bool


@dataclass(frozen=True)
class Draw:
    """Ask the runtime for a secret draw: ``count`` whole numbers, each from
    ``low`` to ``high`` inclusive (``count`` 0: one number, not a list).  The
    answer comes back as the input ``Drawn(name, value)``.  Names are stable
    and documented per game, so a table script can fix them (``draws:``)."""

    name: str
    low: int
    high: int
    count: int = 0

    def accepts(self, value: Any) -> bool:
        """Is ``value`` a possible answer to this draw?"""
        values = value if self.count else [value]
        if self.count and (not isinstance(value, list) or len(value) != self.count):
            return False
        return all(isinstance(v, int) and not isinstance(v, bool) and self.low <= v <= self.high
                   for v in values)


@dataclass(frozen=True)
class SetTimer:
    """Fire ``TimerFired(name)`` after ``delay`` seconds (replaces a timer of
    the same name)."""

    name: str
    delay: float


@dataclass(frozen=True)
class CancelTimer:
    name: str


Output = Say | Tell | Report | Sound | SetTimer | CancelTimer | Draw


class Refusal(Exception):
    """An input the current step does not take.  Nothing has changed.

    ``key`` names a narration line (``refuse.*``) that explains why, and
    ``params`` fill it; ``str(refusal)`` is a short English reason for logs.
    """

    def __init__(self, key: str, reason: str, **params: Any) -> None:
        super().__init__(reason)
        self.key = key
        self.reason = reason
        self.params = params


# ------------------------------------------------- from the hardware shell
# Defined here, in the core, so the table loop can take them without
# importing the shell; ``hardware.base`` re-exports them for the readers.
@dataclass(frozen=True)
class TagSeen:
    """A tag came into the field.  ``text`` is the NDEF text record if the tag
    carries one; ``uid`` is the tag's UID as upper-case hex; ``error`` says why
    the tag could not be read (the table then refuses it out loud)."""

    uid: str | None = None
    text: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class ReaderStatus:
    connected: bool
    detail: str = ""


@dataclass(frozen=True)
class ButtonPressed:
    name: str  # next | back | repeat | hold-back
    seat: str | None = None  # pressed on this seat's page (None: the panel, the table's own)


@dataclass(frozen=True)
class ShellError:
    """Something the shell survived (a voice device gone, a panel missing),
    reported from any thread; the loop logs it as an ``error`` event."""

    message: str


@dataclass(frozen=True)
class Aside:
    """A line the shell has for the table (the pages' address, the venue's
    link lost), ``params`` by language (a host name is spelled in katakana in
    Japanese): never said by night, never repeated, and no page shows it in
    place of the game's line."""

    key: str
    params: Mapping[str, Mapping[str, Any]]
