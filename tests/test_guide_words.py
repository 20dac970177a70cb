"""The Japanese guides use the words the table speaks.

A player who read 魅了 in the guide hears 虜 at the table, 役職の競り in the guide and
役職オークション from the speaker: one name per thing. Each entry below is a word the game's
Japanese lines use (checked here against the lines) and the words for the same thing that
neither the lines, the board nor the guide may use. The rule sets and the game itself are
named in the guide as the lines name them (derived, not listed)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from companion.games import GAMES

# game → {the table's word: patterns of the words it replaces}
ONE_NAME = {
    "seven-knights": {"虜": [r"魅了"], "隊列": [r"陣形"]},
    "demagogos": {"役職オークション": [r"役職の(競り|入札)"], "手番オークション": [r"手番の(競り|入札)"],
                  "財宝": [r"(?<![財])宝(?![石])"], "空箱": [r"空っぽ", r"「空」|\*\*空\*\*"],
                  "オークション": [r"封印入札"]},
    "madness-hour": {"戦闘": [r"戦い"]},
}


def _folder(game: type) -> Path:
    return Path(sys.modules[game.__module__].__file__ or "").parent


def _lines(game: type) -> dict[str, str]:
    data = yaml.safe_load((_folder(game) / "lines" / "ja.yaml").read_text(encoding="utf-8"))
    return {key: (value["text"] if isinstance(value, dict) else value) for key, value in data.items()}


GAMES_BY_ID = {g.game: g for g in GAMES}
ROOT = Path(__file__).resolve().parent.parent


def japanese_pages() -> list[Path]:
    """Every Japanese page of the site: docs/**/*.ja.md and each game's guide."""
    pages = [p for p in (ROOT / "docs").rglob("*.ja.md")  # not the guides' copies the site's hook makes
             if p.parent.name != "play" or p.name.startswith("index")]
    return sorted(pages) + [_folder(g) / "guide" / "ja.md" for g in GAMES]


@pytest.mark.parametrize("game_id", sorted(ONE_NAME))
def test_the_japanese_guide_and_lines_use_one_name_per_thing(game_id: str) -> None:
    game = GAMES_BY_ID[game_id]
    lines = "\n".join(_lines(game).values())
    guide = (_folder(game) / "guide" / "ja.md").read_text(encoding="utf-8")
    for word, others in ONE_NAME[game_id].items():
        assert word in lines, f"{game_id}: the lines never say {word}"
        assert word in guide, f"{game_id}: the guide never says {word}, as the table does"
        for pattern in others:
            assert not re.search(pattern, lines), f"{game_id}: the lines say {pattern} beside {word}"
            assert not re.search(pattern, guide), (
                f"{game_id}: the guide says {re.search(pattern, guide).group(0)!r} where the table says {word}")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.game)
def test_the_japanese_guide_names_the_game_and_its_rule_sets_as_the_table_does(game: type) -> None:
    lines = _lines(game)
    guide = (_folder(game) / "guide" / "ja.md").read_text(encoding="utf-8")
    assert lines[f"name.game/{game.game}"] in guide
    named = [key for key in lines if key.startswith("name.") and key[5:] in game.known_rules()]
    for key in named:
        assert lines[key] in guide, f"the guide does not name the rule set {key[5:]} as the table does: {lines[key]}"


@pytest.mark.parametrize("page", japanese_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_finding_every_japanese_page_uses_the_table_s_words(page: Path) -> None:
    """Not only the guides: the home page named デマゴーゴスの罠's auctions 封印入札, a word the
    table never says (it says 役職オークション and 手番オークション); the words the table
    replaces appear on no Japanese page."""
    text = page.read_text(encoding="utf-8")
    for words in ONE_NAME.values():
        for word, others in words.items():
            for pattern in others:
                found = re.search(pattern, text)
                assert found is None, f"{page.relative_to(ROOT)} says {found.group(0)!r} where the table says {word}"


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.game)
def test_finding_the_japanese_nav_names_each_game_as_the_table_does(game: type) -> None:
    """A guide's title is its name in the Japanese nav: ミュルマミウスの虜 was listed as
    'ミュルマミウスの虜（Seven Knights Bewitched）', an English title in the Japanese nav."""
    title = (_folder(game) / "guide" / "ja.md").read_text(encoding="utf-8").splitlines()[0]
    assert title == f"# {_lines(game)[f'name.game/{game.game}']}"
