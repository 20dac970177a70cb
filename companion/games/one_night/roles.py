"""One Night's roles and editions: each role is one entry of ``ROLES``.

A role's entry holds everything the game knows of it: its team, the set of
cards each edition's box holds of it, where it wakes in each edition's night
(none: it never wakes), what a doppelganger who copied it does, how the
verdict counts it, the tags it is read from, and the folder of its lines
(its names and its night lines in every language; the game's own roles have
theirs in the game's ``lines/``).  Adding a role is one ``register`` of one
entry (its tests/test_one_night_roles.py adds one from a module of its own).

Line keys a role's entry implies (``<p>`` is the edition's prefix: ``onw``
for ``jinrou``, ``onw.ultimate`` for ``ultimate``): ``name.<id>`` (and
``name.<spoken>`` where an edition names it otherwise), ``tag.onw/<id>/<n>``,
``<p>.<key>.wake``/``.sleep`` where it wakes (``<key>``: ``key_of(<id>)``), ``<p>.<key>.doppelganger.wake``/
``.sleep`` for the doppelganger's sub-step (``doppel`` "after"/"end"),
``<p>.<key>.with`` said in its ``pack``'s turn, ``name.artifact/<id>`` and
``tag.onw/artifact/<id>`` for Daybreak's tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

TEAMS = ("village", "werewolf", "tanner")


@dataclass(frozen=True)
class Role:
    id: str
    team: str  # village | werewolf | tanner (each tanner alone)
    sets: Mapping[str, int]  # edition → cards of it in that edition's box (absent: not in it)
    wake: Mapping[str, float] = field(default_factory=dict)  # edition → its place in the night
    # What a doppelganger who copied it does: "now" (acts in the doppelganger's own
    # turn), "with" (wakes again with them), "after" (a sub-step right after the
    # doppelganger's turn), "end" (a sub-step right after the role's own turn); "" nothing.
    doppel: str = ""
    # edition → more lines of its wake beat, after its wake line (``<p>.<key>.<more>``)
    wake_more: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    werewolf: bool = False  # a werewolf for the verdict (rule 2a/3: "a player holds a werewolf")
    dies_to_win: bool = False  # wins alone iff it dies (the tanner; denies the werewolf team)
    minion: bool = False  # on the werewolf team without being a werewolf (minion, madman): rules 3, 5, 6
    hunter: bool = False  # takes the player it voted for with it when it dies
    spoken: Mapping[str, str] = field(default_factory=dict)  # edition → its name there (``name.<spoken>``)
    # edition → other tags read there as this role's first card (ultimate's onw/robber/1)
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    lines: str | None = None  # the path of a folder of its lines (<lang>.yaml) outside the game's own (no I/O here)
    # The role whose turn it wakes in too (Daybreak's wolves: "werewolf"): that turn is
    # called when the deck holds either, and says this role's ``<p>.<key>.with`` line.
    pack: str = ""
    box: str = ""  # the box its card comes in when it is not its editions' own (``daybreak``)
    extra: int = 0  # cards the deck holds beyond the players' and the centre's (the alpha wolf's centre werewolf card)
    bodyguard: bool = False  # the player it voted for cannot die (rule 11)
    investigator: bool = False  # becomes the werewolf or tanner it saw (rule 9: the PI)

    @property
    def copies(self) -> int:
        """Cards with a tag of their own: the most any edition's box holds."""
        return max(self.sets.values())


@dataclass(frozen=True)
class Edition:
    id: str
    prefix: str  # its night lines' keys: ``<prefix>.<role>.wake``
    centre: tuple[int, ...]  # cards that lie in the centre
    players: tuple[int, int]
    default_decks: Mapping[int, Mapping[str, int]]
    # a deck needs these roles in pairs or not at all ([ruling] masons come in pairs)
    pairs: tuple[str, ...] = ()
    short: Mapping[int, tuple[int, ...]] = field(default_factory=dict)  # players → fewer centre cards allowed too

    def centre_for(self, players: int) -> tuple[int, ...]:
        """The centre a tapped deck may leave for ``players`` (rule 7: jinrou's 7 players, 1 too)."""
        return (*self.centre, *self.short.get(players, ()))

    @property
    def any_centre(self) -> tuple[int, ...]:
        """The centre a config's deck may leave at any count (the composition is configurable)."""
        return tuple(sorted({*self.centre, *(c for cs in self.short.values() for c in cs)}))


ROLES: dict[str, Role] = {}
T = TypeVar("T")


def register(role: Role) -> Role:
    """Adds a role (or replaces one of the same id): every deck, night, tag,
    verdict and the game's cards and settings (``Registered``) read ``ROLES`` when asked."""
    ROLES[role.id] = role
    return role


