"""The games the companion hosts: one package each, listed here.

Adding a game is one package under ``companion/games/`` (its engine with its
steps, its ``components`` and its rule cards, its ``manifest`` — the events
it publishes and how a venue rates it —, its pure rules, its lines —
its name, its step labels and what it says, in every language — and its
``show`` of its own log events) and one line in ``GAMES``.  The core never
imports a game, and the shell (voice, web, the core's tags) names none:
whoever needs to know every game's tags, names or events gets them from
here, by the app (``companion/app``, the folders' files by
``companion.app.catalogue``).

``GAMES`` is read when it is needed, not copied when this is imported: the
functions here take it as it is then (a test may append a game to it).
"""

from __future__ import annotations

import importlib
import sys

from companion.core.engine import Engine
from companion.core.manifest import Manifest
from companion.core.tags import LANGUAGE_CARDS, PLAYER_CARDS, table_sets
from companion.games.demagogos import Demagogos
from companion.games.madness_hour import MadnessHour
from companion.games.one_night import OneNight
from companion.games.seven_knights import SevenKnights

GAMES: tuple[type[Engine], ...] = (SevenKnights, OneNight, MadnessHour, Demagogos)


def registry(games: tuple[type[Engine], ...] | None = None) -> dict[str, type[Engine]]:
    """The games by their id (``game/<id>``): ``GAMES`` as it is now."""
    return {g.game: g for g in (GAMES if games is None else games)}


def manifest(game: type[Engine]) -> Manifest:
    """A game's manifest: ``MANIFEST`` in the ``manifest`` module beside its
    engine (its folder's ``manifest.py``)."""
    package = sys.modules[game.__module__].__package__ or game.__module__
    found = getattr(importlib.import_module(f"{package}.manifest"), "MANIFEST", None)
    if not isinstance(found, Manifest) or found.id != game.game:
        raise TypeError(f"{package}.manifest: MANIFEST is not {game.game}'s manifest")
    return found


def manifests(games: tuple[type[Engine], ...] | None = None) -> tuple[Manifest, ...]:
    """Every game's manifest, in ``GAMES``' order (as it is now).  An engine
    written outside a game's folder (a test's own game, in a plain module)
    has none: it publishes nothing of its own.  A game's folder without its
    ``manifest.py`` is an error."""
    return tuple(manifest(g) for g in (GAMES if games is None else games) if _in_a_folder(g))


def _in_a_folder(game: type[Engine]) -> bool:
    return bool(sys.modules[game.__module__].__package__)


def component_sets(games: tuple[type[Engine], ...] | None = None) -> dict[str, tuple[str, ...]]:
    """Every set of tags a table may hold, by name: each game's components,
    then the table's own (players, the games' cards, their rule cards and
    the language cards)."""
    games = GAMES if games is None else games
    return {g.game: g.components for g in games} | table_sets(
        (g.game for g in games), (r for g in games for r in g.known_rules()))


def table_cards(extra_players: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The table's own cards every game is played with: the players' (and the
    config's extra players'), the languages'."""
    return (*PLAYER_CARDS, *(f"player/{p}" for p in extra_players), *LANGUAGE_CARDS)


def boxes(games: tuple[type[Engine], ...] | None = None,
          extra_players: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """Each box of tags a table may own, by name, in the order they are made:
    its game card, its own cards (rule cards, components), then the table's
    cards it is played with (the players', the config's extra players', the
    languages').  A game is one box named after it, unless its manifest
    module's ``boxes()`` names several (One Night: the Japanese box, Ultimate's,
    Daybreak); a card of the game none of them holds joins the game's own."""
    table = table_cards(extra_players)
    out: dict[str, tuple[str, ...]] = {}
    for g in (GAMES if games is None else games):
        own = (*(f"rules/{r}" for r in g.known_rules()), *g.components)
        declared = _declared_boxes(g)
        placed = {i for ids in declared.values() for i in ids}
        declared[g.game] = (*declared.get(g.game, ()), *(i for i in own if i not in placed))
        out |= {name: tuple(dict.fromkeys((f"game/{g.game}", *ids, *table))) for name, ids in declared.items()}
    return out


def _declared_boxes(game: type[Engine]) -> dict[str, tuple[str, ...]]:
    if not _in_a_folder(game):
        return {}
    package = sys.modules[game.__module__].__package__
    found = getattr(importlib.import_module(f"{package}.manifest"), "boxes", None)
    return {name: tuple(ids) for name, ids in found().items()} if callable(found) else {}


def tag_sets(games: tuple[type[Engine], ...] | None = None,
             extra_players: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """Every set of tags ``companion tags`` walks, by name: each game's box
    (``boxes``), the table's own sets (``component_sets``) and ``all``: every
    game's own cards, then the table's, each once."""
    games = GAMES if games is None else games
    own = boxes(games, extra_players)
    table = table_cards(extra_players)
    every = [i for ids in own.values() for i in ids if i not in table] + list(table)
    return own | {k: v for k, v in component_sets(games).items() if k not in own} | {"all": tuple(dict.fromkeys(every))}


def all_components(games: tuple[type[Engine], ...] | None = None) -> tuple[str, ...]:
    """Every game's component identities (the tags the reader may see besides the table's)."""
    return tuple(i for g in (GAMES if games is None else games) for i in g.components)


def identities(games: tuple[type[Engine], ...] | None = None) -> tuple[str, ...]:
    """Every identity the games bring to the table: their game cards and
    their components (rule cards are any ``rules/<name>``: core.tags)."""
    games = GAMES if games is None else games
    return tuple(f"game/{g.game}" for g in games) + all_components(games)


def __getattr__(name: str) -> dict[str, type[Engine]]:
    # ``ENGINES`` (the registry by id) is made from ``GAMES`` when asked for, so it is never stale.
    if name == "ENGINES":
        return registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
