"""The pairing desk: a phone asks to be a seat's page, and that player's
card, tapped within the window, proves it.

The secret belongs to the page's server, which keeps it; the table journals
only the fact that the seat is paired (a game that needs pages waits for
every seat's).  The desk decides and hands back ``Out`` values (for
``Outputs.send``) and, when a card proved a phone, the ``Housekeeping`` input
to journal: it never calls the loop.  Its rules:
 - the first phone asking holds the seat's window (a second is "busy");
 - prompts ("Red, tap your player card") are limited table-wide;
 - a card the table would take now (One Night's reveal) goes to the game:
   asked of a copy of the pure table (a dry run), the window stays open;
 - the phone's secret is stored before anything is journaled or said;
 - nothing is said, nor a card taken as proof, while eyes are closed.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from companion.core import tags
from companion.core.events import LOG, Housekeeping, Refusal, Say, Tap
from companion.core.messages import Command, PairRequest, seat_audience
from companion.core.table import Table
from companion.runtime.outputs import Emit, Narrate, Out, ShellSay

# "Red, tap your player card…" at most this often, table-wide: a flood of
# requests from many phones is refused, not spoken (ten seats pairing at once fit).
PAIR_PROMPTS_PER_MIN = 12


@dataclass
class Proof:
    """A card proved a waiting phone: send ``outs``, journal ``housekeeping``
    (None: nothing to journal), then send ``desk.settled(proof)``."""

    seat: str
    request: PairRequest
    outs: list[Out]
    housekeeping: Housekeeping | None = None
    replaced: bool = False  # another phone was this seat's page


class PairingDesk:
    def __init__(self, table: Table, narrate: Narrate, now: Callable[[], float],
                 extra_players: tuple[str, ...] = (), window_s: float = 30.0) -> None:
        self.table, self.narrate, self.now = table, narrate, now
        self.extra_players = extra_players
        self.window_s = window_s
        self.prompts_per_min = PAIR_PROMPTS_PER_MIN
        self._waiting: dict[str, tuple[PairRequest, float]] = {}  # seat → (request, until): a phone waits
        self._prompted: deque[float] = deque()  # when the last prompts were said (the loop's clock)

    def request(self, request: PairRequest) -> list[Out]:
        """A phone asks to be ``request.seat``'s page."""
        seat = request.seat
        if request.claim is not None and request.claim.withdrawn:
            return []  # the phone stopped waiting before the table heard it: nothing to say
        if not tags.is_known(f"player/{seat}", self.extra_players):
            return self.failed(request, "no_seat", "pairing.refuse.no_seat", "no such seat")
        if self.table.eyes_closed:  # a line now would break the night's silence
            return self.failed(request, "night", "pairing.refuse.night", "not during the night")
        now = self.now()
        held = self._waiting.get(seat)
        if held is not None and now <= held[1] and not (held[0].claim is not None and held[0].claim.withdrawn):
            return self.failed(request, "busy", "pairing.refuse.busy", "this seat is being paired")
        while self._prompted and self._prompted[0] <= now - 60.0:
            self._prompted.popleft()
        if len(self._prompted) >= self.prompts_per_min:
            return self.failed(request, "too_many", "pairing.refuse.too_many", "too many pairing requests")
        self._prompted.append(now)
        self._waiting[seat] = (request, now + self.window_s)
        return [ShellSay((Say("pairing.tap_card", {"player": self.table.name_of(seat)}),))]

    def waiting(self, seat: str) -> bool:
        """Whether a phone waits for ``seat``'s card now (on the loop's thread)."""
        return seat in self._waiting

    def failed(self, request: PairRequest, error: str, key: str, reason: str, say: bool = False) -> list[Out]:
        """Tell the waiting page why, in the table's language (and the table, ``say``)."""
        params = {"player": self.table.name_of(request.seat)}
        text = self.narrate(key, params, self.table.lang).text
        outs: list[Out] = [ShellSay((Say(key, params),))] if say else []
        return [*outs, Command("pair_failed", {"seat": request.seat, "nonce": request.nonce, "error": error,
                                               "reason": reason, "text": text}, seat_audience(request.seat))]

    def tap(self, seat: str) -> Proof | None:
        """Is this player-card tap the proof a waiting phone asked for?  None:
        an ordinary tap.  Only if the table would refuse the tap: a card the
        game takes now goes to the game, and the window stays open."""
        request, until = self._waiting.get(seat, (None, 0.0))
        if request is None or self.now() > until or self.table.eyes_closed:
            return None
        if self._table_takes(Tap(f"player/{seat}")):
            return None
        del self._waiting[seat]
        try:
            stored = request.commit() if request.commit is not None else True
        except OSError as e:
            return Proof(seat, request, [Emit("error", LOG, {"message": f"the pairing of {seat} was not stored: {e}"}),
                                         *self.failed(request, "not_saved", "pairing.refuse.not_saved",
                                                      "could not save", say=True)])
        if not stored:
            return None  # the phone stopped waiting: the card is an ordinary tap again
        return Proof(seat, request, [], Housekeeping("paired", {"seat": seat}),
                     replaced=seat in self.table.state.paired)

    def settled(self, proof: Proof) -> list[Out]:
        """After the ``paired`` input: durable (the seat is paired), or the
        phone is told to ask again and its stored secret is undone."""
        seat, request = proof.seat, proof.request
        if proof.housekeeping is None:
            return []
        if seat not in self.table.state.paired:  # not durable (said aloud already): the phone asks again
            if request.undo is not None:
                request.undo()
            return self.failed(request, "not_saved", "pairing.refuse.not_saved", "could not save")
        name = self.table.name_of(seat)
        # a seat is never taken over silently: its earlier phone stops being its page
        outs: list[Out] = [Say("pairing.replaced", {"player": name})] if proof.replaced else []
        return [*outs, Emit("paired", fields={"player": name}), Command("feedback", {"ok": True}),
                Command("paired", {"seat": seat, "nonce": request.nonce}, seat_audience(seat))]

    def _table_takes(self, tap: Tap) -> bool:
        """Would the table accept ``tap`` now?  Asked of a copy (the table is
        pure: a copy handles it exactly as the table would, and is dropped)."""
        try:
            copy.deepcopy(self.table).handle(tap)
        except Refusal:
            return False
        return True
