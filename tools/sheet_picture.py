"""The pictures of the label sheet the docs show, made from the real command's PDF:
`companion tags sheet BOX` (the shipped config, the address below), its first page
turned into a PNG by poppler's pdftoppm, and beside the picture the PDF's text
(pdftotext) it was made from — so a test can tell that the picture still shows what
the command prints today (tests/test_docs_pictures.py), without comparing pixels.

    .venv/bin/python tools/sheet_picture.py           # make them again
    .venv/bin/python tools/sheet_picture.py --check   # exit 1 if one is out of date

Needs poppler-utils (pdftoppm, pdftotext) and a CJK font (fonts-noto-cjk), as the command does.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
URL = "http://table.local:8080/"  # the QR card's address: not this machine's
DPI = 100
# picture (under docs/) → the box whose sheet it shows
SHEETS = {"build/sheet-one-night.png": "one-night"}


def source_of(picture: Path) -> Path:
    """The text the picture was made from, beside it: sheet-one-night.png → sheet-one-night.txt."""
    return picture.with_suffix(".txt")


def command(box: str, pdf: Path) -> list[str]:
    return [str(Path(sys.executable).parent / "companion"), "tags", "sheet", box, "-o", str(pdf), "--url", URL]


def sheet(box: str, folder: Path) -> tuple[Path, str]:
    """The command's PDF of ``box`` in ``folder``, and its text as pdftotext reads it
    (headed by the command, so the text says how it was made)."""
    pdf = folder / f"{box}.pdf"
    # the shipped config alone: an installed /etc/companion/companion.yaml is this machine's, not the docs'
    env = {**os.environ, "COMPANION_CONFIG": str(folder / "no-installed-config.yaml")}
    subprocess.run(command(box, pdf), check=True, env=env, cwd=folder, capture_output=True, text=True)
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], check=True, capture_output=True,
                          text=True).stdout
    said = " ".join(["companion", *command(box, Path(f"{box}.pdf"))[1:]])
    return pdf, f"# {said}\n{text}"


def stale() -> list[str]:
    """The pictures whose stored text is not what the command prints today (or that have none)."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, box in SHEETS.items():
            stored = source_of(DOCS / name)
            _, text = sheet(box, Path(tmp))
            if not stored.is_file() or stored.read_text(encoding="utf-8") != text:
                out.append(name)
    return out


def make() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, box in SHEETS.items():
            picture = DOCS / name
            pdf, text = sheet(box, Path(tmp))
            subprocess.run(["pdftoppm", "-png", "-r", str(DPI), "-f", "1", "-l", "1", "-singlefile", str(pdf),
                            str(picture.with_suffix(""))], check=True)
            source_of(picture).write_text(text, encoding="utf-8")
            print(picture.relative_to(ROOT))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="say which pictures are out of date; change nothing")
    if parser.parse_args(argv).check:
        old = stale()
        for name in old:
            print(f"docs/{name} is not what `companion tags sheet` prints today: "
                  f"python tools/sheet_picture.py", file=sys.stderr)
        return 1 if old else 0
    make()
    return 0


if __name__ == "__main__":
    sys.exit(main())
