"""The walks Making the tags quotes are what `companion tags` prints today, in both
languages' pages: the learn walk's transcript is run line for line (a simulated reader,
read-only tags with the transcript's UIDs, laid in its order), and every prompt of the
write walk the pages quote is a line the write walk prints."""

from __future__ import annotations

import argparse
import io
import re
import shlex
import threading
from pathlib import Path

import pytest

from companion.app.tags_cmd import configure_parser, run
from hardware.provision import SimTag, SimulatedTagStore

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "docs" / "build" / "tags.md", ROOT / "docs" / "build" / "tags.ja.md"]
TAG_MAP = "/etc/companion/tags.yaml"  # where install.sh puts it: the transcript says so
UID = re.compile(r"^([0-9A-F]{8,20})\b")


def walk(station: SimulatedTagStore, words: list[str], tag_map: Path) -> list[str]:
    """What `companion WORDS` prints with STATION as the reader."""
    parser = argparse.ArgumentParser(prog="companion tags")
    configure_parser(parser)
    args = parser.parse_args([*words[2:], "--tag-map", str(tag_map), "--timeout", "2"])
    out = io.StringIO()
    run(args, reader_factory=lambda device: station, out=out, done=threading.Event())
    return out.getvalue().replace(str(tag_map), TAG_MAP).splitlines()


def transcript(page: Path, command: str) -> list[str]:
    """The code block of PAGE that starts with `$ companion COMMAND`: its lines."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)
    found = [b.splitlines() for b in blocks if b.startswith(f"$ companion {command}")]
    assert found, f"{page.relative_to(ROOT)} shows no `companion {command}` walk"
    return found[0]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_finding_the_learn_walk_the_page_quotes_is_what_learn_prints(page: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path))  # the walk's record: not the checkout's state/
    lines = transcript(page, "tags learn")
    command, said = lines[0], lines[1:]
    uids = [m.group(1) for line, before in zip(said, ["", *said], strict=False)
            if before.startswith("tap the tag") and (m := UID.match(line))]
    store = SimulatedTagStore(SimTag(uid, writable=False) for uid in dict.fromkeys(uids))
    store.tap(*uids)
    assert walk(store, shlex.split(command[2:]), tmp_path / "tags.yaml") == said


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_write_prompts_the_page_quotes_are_what_write_prints(page: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path))  # a fresh walk, its record here
    text = page.read_text(encoding="utf-8")
    quoted = re.findall(r"`(\[\d+/\d+\] tap the sticker for [^`]*)`", text.replace("\n", " "))
    assert quoted, f"{page.name} quotes no prompt of the write walk"
    store = SimulatedTagStore()
    store.tap(*(tag.uid for tag in store.blank(40)))
    printed = walk(store, ["companion", "tags", "write", "one-night"], tmp_path / "tags.yaml")
    for prompt in quoted:
        assert re.sub(r"\s+", " ", prompt) in printed
