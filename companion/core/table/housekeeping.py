"""Housekeeping: settings and games nights change only between games (a game
in progress, and its replay, keeps the settings it started with); a phone
paired (pairing.py) and a display name chosen are facts in force at once.
Functions of the table (phases.py names them)."""

from __future__ import annotations

from companion.core import display_names, tags
from companion.core.events import Housekeeping, Output, Refusal, Say
from companion.core.table.play import unstart
from companion.core.table.shape import TableShape
from companion.core.table.state import _OLD_KINDS, NAMED, PAGES_OFF, PAGES_ON

KINDS = ("paired", NAMED, "configure", "new-evening")  # what the daemon tells the table


def housekeeping_kind(inp: Housekeeping) -> str:
    """The kind the phase table names a housekeeping by (its kind under its
    current name); one the table does not know is ``housekeeping``."""
    kind = _OLD_KINDS.get(inp.kind, inp.kind)
    return kind if kind in KINDS else "housekeeping"


def unknown(inp: Housekeeping) -> Refusal:
    return Refusal("refuse.not_now", f"unknown housekeeping {inp.kind!r}")


def pend(t: TableShape, inp: Housekeeping) -> list[Output]:
    """A setting or a new evening waits for the table to be between games."""
    st = t.state
    st.pending = {**(st.pending or {}), housekeeping_kind(inp): dict(inp.data)}
    return []


def pend_and_apply(t: TableShape, inp: Housekeeping) -> list[Output]:
    """Between games it is in force at once."""
    out = pend(t, inp)
    t.state.apply_pending()
    return out


def configure_at_the_gate(t: TableShape, inp: Housekeeping) -> list[Output]:
    """The daemon came back with the pages off (or unable to serve them) while
    the gate waited: no phone can pair now.  No game has begun, so back to the
    seating, the pages off in force; the card's refusal says why."""
    if inp.data.get("pages") != PAGES_OFF:
        return pend(t, inp)
    game = t.state.game
    out = unstart(t)
    t.state.settings = dict(inp.data)
    return [*out, Say("pairing.refuse.no_pages", {"game": f"game/{game}"})]


def named(t: TableShape, inp: Housekeeping) -> list[Output]:
    """A seat's page chose its display name (core/display_names.py): tonight's,
    the next game's record.  Refused by night (nothing may move on any page
    then), for a seat whose phone is not its page (pages ``on``: paired
    tonight; ``off``: no page at all), and for a name the rules refuse.  In
    force at once on the pages; the record's from the next game on
    (``pairing.begin`` fixes a game's names as it starts)."""
    st, seat, name = t.state, str(inp.data.get("seat", "")), inp.data.get("name")
    if t.eyes_closed:
        raise Refusal("refuse.night", "not during the night")
    if not tags.valid_player_name(seat) or t.pages == PAGES_OFF or (
            t.pages == PAGES_ON and seat not in st.paired):
        raise Refusal("display.refuse.not_paired", "pair this phone with a seat first")
    if not isinstance(name, str):
        raise Refusal("display.refuse.empty", "a display name cannot be empty")
    name = display_names.clean(name)
    configured = dict(t.settings["names"])
    ids = {*tags.COLOURS, *configured, *st.seats, *st.paired, *st.called} - {seat}
    others = {*ids, *(t.name_of(i) for i in ids), *(n for i, n in st.called.items() if i != seat)}
    if (refusal := display_names.problem(name, others)) is not None:
        raise refusal
    st.called[seat] = name
    return []
