"""Documentation points only at files the repository carries: README links
and paths, the unit's Documentation=, the udev rule's "see …" notes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALLED = "/opt/companion/current/"  # the release the service runs: a copy of the repository


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


# ------------------------------------------------ behaviour named, not tracker numbers
# Code, tests and docs say what a thing does or which rule it keeps; a number in
# the project's tracker, or a note kept outside the repository, means nothing to
# a reader of the tree.  Only CHANGELOG.md tells the history.
CITATION = re.compile(r"\b[Ii]ssues? #?[0-9]+|" + "AGR" + "EED")  # split: this file cites nothing
HISTORY = {"CHANGELOG.md"}
# Files that still cite one, being rewritten on other branches: remove each entry
# once its file is clean (the second test below fails while a clean file is listed).
PENDING: frozenset[str] = frozenset()


def _citations() -> dict[str, list[str]]:
    """Each tracked text file's lines that cite an issue number or the outside note."""
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    found: dict[str, list[str]] = {}
    for name in filter(None, listed.decode("utf-8").split("\0")):
        path = ROOT / name
        if name in HISTORY or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:  # binary: a picture, a sound
            continue
        lines = [f"{name}:{n}: {line.strip()}"
                 for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1)
                 if CITATION.search(line)]
        if lines:
            found[name] = lines
    return found


def test_no_tracked_file_cites_an_issue_number_or_a_note_outside_the_repository() -> None:
    stray = [line for name, lines in sorted(_citations().items()) if name not in PENDING for line in lines]
    assert stray == [], "name the behaviour or the rule instead:\n" + "\n".join(stray)


def test_every_pending_file_still_cites_one() -> None:
    clean = sorted(PENDING - set(_citations()))
    assert clean == [], f"clean now: remove from PENDING: {clean}"


def test_the_citation_pattern_finds_what_it_forbids() -> None:
    issue, note = "issue", "AGR" + "EED.md"  # spelt apart, or this file would cite them
    cites = [f"({issue} 22)", f"{issue.title()} 8: a tile", f"{issue}s 21 and 22", f"see {issue} #4", f"{note} item 3"]
    assert [s for s in cites if not CITATION.search(s)] == []
    assert [s for s in ["the issue's case", "we issue BEGIN", f"t{issue} 3"] if CITATION.search(s)] == []
