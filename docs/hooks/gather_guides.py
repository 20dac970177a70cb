"""Gather each game's guide into the docs site.

A game's guide lives in the game's own folder (``companion/games/<folder>/guide/en.md`` and
``ja.md``, pictures beside them), so a new game brings its guide with it. Before the site's files
are collected this hook copies them to ``docs/play/<game-id>.md`` and ``<game-id>.ja.md`` (the
i18n plugin's suffix layout; the copies are git-ignored) and appends each guide to the *Play*
section of the nav, titled by its first heading. The games and their order come from the list of
games (``companion.games.GAMES``), so the one line that adds a game adds its guide. Copies are rewritten only when they differ, so
``mkdocs serve`` (which watches both folders) does not rebuild in a loop.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PLAY = ROOT / "docs" / "play"
SUFFIX = {"en": "", "ja": ".ja"}


def guides() -> list[tuple[str, Path]]:
    """(game id, guide folder) for every game that has a guide, in the list of games' order."""
    sys.path.insert(0, str(ROOT))
    from companion.games import GAMES

    folders = [(game.game, Path(sys.modules[game.__module__].__file__ or "").parent / "guide") for game in GAMES]
    return [(game, folder) for game, folder in folders if (folder / "en.md").is_file()]


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise ValueError(f"{path}:1: a guide starts with a '# ' title")


def _copy(source: Path, target: Path) -> None:
    if not target.exists() or target.read_bytes() != source.read_bytes():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def on_config(config: Any) -> Any:
    for game, folder in guides():
        for path in sorted(folder.iterdir()):
            if path.suffix == ".md" and path.stem in SUFFIX:
                _copy(path, PLAY / f"{game}{SUFFIX[path.stem]}.md")
            elif path.suffix in (".png", ".svg", ".jpg"):
                _copy(path, PLAY / game / path.name)  # a guide links its pictures as <game-id>/<name>
    for section in config["nav"]:
        if isinstance(section, dict) and "Play" in section:
            # the i18n plugin runs the build once per language with the same config: add each guide once
            listed = {path for entry in section["Play"] for path in entry.values()}
            section["Play"].extend({_title(folder / "en.md"): f"play/{game}.md"}
                                   for game, folder in guides() if f"play/{game}.md" not in listed)
    # the Japanese nav names each guide by its Japanese title (the i18n plugin configures itself after us)
    for language in config["plugins"]["i18n"].config["languages"]:
        if language["locale"] != "en":
            for _, folder in guides():
                translated = folder / f"{language['locale']}.md"
                if translated.is_file():
                    language["nav_translations"][_title(folder / "en.md")] = _title(translated)
    return config
