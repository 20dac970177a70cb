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


def card_svg(url: str, heading: str = "Table companion", hint: str = "Scan to open the scoreboard") -> str:
    """A card to print and lay on the table: the code, the address in words."""
    import segno

    code = segno.make(url, error="m")
    out = io.BytesIO()
    code.save(out, kind="svg", scale=8, border=2, xmldecl=False, svgns=True, nl=False)
    size = code.symbol_size(scale=8, border=2)[0]
    inner = out.getvalue().decode()
    w, h = size + 40, size + 110
    esc = _escape
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
            f'<rect width="{w}" height="{h}" rx="12" fill="#fff" stroke="#222" stroke-width="2"/>'
            f'<text x="{w / 2}" y="30" font-family="sans-serif" font-size="20" text-anchor="middle">{esc(heading)}</text>'
            f'<g transform="translate(20,42)">{inner}</g>'
            f'<text x="{w / 2}" y="{size + 66}" font-family="sans-serif" font-size="14" text-anchor="middle">{esc(hint)}</text>'
            f'<text x="{w / 2}" y="{size + 90}" font-family="monospace" font-size="14" text-anchor="middle">{esc(url)}</text>'
            '</svg>')


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
