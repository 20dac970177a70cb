"""Documentation points only at files the repository carries: README links
and paths, the unit's Documentation=, the udev rule's "see …" notes."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTALLED = "/opt/companion/"  # where install.sh copies the repository


def test_readme_links_stay_inside_the_repository() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "../" not in text, "the README points outside the repository"
    for target in re.findall(r"\]\(([^)#\s]+)", text):
        if not target.startswith(("http://", "https://")):
            assert (ROOT / target).exists(), target


def test_unit_and_udev_rule_point_at_files_in_the_repository() -> None:
    unit = (ROOT / "systemd" / "companion.service").read_text(encoding="utf-8")
    docs = re.findall(r"^Documentation=(\S+)", unit, flags=re.M)
    assert docs
    for doc in docs:
        if doc.startswith("file://"):
            path = doc.removeprefix("file://")
            assert path.startswith(INSTALLED) and (ROOT / path.removeprefix(INSTALLED)).exists(), doc
    rules = (ROOT / "systemd" / "99-companion-reader.rules").read_text(encoding="utf-8")
    for cited in re.findall(r"see ([\w./-]+\.md)", rules):
        assert (ROOT / cited).exists(), cited
