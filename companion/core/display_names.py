"""Display names: what a player's paired page may call them tonight.

A display name is a person's, for the people reading a record: the finished
play's record (BG Stats' export, the MQTT ``play`` message) and so the
venue's league, which ranks people rather than seat colours.  It is *not* the
name the engines know a seat by (``players.names`` in the config): every
line, score and private page keeps finding its seat by that name, so no
display name can misroute a private line however it is spelt.

The rules are pure, like the table's: a name is refused (``Refusal``, with a
key the page shows in the table's language) when it is empty, longer than
``MAX_LEN``, holds a control or formatting character (a right-to-left override
would garble every board that shows it), or is another seat's id, name or
display name in any case, width or spacing (``fold``: the venue's test of
"one person" too, venue/schema.py and venue/league.py call it).  What it is checked against is only what the
journal holds (the settings in force, tonight's seats, pairings and display
names), so a replay decides exactly as the first run did.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping

from companion.core.events import Refusal

MAX_LEN = 24  # a phone's line and a TV board's column; the venue takes up to 64
# control, formatting, surrogate, private-use, unassigned, line and paragraph separators
_BANNED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def clean(name: str) -> str:
    """As a display name is kept: composed (NFC) and without the spaces around it."""
    return unicodedata.normalize("NFC", name).strip()


def fold(name: str) -> str:
    """Who a name is: what two names are compared by, here and at the venue
    (its league's person, venue/league.py).  "Aki", "AKI", full-width "ＡＫＩ"
    and "Al ice" / "Al  ice" / " Al ice" are one: NFKC, every run of white
    space one space, trimmed, casefolded."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def problem(name: str, others: Iterable[str]) -> Refusal | None:
    """Why ``name`` (already ``clean``) cannot be a display name, or None.
    ``others``: every other seat's id, engine name and display name."""
    if not name:
        return Refusal("display.refuse.empty", "a display name cannot be empty")
    if len(name) > MAX_LEN:
        return Refusal("display.refuse.too_long", f"a display name has at most {MAX_LEN} characters", high=MAX_LEN)
    if any(unicodedata.category(c) in _BANNED for c in name):
        return Refusal("display.refuse.control", "a display name holds printable characters only")
    if fold(name) in {fold(o) for o in others}:
        return Refusal("display.refuse.taken", f"{name!r} is another seat's name", name=name)
    return None


def record_names(seats: Iterable[str], engine_names: Mapping[str, str],
                 chosen: Mapping[str, str]) -> dict[str, str]:
    """Each seat's name in a play's record: its display name where it has one,
    else its engine name.  A display name that would share its fold with
    another seat's record name (the config renamed a seat after the name was
    chosen) falls back to its engine name, so a record never names one person
    twice (the venue would refuse it); engine names are one per seat already."""
    seats = list(seats)
    shown = {s: chosen.get(s, engine_names[s]) for s in seats}
    while True:
        folds = [fold(shown[s]) for s in seats]
        clash = next((s for s, f in zip(seats, folds, strict=True)
                      if folds.count(f) > 1 and shown[s] != engine_names[s]), None)
        if clash is None:
            return shown
        shown[clash] = engine_names[clash]
