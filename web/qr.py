"""QR codes of the pages' address: for the public page and the printed card.

segno (pure Python, no dependencies, maintained, ISO 18004 conformant) draws
them; writing an encoder of our own is no job for a table companion.
"""

from __future__ import annotations

import io
from urllib.parse import urlsplit


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot go on a card for phones to open (None: it can): a
    phone's camera opens an http(s) address with a host, and nothing else."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or " " in url.strip():
        return f"--url must be an http:// or https:// address with a host, e.g. http://table.local:8080/; not {url!r}"
    return None


def qr_svg(url: str, title: str | None = None) -> str:
    import segno

    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="svg", scale=8, border=2, xmldecl=False,
                                     svgns=True, title=title, nl=False)
    return out.getvalue().decode()


# The card's words, by language.  A printed card outlives the language setting (a
# language card turns the table Japanese for the evening): it says them in both, the
# language it was printed for first.
CARD_WORDS = {"en": ("Table companion", "Scan for the scoreboard"),
              "ja": ("テーブルコンパニオン", "読み取ると得点表が開きます")}


def card_words(first: str) -> list[tuple[str, str]]:
    """(heading, hint) in every language, the table's own (``first``) first."""
    return [CARD_WORDS[lang] for lang in sorted(CARD_WORDS, key=lambda lang: lang != first)]


def card_svg(url: str, first: str = "en") -> str:
    """A card to print and lay on the table: the code, its words in every language
    (``first``'s on top), the address written out."""
    import segno

    code = segno.make(url, error="m")
    out = io.BytesIO()
    code.save(out, kind="svg", scale=8, border=2, xmldecl=False, svgns=True, nl=False)
    size = code.symbol_size(scale=8, border=2)[0]
    inner = out.getvalue().decode()
    (heading, hint), (other_heading, other_hint) = card_words(first)[:2]
    w, h = size + 40, size + 150
    esc = _escape

    def text(y: float, words: str, px: int, font: str = "sans-serif") -> str:
        return (f'<text x="{w / 2}" y="{y}" font-family="{font}" font-size="{px}" text-anchor="middle">'
                f'{esc(words)}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
            f'<rect width="{w}" height="{h}" rx="12" fill="#fff" stroke="#222" stroke-width="2"/>'
            + text(30, heading, 20) + text(54, other_heading, 16)
            + f'<g transform="translate(20,64)">{inner}</g>'
            + text(size + 88, hint, 14) + text(size + 108, other_hint, 14)
            + text(size + 132, url, 14, "monospace") + '</svg>')


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
