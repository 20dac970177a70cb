"""The pictures of the label sheet the docs show are what `companion tags sheet` prints
today: each was made by tools/sheet_picture.py from the command's PDF, whose text is
stored beside it; a fresh PDF's text must be that text (no pixels compared)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from companion.app import tags_sheet

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import sheet_picture  # noqa: E402

needs_poppler_and_a_cjk_font = pytest.mark.skipif(
    shutil.which("pdftotext") is None or not any(p.is_file() for p in tags_sheet.CJK_FONTS),
    reason="poppler-utils and fonts-noto-cjk (test.sh installs them)")


def shown_sheets() -> set[str]:
    """Every picture of a sheet a docs page shows (docs/… and the games' guides)."""
    pages = [*(ROOT / "docs").rglob("*.md"), *(ROOT / "companion" / "games").glob("*/guide/*.md")]
    found = set()
    for page in pages:
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]*sheet[^)\s]*\.png)", page.read_text(encoding="utf-8")):
            found.add(str((page.parent / target).resolve().relative_to((ROOT / "docs").resolve())))
    return found


def test_every_sheet_picture_the_docs_show_is_made_by_the_tool() -> None:
    shown = shown_sheets()
    assert "build/sheet-one-night.png" in shown
    assert shown <= set(sheet_picture.SHEETS), shown - set(sheet_picture.SHEETS)


@needs_poppler_and_a_cjk_font
def test_finding_the_sheet_picture_shows_what_the_command_prints_today() -> None:
    for name in sheet_picture.SHEETS:
        source = sheet_picture.source_of(ROOT / "docs" / name)
        assert source.is_file(), f"docs/{name} says nothing of what it was made from: python tools/sheet_picture.py"
        assert "onw/villager/1" in source.read_text(encoding="utf-8") or "one-night" not in name
    assert sheet_picture.stale() == [], "python tools/sheet_picture.py makes them again"
