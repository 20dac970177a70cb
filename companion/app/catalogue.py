"""What the shell learns of the games, all of it from each game's folder.

A game is one folder — the package holding its engine — and one entry in
``companion.games.GAMES``.  Its name in each language (``name.game/<id>``),
its steps as the pages name them (``step.<id>.<step>``) and everything it
says are the lines in its folder (``lines/<lang>.yaml``); its tags, rule
cards, events and how the export scores it are its engine's.  The shell —
the voice, the pages, the export, the core's tags — names no game: it is
handed what it needs from here, by the app.

Every function reads ``GAMES`` when called (``games``: another list, a test's).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import companion.games
from companion.core.engine import Engine
from companion.core.tags import LANGUAGES

Lines = Callable[[str], Mapping[str, tuple[str, str]]]  # lang → key → (text, reading)
FALLBACK = "en"


def _games(games: Iterable[type[Engine]] | None) -> tuple[type[Engine], ...]:
    return tuple(companion.games.GAMES if games is None else games)


def folder(game: type[Engine]) -> Path:
    """A game's folder: the one its engine's module is in."""
    return Path(inspect.getfile(game)).resolve().parent


def game_line_folders(games: Iterable[type[Engine]] | None = None) -> dict[str, Path]:
    """Each game's folder of lines (``<folder>/lines``), by game, where it has one."""
    return {g.game: folder(g) / "lines" for g in _games(games) if (folder(g) / "lines").is_dir()}


def line_folders(games: Iterable[type[Engine]] | None = None) -> tuple[Path, ...]:
    """The table's lines: the shared folder (the table's own), then each game's,
    then the folders a game's parts bring from outside its folder (``more_lines``)."""
    from voice.lines import LINES_DIR

    return (LINES_DIR, *game_line_folders(games).values(),
            *dict.fromkeys(Path(p) for g in _games(games) for p in g.more_lines()))


def narrator(games: Iterable[type[Engine]] | None = None) -> Any:
    """The narrator of these games' table (``voice.lines.Narrator``)."""
    from voice.lines import Narrator

    return Narrator(line_folders(games))


def _text(lines: Lines, lang: str, key: str) -> str | None:
    entry = lines(lang).get(key) or lines(FALLBACK).get(key)
    return entry[0] if entry else None


def name(lines: Lines, game: str, lang: str) -> str:
    """A game's name in ``lang`` (its ``name.game/<id>`` line; else English; else its id)."""
    return _text(lines, lang, f"name.game/{game}") or game


def box_name(lines: Lines, box: str, lang: str) -> str:
    """A box of tags' name in ``lang`` (its ``name.box/<name>`` line; else its game's name)."""
    return _text(lines, lang, f"name.box/{box}") or name(lines, box, lang)


def tag_label(lines: Lines, identity: str, lang: str) -> str:
    """What a tag is called on its label and in ``companion tags``: its
    ``tag.<identity>`` line (never spoken) from the folder of whoever owns
    it; a game's card by the game's name; an extra player's by its name."""
    if text := _text(lines, lang, f"tag.{identity}"):
        return text
    kind, _, rest = identity.partition("/")
    if kind == "game":
        return name(lines, rest, lang)
    return rest if kind == "player" else identity


def page_games(lines: Lines, games: Iterable[type[Engine]] | None = None,
               langs: Iterable[str] = LANGUAGES) -> dict[str, dict[str, dict[str, Any]]]:
    """What the pages name the games by (``/api/games``): by language, each
    game's name and its steps' labels; a step without a label is shown as
    its id by the page.  ``confirm``: the question a page asks before it sends
    a field that cannot be taken back (``confirm.<game>.<field>`` lines, a
    ``.one`` variant for an amount of 1; ``{to}``, ``{gems}``, ``{n}`` filled there).
    ``clock``: the keys of its lines that tell the time left (``Engine.clock_lines``):
    a page shows its countdown instead of them while one runs.  ``no_points``: a side
    wins with no totals to rank the rest by (``Engine.no_points``): a page lists
    each player as won or lost, never "place 4".  ``points``: what its totals are called
    (a ``points.<game>`` line: Demagogos' "VP"), the word its speech uses; else the page's "Total"."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for lang in langs:
        out[lang] = {}
        for g in _games(games):
            steps = {step: label for step in g.STEPS if (label := _text(lines, lang, f"step.{g.game}.{step}"))}
            prefix = f"confirm.{g.game}."
            keys = {k for k in (*lines(FALLBACK), *lines(lang)) if k.startswith(prefix)}
            confirm = {k.removeprefix(prefix): _text(lines, lang, k) for k in sorted(keys)}
            out[lang][g.game] = {"name": name(lines, g.game, lang), "steps": steps,
                                 **({"confirm": confirm} if confirm else {}),
                                 **({"clock": list(g.clock_lines)} if g.clock_lines else {}),
                                 **({"no_points": True} if g.no_points else {}),
                                 **({"points": points} if (points := _text(lines, lang, f"points.{g.game}")) else {})}
    return out


def export_games(lines: Lines, games: Iterable[type[Engine]] | None = None) -> dict[str, Any]:
    """How the export (BG Stats, ``web.bgstats``) files each game: its English
    name, and how it is scored (the engine's ``highest_wins``, ``no_points``)."""
    from web.bgstats import ExportGame

    return {g.game: ExportGame(name(lines, g.game, "en"), g.highest_wins, g.no_points) for g in _games(games)}


def venue_wire(games: Iterable[type[Engine]] | None = None) -> dict[str, Any]:
    """The wire a venue reads (venue/wire.json, ``tools/venue_wire.py`` writes it):
    every event a table may publish with its fields and each game's rating
    (``core.wire.as_data`` of the manifests), and, by language, each game's
    name and its steps' labels (as the pages have them) — so the venue checks
    and names every game knowing none of them."""
    from companion.core import wire

    manifests = companion.games.manifests(_games(games))
    pages = page_games(narrator(games).lines, games)
    return {**wire.as_data(wire.events(manifests), {m.id: m.rating for m in manifests}),
            "games": {lang: {g: {"name": p["name"], "steps": p["steps"]} for g, p in by.items()}
                      for lang, by in pages.items()}}
