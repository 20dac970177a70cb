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
    flat = "".join(text.split())  # a long label is wrapped onto two lines
    for identity in identities:
        for lang in LANGUAGES:
            assert "".join(catalogue.tag_label(lines, identity, lang).split()) in flat, (identity, lang)
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
    (["chess"], "unknown box 'chess'"),
    (["one-night", "--size", "40"], "--size must be 25 to 30 mm"),
    (["one-night", "--url", "table.local"], "--url must be an http:// or https:// address"),
])
def test_a_sheet_that_cannot_be_made_is_refused_before_anything_is_written(
        argv: list[str], problem: str, tmp_path: Path, capsys) -> None:
    sheet = tmp_path / "sheet.pdf"
    assert main(["tags", "sheet", *argv, "-o", str(sheet)]) == 2
    assert problem in capsys.readouterr().err and not sheet.exists()


def pdf_words(path: Path) -> list[tuple[int, float, float, float, float, str]]:
    """Every word pdftotext sees: (page, xMin, yMin, xMax, yMax in pt, text)."""
    import re

    out, page = [], 0
    for line in subprocess.run(["pdftotext", "-bbox", str(path), "-"], capture_output=True, text=True,
                               check=True, timeout=60).stdout.splitlines():
        if "<page " in line:
            page += 1
        if m := re.search(r'xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*)</word>', line):
            out.append((page, *(float(v) for v in m.groups()[:4]), m.group(5)))
    return out


@needs_pdftotext
@needs_cjk_font
def test_finding_a_long_label_prints_inside_its_circle_at_a_readable_size(tmp_path: Path) -> None:
    """"Ultimate edition (One Night Ultimate Werewolf)" printed at ~3.5 pt reaching the cut
    line: every word of every label now lies inside its sticker's circle, none smaller than
    5 pt (pdftotext's box of a Noto Sans CJK word is 1.45 × its size)."""
    sheet = tmp_path / "all.pdf"
    assert main(["tags", "sheet", "all", "-o", str(sheet), "--url", "http://table.local:8080/"]) == 0
    mm = 72 / 25.4
    size = 28.0
    cols = int((tags_sheet.PAGE_W - 2 * tags_sheet.MARGIN) // size)
    left = (tags_sheet.PAGE_W - cols * size) / 2
    radius = size / 2 - 0.8
    words = pdf_words(sheet)
    labels = [w for w in words if w[2] > (tags_sheet.MARGIN + tags_sheet.HEADING_H - 1) * mm
              and w[4] < (tags_sheet.PAGE_H - tags_sheet.MARGIN - 6) * mm
              and (w[4] - w[2]) / 1.45 < 9.5]  # not the 10 pt headings between the sets
    assert any(w[5] == "Werewolf)" for w in labels)
    too_small = [w for w in labels if (w[4] - w[2]) / 1.45 < 5.0 - 0.05
                 and left * mm < w[1] < (left + cols * size) * mm]
    from web.qr import CARD_WORDS

    card_words = [w for words in CARD_WORDS.values() for w in words]
    outside = []
    for page, x0, _, x1, _, text in labels:
        column = int(((x0 + x1) / 2 / mm - left) // size)
        if not 0 <= column < cols or text.startswith("http") or any(text in w for w in card_words):
            continue  # the QR card's words, under the labels
        centre = left + (column + 0.5) * size
        if x0 / mm < centre - radius or x1 / mm > centre + radius:
            outside.append((page, text))
    assert too_small == [], too_small[:5]
    assert outside == [], outside[:5]


@needs_cjk_font
@pytest.mark.parametrize("size", [25.0, 30.0])
def test_every_labels_lines_lie_inside_its_circle_by_the_fonts_own_metrics(size: float) -> None:
    """Each line's box (fpdf2's width of it at its size, its line height) has its corners inside
    the circle, at MIN_POINTS or more, and the lines of a label do not overlap."""
    from fpdf import FPDF

    pdf = FPDF(unit="mm")
    pdf.add_font("cjk", fname=str(next(p for p in tags_sheet.CJK_FONTS if p.is_file())), collection_font_number=0)

    def measure(text: str, points: float) -> float:
        pdf.set_font("cjk", size=points)
        return float(pdf.get_string_width(text))

    radius = size / 2 - 0.8 - tags_sheet.INSET
    for label in tags_sheet.labels(tag_sets()["all"], catalogue.narrator().lines):
        lines = tags_sheet.label_lines(measure, label, radius)
        assert "".join(line.text for line in lines).replace(" ", "") == \
            "".join((*label.names, label.identity)).replace(" ", "")
        for line in lines:
            far = max(abs(line.top), abs(line.top + line.height))
            assert (line.width / 2) ** 2 + far ** 2 <= radius ** 2 + 1e-9, (label.identity, line)
            assert line.points >= tags_sheet.MIN_POINTS
        assert all(a.top + a.height <= b.top + 1e-9 for a, b in zip(lines, lines[1:], strict=False))
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
