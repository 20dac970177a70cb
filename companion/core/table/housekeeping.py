"""Housekeeping: settings and games nights change only between games (a game
in progress, and its replay, keeps the settings it started with); a phone
paired and a display name chosen are facts in force at once."""

from __future__ import annotations

from typing import Any

from companion.core import display_names, tags
from companion.core.events import (
    Housekeeping,
    Output,
    Refusal,
    Say,
)
from companion.core.steps import Goto
from companion.core.table.play import TablePlay
from companion.core.table.state import (
    _OLD_KINDS,
    IDLE,
    NAMED,
    PAGES_OFF,
    PAGES_ON,
    PAIRING,
)


class TableHousekeeping(TablePlay):
    """The daemon's housekeeping inputs."""

    def _housekeeping(self, inp: Housekeeping) -> list[Output] | Goto:
        if inp.kind == "paired":  # a phone became this seat's page: a fact, in force at once
            return self._paired(str(inp.data.get("seat", "")))
        if inp.kind == NAMED:  # a page chose its player's display name: tonight's, the next game's record
            return self._named(str(inp.data.get("seat", "")), inp.data.get("name"))
        kind = _OLD_KINDS.get(inp.kind, inp.kind)
        if kind not in ("configure", "new-evening"):
            raise Refusal("refuse.not_now", f"unknown housekeeping {inp.kind!r}")
        st = self.state
        if kind == "configure" and st.phase == PAIRING and inp.data.get("pages") == PAGES_OFF:
            # The daemon came back with the pages off (or unable to serve them) while the
            # gate waited: no phone can pair now.  No game has begun, so back to the
            # seating, the pages off in force; the card's refusal says why.
            game = st.game
            out = self._unstart()
            self.state.settings = dict(inp.data)
            return [*out, Say("pairing.refuse.no_pages", {"game": f"game/{game}"})]
        st.pending = {**(st.pending or {}), kind: dict(inp.data)}
        if st.phase == IDLE:
            st.apply_pending()
        return []


    def _named(self, seat: str, name: Any) -> list[Output]:
        """A seat's page chose its display name (core/display_names.py).  Refused
        by night (nothing may move on any page then), for a seat whose phone is
        not its page (pages ``on``: paired tonight; ``off``: no page at all), and
        for a name the rules refuse.  In force at once on the pages; the record's
        from the next game on (``_begin`` fixes a game's names as it starts)."""
        st = self.state
        if self.eyes_closed:
            raise Refusal("refuse.night", "not during the night")
        if not tags.valid_player_name(seat) or self.pages == PAGES_OFF or (
                self.pages == PAGES_ON and seat not in st.paired):
            raise Refusal("display.refuse.not_paired", "pair this phone with a seat first")
        if not isinstance(name, str):
            raise Refusal("display.refuse.empty", "a display name cannot be empty")
        name = display_names.clean(name)
        configured = dict(self.settings["names"])
        ids = {*tags.COLOURS, *configured, *st.seats, *st.paired, *st.called} - {seat}
        others = {*ids, *(self.name_of(i) for i in ids), *(n for i, n in st.called.items() if i != seat)}
        if (refusal := display_names.problem(name, others)) is not None:
            raise refusal
        st.called[seat] = name
        return []