class Registered(Generic[T]):
    """A class attribute made from ``ROLES`` when it is read (the game's cards,
    its settings), so a role registered from a module of its own is in it
    without anyone setting the class afterwards.  Made once per set of roles
    (the read side asks for the cards at every input), and the same value for
    the same roles again: the config's schema, taken once, stays equal to it."""

    def __init__(self, make: Callable[[], T]) -> None:
        self.make = make
        # the roles' ids → (the roles, kept so no id is reused; what was made of them)
        self._made: dict[tuple[int, ...], tuple[tuple[Role, ...], T]] = {}

    def __get__(self, instance: object, owner: type | None = None) -> T:
        roles = tuple(ROLES.values())
        made = self._made.get(key := tuple(map(id, roles)))
        if made is None:
            made = self._made[key] = (roles, self.make())
        return made[1]


_J, _U, _D = "jinrou", "ultimate", "daybreak"
# In the order a deck is announced: the seed's four first (its listing), then the rest.
for _role in (
    Role("villager", "village", {_J: 4, _U: 3}),
    Role("werewolf", "werewolf", {_J: 2, _U: 2}, {_J: 2, _U: 2}, doppel="with", werewolf=True,
         wake_more={_U: ("lone",)}),  # a lone werewolf may look at a centre card,
    Role("seer", "village", {_J: 1, _U: 1}, {_J: 1, _U: 5}, doppel="now"),
    Role("thief", "village", {_J: 1, _U: 1}, {_J: 3, _U: 6}, doppel="now", spoken={_U: "robber"},
         aliases={_U: ("onw/robber/1",)}),
    Role("madman", "werewolf", {_J: 1}, minion=True),
    Role("tanner", "tanner", {_J: 1, _U: 1}, dies_to_win=True),
    Role("doppelganger", "village", {_U: 1}, {_U: 1}),  # its team is the copied role's
    Role("minion", "werewolf", {_U: 1}, {_U: 3}, doppel="after", minion=True),
    Role("mason", "village", {_U: 2}, {_U: 4}, doppel="with"),
    Role("troublemaker", "village", {_U: 1}, {_U: 7}, doppel="now"),
    Role("drunk", "village", {_U: 1}, {_U: 8}, doppel="now"),
    Role("insomniac", "village", {_U: 1}, {_U: 9}, doppel="end"),
    Role("hunter", "village", {_U: 1}, hunter=True),
    # Daybreak (rules: *Daybreak*): its roles join ultimate's pool.  Wake places between
    # two published ones are fractions (2B = 2.2, 2C = 2.4, 5B, 5C, 6B, 7B).
    Role("sentinel", "village", {_U: 1}, {_U: 0}, doppel="now", box=_D),
    Role("alpha-wolf", "werewolf", {_U: 1}, {_U: 2.2}, doppel="end", werewolf=True, pack="werewolf", extra=1, box=_D),
    Role("mystic-wolf", "werewolf", {_U: 1}, {_U: 2.4}, doppel="end", werewolf=True, pack="werewolf", box=_D),
    Role("dream-wolf", "werewolf", {_U: 1}, werewolf=True, pack="werewolf", box=_D),  # never wakes: a thumb
    Role("apprentice-seer", "village", {_U: 1}, {_U: 5.2}, doppel="now", box=_D),
    Role("pi", "village", {_U: 1}, {_U: 5.4}, doppel="now", investigator=True, box=_D),
    Role("witch", "village", {_U: 1}, {_U: 6.2}, doppel="now", box=_D),
    Role("village-idiot", "village", {_U: 1}, {_U: 7.2}, doppel="now", box=_D),
    Role("revealer", "village", {_U: 1}, {_U: 10}, doppel="end", box=_D),
    Role("curator", "village", {_U: 1}, {_U: 11}, doppel="end", box=_D),
    Role("bodyguard", "village", {_U: 1}, bodyguard=True, box=_D),
):
    register(_role)


def _grow(base: dict[str, int], *more: str) -> dict[int, dict[str, int]]:
    """[ruling 8] ultimate's default decks: 3 players' deck, then one role more a player."""
    decks, deck = {}, dict(base)
    for n, role in zip(range(3, 11), ("", *more), strict=True):
        if role:
            deck = {**deck, role: deck.get(role, 0) + 1}
        decks[n] = deck
    return decks


EDITIONS: dict[str, Edition] = {
    # 4 players: 2 villagers, 2 werewolves, 1 seer, 1 thief; each extra player one more villager.
    # [ruling] the set has 4 villagers: 3 players get 1, 7 players keep 4 and only 1 centre card.
    _J: Edition(_J, "onw", (2,), (3, 7),
                {n: {"villager": v, "werewolf": 2, "seer": 1, "thief": 1}
                 for n, v in {3: 1, 4: 2, 5: 3, 6: 4, 7: 4}.items()}, short={7: (1,)}),
    _U: Edition(_U, "onw.ultimate", (3,), (3, 10),
                _grow({"werewolf": 2, "seer": 1, "thief": 1, "troublemaker": 1, "villager": 1},
                      "drunk", "insomniac", "minion", "hunter", "tanner", "villager", "doppelganger"),
                pairs=("mason",)),
}
DEFAULT_EDITION = _J

