"""The table's phase table: between games (``idle``), ``gathering`` (the
seating, a deck), ``pairing`` (the gate), ``playing``, ``confirm`` (a long
press of back waits for its answer) — what each takes, where each input
leads, what each refuses, says after a restart, adds to the headline and
offers.  Data only, as a game's ``STEPS`` (core/steps.py), run by the same
driver (core/driver.py): everything that moves the table's phase is here
(h11's ``_state.py``); the handlers are functions of the table in a module
per job."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from companion.core.driver import check_steps
from companion.core.events import Input, Refusal
from companion.core.steps import Take
from companion.core.table import confirm, housekeeping, pairing, play, seating, views
from companion.core.table.state import CONFIRM, GATHERING, IDLE, PAIRING, PLAYING, Phase

Refuse = Callable[[Any, str, Input], Refusal]


def _refusing(own: Refuse) -> Refuse:
    """A phase's refusal, after the two every phase shares: a housekeeping
    the table does not know, and a long press of back with no game to abandon."""
    def refusal(t: Any, kind: str, inp: Any) -> Refusal:
        if kind == "housekeeping":
            return housekeeping.unknown(inp)
        if kind == "hold-back":
            return Refusal("refuse.nothing_to_abandon", "no game to abandon")
        return own(t, kind, inp)
    return refusal


def _around(*game_ends: str) -> dict[str, Take]:
    """What every phase takes: the daemon's housekeeping (in force at once,
    or waiting for the table to be between games), a page's submit and a draw
    (the game's: it may end, ``game_ends``)."""
    to_engine = Take(play.to_engine, game_ends)
    return {"named": Take(housekeeping.named), "paired": Take(pairing.paired),
            "configure": Take(housekeeping.pend), "new-evening": Take(housekeeping.pend),
            "submit": to_engine, "draw": to_engine}


_LANG = Take(seating.language)
_GAME_CARD = Take(seating.game_card, (GATHERING,), seating.game_card_refusal)
# While a game plays everything but a language card or a game card is the game's: it may
# end (idle), or back before its first input unstarts it (back to the seating, or idle).
_GAME = Take(play.to_engine, (PLAYING, IDLE, GATHERING))
_ASK = Take(confirm.ask, (CONFIRM,), seating.quiet)  # the long press of back; not by night

PHASES: dict[str, Phase] = {
    IDLE: Phase({**_around(), "configure": Take(housekeeping.pend_and_apply),
                 "new-evening": Take(housekeeping.pend_and_apply), "lang": _LANG, "game": _GAME_CARD,
                 "next": Take(seating.again, (PLAYING, PAIRING), seating.no_last_game)},
                refusal=_refusing(seating.idle_refusal), resume=seating.idle_resume),
    GATHERING: Phase({**_around(), "lang": _LANG, "game": _GAME_CARD,
                      # back to the table before the last card: the seating, between games, or the
                      # pairing gate a game card left
                      "back": Take(seating.ungather, (IDLE, GATHERING, PAIRING), seating.nothing_to_undo),
                      "next": Take(seating.seated, (PLAYING, PAIRING), seating.start_refusal),
                      "rules": Take(seating.rules_card, (), seating.rules_refusal),
                      "player": Take(seating.seat, (), seating.seat_refusal),
                      "tap": Take(seating.setup_card, (), seating.setup_card_refusal)},
                     refusal=_refusing(seating.gathering_refusal), resume=seating.gathering_resume),
    PAIRING: Phase({**_around(), "paired": Take(pairing.paired_at_the_gate, (PAIRING, PLAYING)),
                    "configure": Take(housekeeping.configure_at_the_gate, (PAIRING, IDLE, GATHERING)),
                    "lang": _LANG, "game": _GAME_CARD, "back": Take(play.unstart, (IDLE, GATHERING))},
                   refusal=_refusing(pairing.pairing_refusal), resume=pairing.pairing_prompt,
                   headline=views.pairing_headline),
    PLAYING: Phase({**_around(PLAYING, IDLE), "hold-back": _ASK, "lang": Take(seating.language, (), seating.quiet),
                    **dict.fromkeys(("next", "back", "repeat", "button", "timer", "player", "rules", "tap"), _GAME)},
                   refusal=_refusing(play.playing_refusal), resume=play.playing_resume,
                   headline=views.playing_headline, legal=views.playing_legal),
    CONFIRM: Phase({**_around(CONFIRM, IDLE), "hold-back": _ASK, "timer": Take(play.to_engine, (CONFIRM, IDLE)),
                    "next": Take(confirm.confirmed, (PLAYING, IDLE)), "back": Take(confirm.cancelled, (PLAYING,))},
                   refusal=_refusing(confirm.refusal), prompt=confirm.prompt, resume=confirm.resume,
                   headline=views.confirm_headline, legal=views.answer_legal),
}
check_steps("Table", PHASES)
