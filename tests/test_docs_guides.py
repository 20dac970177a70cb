"""The player guides (docs/play/ and each game's guide, both languages) are for the people at
the table: no script syntax (a YAML block, `tap:` or `submit: {…}`, the event log's and the
results' field names) and no design rationale ("Why a page and not a button", what we chose
and why). Those live on the Reference and Develop pages (reference/at-the-table.md,
develop/scripts.md, reference/speech.md)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from companion.games import GAMES

ROOT = Path(__file__).resolve().parent.parent


def guides() -> list[Path]:
    folders = [Path(sys.modules[g.__module__].__file__ or "").parent / "guide" for g in GAMES]
    return sorted((ROOT / "docs" / "play").glob("index*.md")) + [f / n for f in folders for n in ("en.md", "ja.md")]


FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
YAML_LINE = re.compile(r"^\s*(?:- )?[\w./-]+:(?:\s|$)", re.M)
INLINE = re.compile(r"`([^`\n]+)`")
SCRIPT_WORDS = [
    re.compile(r"^[\w./-]+:(?:\s|$)"),  # a YAML key: `tap: …`, `pause: 1`, `games.x.y: z`
    re.compile(r"[{}]"),  # a YAML/JSON mapping: `submit: {player: red}`
    re.compile(r"\b[a-z]+_[a-z_]+\b"),  # a field or setting name: `onw_result`, `final_roles`, `window_s`
]
RATIONALE = {
    "en.md": [r"(?:^|[.:!?]\s+)Why\b[^.?]*[:?]", r"\b[Ww]e\b", r"\bour\b", r"\ba script(?:'s)?\b", r"\brationale\b"],
    "ja.md": [r"台本", r"私たち", r"にしました", r"合わせました", r"置いています", r"設計"],
}


def _language(page: Path) -> str:
    return "ja.md" if page.name.endswith("ja.md") else "en.md"


@pytest.mark.parametrize("page", guides(), ids=lambda p: str(p.relative_to(ROOT)))
def test_finding_a_player_guide_holds_no_script_syntax(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for lang, block in FENCE.findall(text):
        assert lang not in ("yaml", "yml", "json", "python"), f"{page.name}: a ```{lang} block"
        assert not YAML_LINE.search(block), f"{page.name}: a script in a code block: {block.splitlines()[0]!r}"
    prose = FENCE.sub("", text)
    found = [code for code in INLINE.findall(prose) if any(p.search(code) for p in SCRIPT_WORDS)]
    assert found == [], f"{page.relative_to(ROOT)}: script syntax for the Reference pages: {found}"


@pytest.mark.parametrize("page", guides(), ids=lambda p: str(p.relative_to(ROOT)))
def test_finding_a_player_guide_holds_no_design_rationale(page: Path) -> None:
    prose = INLINE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    found = [m.group(0) for p in RATIONALE[_language(page)] for m in re.finditer(p, prose, re.M)]
    assert found == [], f"{page.relative_to(ROOT)}: the makers' reasons, for the Develop pages: {found}"


def test_the_scan_finds_what_it_looks_for() -> None:
    """The patterns catch what the guides held before (and a plain guide line passes)."""
    assert any(p.search("submit: {player: red, vote: blue}") for p in SCRIPT_WORDS)
    assert any(p.search("tap: player/red") for p in SCRIPT_WORDS)
    assert any(p.search("onw_result") for p in SCRIPT_WORDS)
    assert not any(p.search(c) for p in SCRIPT_WORDS for c in ("onw/villager/1", "next", "rules/ultimate"))
    assert re.search(RATIONALE["en.md"][0], "is taken. Why a page and not a button: the panel")
    assert YAML_LINE.search("- tap: player/red\n")
