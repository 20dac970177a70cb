"""Tag identities (DESIGN.md contract) and how a read tag becomes one.

A tag names itself with an NDEF text record, or config maps its UID to an
identity.  Everything here is pure data and functions; the readers live in
``hardware``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping

from companion.core.events import Refusal, TagSeen

COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")
LANGUAGES = ("en", "ja")

# The table's own cards.  No game is named here: a game's card (``game/<game>``),
# its rule cards and its components come from its engine (companion/games),
# handed to whoever needs every identity by the app — so adding a game touches
# no line of the core.
PLAYER_CARDS = tuple(f"player/{c}" for c in COLOURS)
LANGUAGE_CARDS = tuple(f"lang/{lang}" for lang in LANGUAGES)


def table_sets(games: Iterable[str], rule_cards: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The table's sets of tags for these games: the players' cards, the
    games' cards, the rule cards (``rules/<name>``) and the language cards."""
    return {"players": PLAYER_CARDS, "games": tuple(f"game/{g}" for g in games),
            "cards": tuple(f"rules/{r}" for r in dict.fromkeys(rule_cards)) + LANGUAGE_CARDS}

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
_UID = re.compile(r"^[0-9A-F]{8,20}$")


def known_identities(extra_players: Iterable[str] = (), components: Iterable[str] = ()) -> frozenset[str]:
    """The table's own identities, the config's extra players' cards and the
    games' (``components``: their cards and components)."""
    ids = {*PLAYER_CARDS, *LANGUAGE_CARDS}
    ids.update(f"player/{p}" for p in extra_players)
    ids.update(components)
    return frozenset(ids)


def is_known(identity: str, extra_players: Iterable[str] = (), components: Iterable[str] = ()) -> bool:
    """True for every contract identity (the games' among ``components``);
    ``rules/<name>`` takes any well-formed name (games decide which they
    understand)."""
    if identity in known_identities(extra_players, components):
        return True
    kind, _, name = identity.partition("/")
    return kind == "rules" and bool(_NAME.match(name))


def normalise_uid(uid: str) -> str:
    """``04:a1:b2`` / ``04a1b2`` → ``04A1B2``."""
    return uid.replace(":", "").replace(" ", "").upper()


def valid_uid(uid: str) -> bool:
    return bool(_UID.match(normalise_uid(uid)))


def valid_player_name(name: str) -> bool:
    return bool(_NAME.match(name))


def identify(text: str | None, uid: str | None, tag_map: Mapping[str, str]) -> str | None:
    """The identity a tag carries: its NDEF text if it has one, else its UID
    through the tag map; None if neither says anything."""
    if text:
        return text.strip()
    if uid:
        return tag_map.get(normalise_uid(uid))
    return None


def recognise(seen: TagSeen, tag_map: Mapping[str, str], extra_players: Iterable[str] = (),
              extra_identities: Collection[str] = ()) -> str | tuple[str, Refusal]:
    """A tag seen as the identity it carries, or (its label, why it is
    refused): unreadable, or nothing this table knows (the games' cards,
    ``extra_identities``, beyond the contract's)."""
    label = seen.text or (f"uid:{normalise_uid(seen.uid)}" if seen.uid else "unknown")
    if seen.error:
        return label, Refusal("refuse.unreadable", f"unreadable tag: {seen.error}")
    identity = identify(seen.text, seen.uid, tag_map)
    if identity is None or not (is_known(identity, extra_players) or identity in extra_identities):
        return label, Refusal("refuse.unknown_tag", "unknown tag")
    return identity


# Tag text is written by whoever had the tag: printed, it must not drive the terminal.
def printable(text: str) -> str:
    """``text`` safe for a terminal: control and format characters (escape
    sequences, carriage returns, bidi overrides) shown as ``\\x1b``-style
    escapes, so a tag's text can neither move the cursor nor forge a line."""
    return "".join(c if unicodedata.category(c) not in _UNSAFE
                   else (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") for c in text)


_UNSAFE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}  # controls, format (bidi), unassigned, line breaks
