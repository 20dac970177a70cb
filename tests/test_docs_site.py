"""The docs site's sources: every game brings its guide in both languages, and the two
languages of a page have the same sections, so a link to a section works in either.
(`mkdocs build --strict`, run by .ci/run, checks the links and the nav.)"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from companion.games import GAMES

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
ANCHOR = re.compile(r"^#+ .*\{#([\w-]+)\}\s*$", re.M)
KANA = re.compile(r"[\u3040-\u30ff]")


def guide(game: type) -> Path:
    return Path(sys.modules[game.__module__].__file__ or "").parent / "guide"


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.game)
def test_every_game_has_a_guide_in_english_and_japanese(game: type) -> None:
    for lang in ("en", "ja"):
        text = (guide(game) / f"{lang}.md").read_text(encoding="utf-8")
        assert text.startswith("# "), f"{game.game} {lang}: a guide starts with its title"
    assert KANA.search((guide(game) / "ja.md").read_text(encoding="utf-8"))


def pairs() -> list[tuple[Path, Path]]:
    found = [(p.with_name(p.name.replace(".ja.md", ".md")), p) for p in DOCS.rglob("*.ja.md")
             if "play" not in p.relative_to(DOCS).parts[:1] or p.name.startswith("index")]
    found += [(guide(g) / "en.md", guide(g) / "ja.md") for g in GAMES]
    return found


@pytest.mark.parametrize("en, ja", pairs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_has_the_same_sections_in_both_languages(en: Path, ja: Path) -> None:
    assert ANCHOR.findall(en.read_text(encoding="utf-8")) == ANCHOR.findall(ja.read_text(encoding="utf-8"))


# What a player or a hobbyist building a table reads is in both languages; the reference,
# integration and development pages are English only.
PLAYER_FACING = ("index.md", "build/*.md", "play/index.md")


def test_every_player_facing_page_has_its_japanese_page() -> None:
    english = [p for pattern in PLAYER_FACING for p in DOCS.glob(pattern) if not p.name.endswith(".ja.md")]
    assert len(english) >= 10
    missing = [str(p.relative_to(DOCS)) for p in english if not p.with_name(p.stem + ".ja.md").exists()]
    assert not missing


def _titles(nav: list) -> list[str]:
    out = []
    for entry in nav:
        if isinstance(entry, dict):
            for title, value in entry.items():
                out.append(title)
                if isinstance(value, list):
                    out.extend(_titles(value))
    return out


def test_finding_the_japanese_nav_has_no_english_titles() -> None:
    """The Japanese site's nav named 'Commands', 'Security', 'Architecture'… in English: every
    title of the nav has its Japanese name (the guides are named by their own Japanese title)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may hold !!python tags (Material's emoji); only the nav is read here
    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    ja = next(lang for lang in config["plugins"][1]["i18n"]["languages"] if lang["locale"] == "ja")
    missing = [t for t in _titles(config["nav"]) if t not in ja.get("nav_translations", {})]
    assert missing == []
