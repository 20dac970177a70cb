"""`companion tags sheet`: a printable PDF of labels whose text holds every
tag's identity and names, and a clear word (never a traceback) when it cannot."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from companion.app import catalogue, tags_sheet
from companion.app.cli import main
from companion.core.tags import LANGUAGES
from companion.games import GAMES, tag_sets

needs_pdftotext = pytest.mark.skipif(shutil.which("pdftotext") is None,
                                     reason="pdftotext (poppler-utils; test.sh installs it) is missing")
needs_cjk_font = pytest.mark.skipif(not any(p.is_file() for p in tags_sheet.CJK_FONTS),
                                    reason="Noto Sans CJK (fonts-noto-cjk; test.sh installs it) is missing")


def pdf_text(path: Path) -> str:
    return subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True,
                          timeout=60).stdout


@needs_pdftotext
@needs_cjk_font
@pytest.mark.parametrize("game", [*(g.game for g in GAMES), "all"])
def test_the_sheet_holds_every_identity_of_the_set_with_its_names(game: str, tmp_path: Path, capsys) -> None:
    sheet = tmp_path / f"{game}.pdf"
    assert main(["tags", "sheet", game, "-o", str(sheet), "--url", "http://table.local:8080/"]) == 0
    assert sheet.read_bytes().startswith(b"%PDF-")
    words = set(pdf_text(sheet).split())
    text = pdf_text(sheet)
    lines = catalogue.narrator().lines
    identities = tag_sets()[game]
    assert [i for i in identities if i not in words] == []  # each identity, whole, as a word of its own
    for identity in identities:
        for lang in LANGUAGES:
            assert catalogue.tag_label(lines, identity, lang) in text, (identity, lang)
    assert "http://table.local:8080/" in words and "テーブルコンパニオン" in text  # the pages' QR card
    assert f"{len(identities)} labels and the QR card" in capsys.readouterr().err


def test_no_cjk_font_is_said_plainly_and_nothing_is_written(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(tags_sheet, "CJK_FONTS", (tmp_path / "NotoSansCJK-Regular.ttc",))
    monkeypatch.setattr(tags_sheet.shutil, "which", lambda name: None)  # no fontconfig either
    sheet = tmp_path / "sheet.pdf"
    assert main(["tags", "sheet", "one-night", "-o", str(sheet), "--url", "http://table.local/"]) == 2
    err = capsys.readouterr().err
    assert "no font with Japanese glyphs found" in err and "fonts-noto-cjk" in err
    assert "Traceback" not in err and not sheet.exists()
    assert main(["tags", "sheet", "one-night", "-o", str(sheet), "--font", str(tmp_path / "nope.ttf")]) == 2
    assert "font file" in capsys.readouterr().err and not sheet.exists()


@pytest.mark.parametrize("argv,problem", [
    (["chess"], "unknown game 'chess'"),
    (["one-night", "--size", "40"], "--size must be 25 to 30 mm"),
    (["one-night", "--url", "table.local"], "--url must be an http:// or https:// address"),
])
def test_a_sheet_that_cannot_be_made_is_refused_before_anything_is_written(
        argv: list[str], problem: str, tmp_path: Path, capsys) -> None:
    sheet = tmp_path / "sheet.pdf"
    assert main(["tags", "sheet", *argv, "-o", str(sheet)]) == 2
    assert problem in capsys.readouterr().err and not sheet.exists()


@needs_pdftotext
@needs_cjk_font
@pytest.mark.parametrize("language", LANGUAGES)
def test_finding_the_sheets_qr_card_speaks_the_tables_language_first(language: str, tmp_path: Path) -> None:
    """A table set to Japanese printed a card that led with "Table companion / Scan for the
    scoreboard": the card's words follow `language:` first, as `companion web qr`'s do."""
    config = tmp_path / "companion.yaml"
    config.write_text(f"language: {language}\n", encoding="utf-8")
    sheet = tmp_path / "sheet.pdf"
    assert main(["--config", str(config), "tags", "sheet", "madness-hour", "-o", str(sheet),
                 "--url", "http://table.local:8080/"]) == 0
    text = pdf_text(sheet)
    ours, other = ("テーブルコンパニオン", "Table companion") if language == "ja" else ("Table companion", "テーブルコンパニオン")
    assert text.index(ours) < text.index(other)
