"""``companion tags sheet GAME|all -o FILE.pdf``: a printable sheet of labels
for the tags of a game's box — each a square for a 25-30 mm NTAG sticker
with its name in English and Japanese and the identity the tag carries —
with dashed cut lines between them, and the pages' QR card.  No game
artwork: that is not ours to print.

fpdf2 draws it (pure Python; it embeds the subset of a font it uses).  The
Japanese needs a CJK font: Noto Sans CJK (Debian's fonts-noto-cjk) where it
is, or ``--font``; without one the command says so and writes nothing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.app import catalogue
from companion.core.tags import LANGUAGES

# Where Debian, Fedora and Arch put Noto Sans CJK; fontconfig is asked after these.
CJK_FONTS = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    Path("/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc"),
    Path("/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc"),
)
PAGE_W, PAGE_H, MARGIN = 210.0, 297.0, 12.0  # A4, mm
HEADING_H = 7.0
SIZES = (25.0, 30.0)  # the NTAG stickers a label is cut for, mm


class NoCJKFont(Exception):
    """No font with Japanese glyphs was found; the message says what to install."""


def find_cjk_font(given: Path | None = None) -> Path:
    """``given``, else the first Noto Sans CJK of ``CJK_FONTS``, else a font
    fontconfig says has Japanese; NoCJKFont if there is none."""
    candidates = CJK_FONTS
    if given is not None:
        if given.is_file():
            return given
        raise NoCJKFont(f"font file {given} does not exist")
    for path in candidates:
        if path.is_file():
            return path
    if shutil.which("fc-list"):
        try:
            found = subprocess.run(["fc-list", ":lang=ja", "file"], capture_output=True, text=True,
                                   timeout=10).stdout.split()
        except (OSError, subprocess.SubprocessError):
            found = []
        for file in sorted(f.rstrip(":") for f in found):
            if file.endswith((".ttf", ".otf", ".ttc")):
                return Path(file)
    raise NoCJKFont("no font with Japanese glyphs found (looked for Noto Sans CJK in "
                    f"{', '.join(str(p.parent) for p in candidates)} and asked fontconfig): "
                    "install fonts-noto-cjk (`sudo apt install fonts-noto-cjk`) or pass --font FILE")


@dataclass(frozen=True)
class Label:
    identity: str
    names: tuple[str, ...]  # in LANGUAGES' order


def labels(identities: Iterable[str], lines: catalogue.Lines) -> list[Label]:
    return [Label(i, tuple(catalogue.tag_label(lines, i, lang) for lang in LANGUAGES)) for i in identities]


def render(sections: Sequence[tuple[str, Sequence[Label]]], font: Path, out: Path, *, size: float = 28.0,
           qr: tuple[str, Sequence[str]] | None = None, footer: str = "") -> int:
    """Write the sheet: ``sections`` (a heading, its labels), then the QR card
    (``qr``: the address and the words above it).  Returns the page count."""
    from fpdf import FPDF

    pdf = FPDF(unit="mm", format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_margins(MARGIN, MARGIN)
    # a collection's first face (Noto Sans CJK's is the Japanese one); a .ttf/.otf has only one
    pdf.add_font("cjk", fname=str(font), collection_font_number=0)
    pdf.set_title("Table companion: tag labels")
    cols = int((PAGE_W - 2 * MARGIN) // size)
    left = (PAGE_W - cols * size) / 2
    bottom = PAGE_H - MARGIN - 6
    y = PAGE_H  # forces a first page

    def new_page() -> float:
        pdf.add_page()
        if footer:
            pdf.set_font("cjk", size=7)
            pdf.set_text_color(90)
            pdf.set_xy(MARGIN, PAGE_H - MARGIN - 3)
            pdf.cell(PAGE_W - 2 * MARGIN, 4, footer, align="C")
        return MARGIN

    def heading(text: str, y: float) -> float:
        if y + HEADING_H + size > bottom:
            y = new_page()
        pdf.set_font("cjk", size=10)
        pdf.set_text_color(0)
        pdf.set_xy(left, y)
        pdf.cell(cols * size, HEADING_H - 1, text)
        return y + HEADING_H

    for title, items in sections:
        y = heading(title, y)
        for row_start in range(0, len(items), cols):
            if y + size > bottom:
                y = heading(f"{title} (cont.)", PAGE_H)
            row = items[row_start:row_start + cols]
            for n, label in enumerate(row):
                _label(pdf, label, left + n * size, y, size)
            _cut_lines(pdf, left, y, len(row), size)
            y += size
        y += 3
    if qr is not None:
        card = 2 * size
        if y + HEADING_H + card > bottom:
            y = new_page()
        _qr_card(pdf, qr[0], qr[1], left, y, card)
    pdf.output(str(out))
    return int(pdf.pages_count)


def _label(pdf: Any, label: Label, x: float, y: float, size: float) -> None:
    """One sticker's square: the sticker's outline in light grey, its names
    and the identity it carries, centred."""
    pdf.set_draw_color(200)
    pdf.set_line_width(0.2)
    pdf.set_dash_pattern()
    pdf.circle(x=x + size / 2, y=y + size / 2, radius=size / 2 - 0.8)
    inner = size * 0.76  # inside the circle at the first and last line's height
    pad = (size - inner) / 2
    pdf.set_text_color(0)
    first, *others = label.names
    _fit(pdf, first, x + pad, y + size * 0.26, inner, 8.5)
    for n, name in enumerate(others):
        _fit(pdf, name, x + pad - 1, y + size * (0.45 + 0.16 * n), inner + 2, 8.0)
    pdf.set_text_color(70)
    _fit(pdf, label.identity, x + pad, y + size * 0.70, inner, 5.5)


def _fit(pdf: Any, text: str, x: float, y: float, width: float, points: float) -> None:
    """``text`` centred on one line of ``width`` mm, made smaller until it fits."""
    pdf.set_font("cjk", size=points)
    while pdf.get_string_width(text) > width and points > 3.5:
        points -= 0.25
        pdf.set_font("cjk", size=points)
    pdf.set_xy(x, y)
    pdf.cell(width, points * 0.45, text, align="C")


def _cut_lines(pdf: Any, left: float, top: float, count: int, size: float) -> None:
    pdf.set_draw_color(120)
    pdf.set_line_width(0.15)
    pdf.set_dash_pattern(dash=1.2, gap=1.2)
    right, bottom = left + count * size, top + size
    pdf.line(left, top, right, top)
    pdf.line(left, bottom, right, bottom)
    for n in range(count + 1):
        pdf.line(left + n * size, top, left + n * size, bottom)
    pdf.set_dash_pattern()


def _qr_card(pdf: Any, url: str, words: Sequence[str], x: float, y: float, side: float) -> None:
    """The pages' QR card: the code (segno's modules, drawn as squares), the
    words above it and the address below, in a dashed cut frame."""
    import segno

    code = segno.make(url, error="m")
    rows = [list(row) for row in code.matrix]
    text_h = 3.6 * len(words) + 5
    pdf.set_draw_color(120)
    pdf.set_line_width(0.15)
    pdf.set_dash_pattern(dash=1.2, gap=1.2)
    width = 1.5 * side
    pdf.rect(x, y, width, side + text_h)
    pdf.set_dash_pattern()
    for n, line in enumerate(words):
        _fit(pdf, line, x + 2, y + 2 + 3.6 * n, width - 4, 7.5)
    module = (side - 6) / len(rows)
    top, qx = y + 3.6 * len(words) + 3, x + (width - module * len(rows)) / 2
    pdf.set_fill_color(0)
    for r, row in enumerate(rows):
        for c, dark in enumerate(row):
            if dark:
                pdf.rect(qx + c * module, top + r * module, module, module, style="F")
    _fit(pdf, url, x + 2, top + module * len(rows) + 1.5, width - 4, 7)


def run_sheet(args: argparse.Namespace, cfg: Mapping[str, Any]) -> int:
    from companion.app.tags_cmd import sections
    from companion.app.web_app import pages_url
    from web.qr import card_words

    err = sys.stderr
    if not SIZES[0] <= args.size <= SIZES[1]:
        print(f"companion tags sheet: --size must be {SIZES[0]:g} to {SIZES[1]:g} mm (the stickers), "
              f"not {args.size:g}", file=err)
        return 2
    try:
        parts = sections(args.set, cfg["players"]["extra"])
    except KeyError:
        from companion.games import boxes

        print(f"companion tags sheet: unknown game {args.set!r}: one of {', '.join([*boxes(), 'all'])}", file=err)
        return 2
    try:
        url = pages_url(dict(cfg), args.url)
        font = find_cjk_font(getattr(args, "font", None))
    except (ValueError, NoCJKFont) as e:
        print(f"companion tags sheet: {e}", file=err)
        return 2
    lines = catalogue.narrator().lines
    titled = []
    for section, identities in parts:
        named = catalogue.tag_label if section == "table" else catalogue.name
        titled.append((" · ".join(named(lines, section, lang) for lang in LANGUAGES), labels(identities, lines)))
    words = [w for pair in zip(*card_words(cfg["language"]), strict=True) for w in pair]  # the table's first
    footer = (f"Cut along the dashed lines: {args.size:g} mm labels for {SIZES[0]:g}-{SIZES[1]:g} mm NTAG stickers "
              f"· 点線で切り取ってください")
    try:
        pages = render(titled, font, args.output, size=args.size, qr=(url, words), footer=footer)
    except OSError as e:
        print(f"companion tags sheet: cannot write {args.output}: {e.strerror or e}", file=err)
        return 1
    count = sum(len(items) for _, items in titled)
    print(f"wrote {args.output}: {count} labels and the QR card on {pages} page{'s' if pages != 1 else ''} "
          f"(font {font.name})", file=err)
    return 0