# [ruling] Daybreak's default decks (players + 3; + 1 at 10 with the alpha wolf): a
# rule card that deals them in ultimate's pool (``rules/daybreak``), not an edition.
DAYBREAK_DECKS = _grow({"werewolf": 1, "mystic-wolf": 1, "sentinel": 1, "apprentice-seer": 1, "witch": 1,
                        "revealer": 1}, "pi", "curator", "village-idiot", "bodyguard", "dream-wolf", "villager", "")
DAYBREAK_DECKS[10] = {**DAYBREAK_DECKS[9], "alpha-wolf": 1, "werewolf": 2}  # and the centre werewolf card
RULE_DECKS: dict[str, tuple[str, Mapping[int, Mapping[str, int]]]] = {"daybreak": (_U, DAYBREAK_DECKS)}

# Daybreak's artifact tokens (``onw/artifact/<id>``) → the role one makes its card's
# holder (rule 9: claw, brand, cudgel), or None: it changes no role (void, mask, shroud).
ARTIFACTS: dict[str, str | None] = {"claw": "werewolf", "brand": "villager", "cudgel": "tanner",
                                    "void": None, "mask": None, "shroud": None}


def artifact_tags() -> tuple[str, ...]:
    return tuple(f"onw/artifact/{a}" for a in ARTIFACTS)


def rule_cards() -> tuple[str, ...]:
    """The rule cards the game knows (``rules/<name>``): the editions but the
    default, and the rule decks."""
    return (*(e for e in EDITIONS if e != DEFAULT_EDITION), *RULE_DECKS)


def in_edition(edition: str) -> tuple[str, ...]:
    """The roles an edition's box holds, in announce order."""
    return tuple(r.id for r in ROLES.values() if r.sets.get(edition))


def card_ids(deck: Mapping[str, int]) -> tuple[str, ...]:
    """The role cards' identities (``onw/villager/1`` …) in this deck."""
    return tuple(f"onw/{role}/{i}" for role, n in deck.items() for i in range(1, n + 1))


def every_card() -> tuple[str, ...]:
    """Every role card's identity, the tags read as one, and the artifact
    tokens (the game's components)."""
    return tuple(dict.fromkeys((*card_ids({r.id: r.copies for r in ROLES.values()}),
                                *(a for r in ROLES.values() for tags in r.aliases.values() for a in tags),
                                *artifact_tags())))


def card_of(identity: str, edition: str | None = None) -> str:
    """A tag as the card it is: an alias (``onw/robber/1``) as its role's first
    card — in ``edition`` only where that edition reads it so (None: any)."""
    return next((f"onw/{r.id}/1" for r in ROLES.values() for e, tags in r.aliases.items()
                 if identity in tags and edition in (None, e)), identity)


def role_of(card: str) -> str:
    return card_of(card).split("/")[1]


def key_of(role: str) -> str:
    """A role's id as its line keys spell it: a key is dotted words of
    ``[a-z0-9_]`` (the event log's contract), so ``alpha-wolf`` is ``alpha_wolf``
    there — its tags and final roles keep the id itself."""
    return role.replace("-", "_")


def spoken(role: str, edition: str) -> str:
    """How the narration names ``role`` in ``edition`` (a ``name.<value>`` line)."""
    entry = ROLES.get(role)
    return entry.spoken.get(edition, role) if entry else role


def boxes() -> dict[str, tuple[str, ...]]:
    """The tags of each box a group may own, its own cards (rule card, role
    cards, tokens): ``one-night`` the Japanese box ワンナイト人狼 (the guide's
    *On the table*), ``one-night-ultimate`` Ultimate's base box (its robber
    card as ``onw/robber/1``), ``one-night-daybreak`` Daybreak's roles, the
    cards its default decks need besides them, and its artifact tokens."""
    def cards(edition: str, box: str) -> tuple[str, ...]:
        found = card_ids({r.id: r.sets[edition] for r in ROLES.values() if r.sets.get(edition) and r.box == box})
        return tuple(card_of_alias(c, edition) for c in found)

    needs = {r: max(deck.get(r, 0) for deck in DAYBREAK_DECKS.values()) for r in ROLES}
    daybreak = card_ids({r: n for r, n in needs.items() if n and ROLES[r].box != _D})
    return {"one-night": cards(_J, ""),
            "one-night-ultimate": (f"rules/{_U}", *cards(_U, "")),
            "one-night-daybreak": (f"rules/{_D}", *cards(_U, _D), *daybreak, *artifact_tags())}


def card_of_alias(card: str, edition: str) -> str:
    """A card as ``edition``'s box prints it: its role's alias there (ultimate's ``onw/robber/1``)."""
    role, _, n = card.removeprefix("onw/").partition("/")
    aliases = ROLES[role].aliases.get(edition, ())
    return aliases[0] if aliases and n == "1" else card
