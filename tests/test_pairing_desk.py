"""The pairing desk (companion/runtime/pairing.py): it decides a phone's pairing and
hands back outputs and the ``paired`` housekeeping input — tried here on the
desk and a pure table alone, with no loop to call back into."""

from __future__ import annotations

import copy
from typing import Any

from companion.app.catalogue import narrator
from companion.core.events import Housekeeping, Press, Say, Tap
from companion.core.messages import Claim, Command, PairRequest, seat_audience
from companion.core.table import PAGES_ON, PAIRING, Table
from companion.games import ENGINES
from companion.runtime.outputs import Emit, ShellSay
from companion.runtime.pairing import PairingDesk, Proof

SIX = ("red", "blue", "green", "yellow", "purple", "orange")


class Now:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def waiting_table() -> Table:
    """Demagogos' Trap seated, waiting for the phones (a player's card is refused: it can be proof)."""
    t = Table(ENGINES, pages=PAGES_ON)
    for identity in ("game/demagogos", *(f"player/{s}" for s in SIX)):
        t.handle(Tap(identity))
    t.handle(Press("next"))
    assert t.state.phase == PAIRING
    return t


def desk(table: Table, now: Now | None = None) -> PairingDesk:
    return PairingDesk(table, narrator(ENGINES.values()), now or Now(), window_s=30.0)


def failed(outs: list[Any]) -> list[str]:
    return [str(o.args["error"]) for o in outs if isinstance(o, Command) and o.name == "pair_failed"]


def test_a_request_is_a_prompt_the_night_never_hears_and_the_desk_changes_no_table() -> None:
    table = waiting_table()
    before = copy.deepcopy(table.state)
    outs = desk(table).request(PairRequest("red", "n1"))
    assert outs == [ShellSay((Say("pairing.tap_card", {"player": "red"}),))]
    assert table.state == before


def test_the_first_phone_holds_the_seat_until_its_window_closes() -> None:
    now = Now()
    d = desk(waiting_table(), now)
    d.request(PairRequest("red", "n1"))
    assert failed(d.request(PairRequest("red", "n2"))) == ["busy"]
    now.t = 31.0
    assert isinstance(d.request(PairRequest("red", "n3"))[0], ShellSay)


def test_a_withdrawn_first_phone_holds_nothing() -> None:
    d = desk(waiting_table())
    claim = Claim()
    d.request(PairRequest("red", "n1", claim=claim))
    claim.withdraw()
    assert isinstance(d.request(PairRequest("red", "n2"))[0], ShellSay)


def test_prompts_are_limited_table_wide() -> None:
    d = desk(waiting_table())
    d.prompts_per_min = 3
    answers = [d.request(PairRequest(seat, f"n{seat}")) for seat in SIX]
    assert sum(isinstance(a[0], ShellSay) for a in answers) == 3
    assert [e for a in answers for e in failed(a)] == ["too_many"] * 3


def test_an_unknown_seat_is_refused_with_a_line_in_the_tables_language() -> None:
    outs = desk(waiting_table()).request(PairRequest("nobody", "n1"))
    assert failed(outs) == ["no_seat"] and outs[0].args["text"] and outs[0].audience == seat_audience("nobody")


def test_a_card_proves_the_waiting_phone_stored_first_then_the_paired_input() -> None:
    table = waiting_table()
    d = desk(table)
    stored: list[str] = []
    d.request(PairRequest("red", "n1", commit=lambda: stored.append("red") or True))
    proof = d.tap("red")
    assert isinstance(proof, Proof) and stored == ["red"]
    assert proof.outs == [] and proof.housekeeping == Housekeeping("paired", {"seat": "red"})
    assert d.tap("red") is None  # the window is spent: a second tap is an ordinary tap
    table.handle(proof.housekeeping)  # what the loop journals
    settled = d.settled(proof)
    assert Emit("paired", fields={"player": "red"}) in settled
    assert Command("paired", {"seat": "red", "nonce": "n1"}, seat_audience("red")) in settled


def test_a_pairing_the_journal_did_not_keep_is_undone_and_the_phone_told() -> None:
    table = waiting_table()
    d = desk(table)
    undone: list[bool] = []
    d.request(PairRequest("red", "n1", undo=lambda: undone.append(True)))
    proof = d.tap("red")
    assert proof is not None
    # the loop's journal failed: the table was rebuilt without the input
    assert failed(d.settled(proof)) == ["not_saved"] and undone == [True]


def test_a_secret_that_could_not_be_stored_is_said_and_nothing_journaled() -> None:
    def broken() -> bool:
        raise OSError("disk full")
    d = desk(waiting_table())
    d.request(PairRequest("red", "n1", commit=broken))
    proof = d.tap("red")
    assert proof is not None and proof.housekeeping is None
    assert failed(proof.outs) == ["not_saved"]
    assert ShellSay((Say("pairing.refuse.not_saved", {"player": "red"}),)) in proof.outs


def test_a_card_the_game_takes_goes_to_the_game_and_the_window_stays_open() -> None:
    table = Table(ENGINES, pages=PAGES_ON)
    table.handle(Tap("game/madness-hour"))  # gathering: a player's card seats the player
    d = desk(table)
    d.request(PairRequest("red", "n1"))
    assert d.tap("red") is None  # the dry run: the table would take it
    assert table.state.seats == []  # asked of a copy
