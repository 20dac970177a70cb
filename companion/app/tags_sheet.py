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
from collections.abc import Callable, Iterable, Mapping, Sequence
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
NAME_POINTS = (8.5, 8.0)  # the first language's name, the others' (the largest they are printed)
IDENTITY_POINTS = 5.5
MIN_POINTS = 5.0  # the least a label's text is printed at: smaller does not read on a sticker
WRAP_POINTS = 6.5  # a name is wrapped onto two lines rather than printed smaller than this
INSET = 0.6  # mm between the circle and the text
GAP = 0.8  # mm between a label's texts


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
    and the identity it carries, centred inside the circle."""
    pdf.set_draw_color(200)
    pdf.set_line_width(0.2)
    pdf.set_dash_pattern()
    radius = size / 2 - 0.8
    pdf.circle(x=x + size / 2, y=y + size / 2, radius=radius)

    def measure(text: str, points: float) -> float:
        pdf.set_font("cjk", size=points)
        return float(pdf.get_string_width(text))

    for line in label_lines(measure, label, radius - INSET):
        pdf.set_text_color(line.grey)
        pdf.set_font("cjk", size=line.points)
        pdf.set_xy(x + size / 2 - line.width / 2, y + size / 2 + line.top)
        pdf.cell(line.width, line.height, line.text, align="C")


@dataclass(frozen=True)
class Line:
    text: str
    points: float
    top: float  # mm from the circle's centre (negative: above it)
    width: float  # mm
    grey: int

    @property
    def height(self) -> float:
        return line_height(self.points)


def line_height(points: float) -> float:
    return points * 0.3528 * 1.2  # mm: the size and a little leading


def label_lines(measure: Any, label: Label, radius: float) -> list[Line]:
    """Where a label's texts go inside a circle of ``radius`` mm (``measure``:
    a text's width in mm at a size): its names, then its identity, as one
    block centred on the circle, each line no wider than the circle at its
    height.  A text too wide is made smaller, down to ``WRAP_POINTS``, then
    wrapped onto two lines and tried again from its own size, down to
    ``MIN_POINTS``; one that still does not fit makes room by making the
    others smaller."""
    texts = [(name, NAME_POINTS[min(n, 1)], 0) for n, name in enumerate(label.names)]
    texts.append((label.identity, IDENTITY_POINTS, 70))
    points = [p for _, p, _ in texts]
    parts = [[t] for t, _, _ in texts]
    lines = _placed(measure, texts, parts, points, radius)
    for _ in range(400):  # each pass shrinks or wraps one text: bounded
        wide = next((n for n, (_, fits) in enumerate(lines) if not fits), None)
        if wide is None:
            break
        k = _owner(parts, wide)
        if points[k] - 0.25 >= (MIN_POINTS if len(parts[k]) > 1 else WRAP_POINTS):
            points[k] -= 0.25
        elif len(parts[k]) == 1 and len(texts[k][0]) > 1:
            parts[k], points[k] = _halves(texts[k][0]), texts[k][1]
        elif points[k] - 0.25 >= MIN_POINTS:
            points[k] -= 0.25
        elif others := [j for j in range(len(texts)) if j != k and points[j] - 0.25 >= MIN_POINTS]:
            points[max(others, key=lambda j: points[j])] -= 0.25
        else:
            break  # as small as allowed, wrapped: printed as it is (the sheet's test finds none)
        lines = _placed(measure, texts, parts, points, radius)
    return [line for line, _ in lines]


def _owner(parts: list[list[str]], line: int) -> int:
    """Which text the ``line``-th line belongs to."""
    for k, ps in enumerate(parts):
        if line < len(ps):
            return k
        line -= len(ps)
    raise IndexError(line)


def _placed(measure: Any, texts: list[tuple[str, float, int]], parts: list[list[str]], points: list[float],
            radius: float) -> list[tuple[Line, bool]]:
    """The lines stacked and centred on the circle, a small gap between two
    texts; each with whether it fits (its box's corners inside the circle)."""
    rows = [(k, part) for k in range(len(texts)) for part in parts[k]]
    total = sum(line_height(points[k]) for k, _ in rows) + GAP * (len(texts) - 1)
    out, top = [], -total / 2
    for n, (k, text) in enumerate(rows):
        h, w = line_height(points[k]), measure(text, points[k])
        far = max(abs(top), abs(top + h))
        out.append((Line(text, points[k], top, w, texts[k][2]), (w / 2) ** 2 + far ** 2 <= radius ** 2))
        top += h + (GAP if n + 1 < len(rows) and rows[n + 1][0] != k else 0.0)
    return out


def _fit(pdf: Any, text: str, x: float, y: float, width: float, points: float) -> None:
    """``text`` centred on one line of ``width`` mm, made smaller until it fits (the QR card's)."""
    pdf.set_font("cjk", size=points)
    while pdf.get_string_width(text) > width and points > MIN_POINTS:
        points -= 0.25
        pdf.set_font("cjk", size=points)
    pdf.set_xy(x, y)
    pdf.cell(width, points * 0.45, text, align="C")


def _halves(text: str) -> list[str]:
    """``text`` on two lines: at the space (or, with none, the character) nearest its middle."""
    spaces = [i for i, c in enumerate(text) if c == " "]
    cut = min(spaces, key=lambda i: abs(i - len(text) / 2)) if spaces else len(text) // 2
    return [text[:cut].strip(), text[cut:].strip()]


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


def run_sheet(args: argparse.Namespace, cfg: Mapping[str, Any], parts: Sequence[tuple[str, Sequence[str]]],
              section_title: Callable[[catalogue.Lines, str], str]) -> int:
    """The sheet of ``parts`` (a section's box or ``table``, its identities:
    ``tags_cmd.sections``; titled by ``section_title``) as ``args`` ask —
    given by ``tags_cmd``, so this module needs nothing of it."""
    from companion.app.web_app import pages_url
    from web.qr import card_words

    err = sys.stderr
    if not SIZES[0] <= args.size <= SIZES[1]:
        print(f"companion tags sheet: --size must be {SIZES[0]:g} to {SIZES[1]:g} mm (the stickers), "
              f"not {args.size:g}", file=err)
        return 2
    try:
        url = pages_url(dict(cfg), args.url)
        font = find_cjk_font(getattr(args, "font", None))
    except (ValueError, NoCJKFont) as e:
        print(f"companion tags sheet: {e}", file=err)
        return 2
    lines = catalogue.narrator().lines
    titled = [(section_title(lines, section), labels(identities, lines)) for section, identities in parts]
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
