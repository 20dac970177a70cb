"""The configuration page's table of every setting, rendered from the one schema.

docs/reference/configuration.md holds the table between two markers; a test holds it equal to
what this renders, so a setting added to the schema (a game's, a device's) cannot be missing
from the page.  ``python -m companion.app.config_doc --write`` puts the rendering in place."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from companion.app.config import SCHEMA
from companion.core import settings

BEGIN = "<!-- settings: rendered from the schema by companion.app.config_doc; do not edit by hand -->"
END = "<!-- end of settings -->"


def leaves(schema: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, settings.Field]]:
    for key, value in schema.items():
        full = settings.join(path, key)
        if isinstance(value, settings.Field):
            yield full, value
        else:
            yield from leaves(value, full)


def _default(value: Any) -> str:
    # YAML's spelling, as the file would hold it
    if isinstance(value, bool):
        return "on" if value else "off"
    return "null" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _cell(text: str) -> str:
    # a table cell: its pipes escaped, and <key> shown as written, not read as an HTML tag
    return text.replace("|", "\\|").replace("<", "&lt;")


def table() -> str:
    rows = ["| setting | default | what it does |", "|---|---|---|"]
    for path, field in leaves(SCHEMA):
        rows.append(f"| `{path}` | `{_cell(_default(field.default))}` | {_cell(field.doc)} |")
    return "\n".join(rows)


def write(page: Path) -> bool:
    """Put the table between the page's markers; True if the page changed."""
    text = page.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    new = f"{head}{BEGIN}\n{table()}\n{END}{tail}"
    if new != text:
        page.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        page = Path(__file__).resolve().parents[2] / "docs/reference/configuration.md"
        print(f"{page}: {'written' if write(page) else 'already current'}")
    else:
        print(table())
