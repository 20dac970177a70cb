"""Values that cross the boundary of a rule engine.

Inputs are what the table does (a tap, a button, a timer running out);
outputs are what the companion should do about it (say a line, report a
verdict, start a timer).  All are frozen dataclasses, so engines stay pure:
they take inputs and return outputs, and never read a clock or touch I/O.
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
    ``new-session`` (a new games night: tonight's totals start again)."""

    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"table/{self.kind}"


Input = Tap | Press | TimerFired | Housekeeping


def input_to_json(inp: Input) -> dict[str, Any]:
    if isinstance(inp, Tap):
        return {"tap": inp.identity}
    if isinstance(inp, Press):
        return {"press": inp.button}
    if isinstance(inp, Housekeeping):
        return {"table": inp.kind, "data": dict(inp.data)}
    return {"timer": inp.name}


def input_from_json(data: Any) -> Input:
    """The inverse of ``input_to_json``; ValueError for anything it never
    wrote (a journal row damaged or from another program)."""
    if isinstance(data, dict) and len(data) == 1:
        (kind, value), = data.items()
        if isinstance(value, str) and value:
            if kind == "tap":
                return Tap(value)
            if kind == "press":
                return Press(value)
            if kind == "timer":
                return TimerFired(value)
    if (isinstance(data, dict) and set(data) <= {"table", "data"} and isinstance(data.get("table"), str)
            and isinstance(data.get("data") or {}, dict)):
        return Housekeeping(data["table"], data.get("data") or {})
    raise ValueError(f"not an input: {str(data)[:80]}")


# --------------------------------------------------------------- outputs
@dataclass(frozen=True)
class Say:
    """Speak the line ``key`` of the narration file, filled with ``params``.

    Params are plain data; by convention ``player``/``players`` hold player
    names and ``tile``/``tiles`` hold tag identities, so the narrator can
    translate them into the table's language.
    """

    key: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Report:
    """A structured event for the log (``formation``, ``round_scored``,
    ``game_over``, ``onw_result``…); ``fields`` are JSON-ready."""

    event: str
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SetTimer:
    """Fire ``TimerFired(name)`` after ``delay`` seconds (replaces a timer of
    the same name)."""

    name: str
    delay: float


@dataclass(frozen=True)
class CancelTimer:
    name: str


Output = Say | Report | SetTimer | CancelTimer


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


@dataclass(frozen=True)
class ShellError:
    """Something the shell survived (a voice device gone, a panel missing),
    reported from any thread; the loop logs it as an ``error`` event."""

    message: str
