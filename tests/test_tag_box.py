"""A game's box of tags: `companion tags list`, `write GAME` walking the
whole set (and going on where it stopped), `check GAME`, and their labels
in both languages from the games' own folders."""

from __future__ import annotations

import argparse
import io
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from companion.app import catalogue
from companion.app.tags_cmd import configure_parser, list_tags, run
from companion.core.tags import LANGUAGES
from companion.games import GAMES, boxes, tag_sets
from hardware.provision import SimTag, SimulatedTagStore


def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "companion.yaml"
    path.write_text(f"state_dir: {tmp_path / 'state'}\n", encoding="utf-8")
    return path


class Tags:
    """`companion tags …` against a store of software tags, its state in tmp_path."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.config = config_file(tmp_path)
        self.out = io.StringIO()
        self.done = threading.Event()

    def __call__(self, station: Any, *argv: str, timeout: float = 2.0) -> int:
        parser = argparse.ArgumentParser(prog="companion tags")
        configure_parser(parser)
        args = parser.parse_args([*argv, "--tag-map", str(self.tmp_path / "tags.yaml"), "--device", "test",
                                  "--timeout", str(timeout)])
        args.config = [self.config]
        self.out = io.StringIO()
        self.done = threading.Event()
        return run(args, reader_factory=lambda device: station, out=self.out, done=self.done)

    @property
    def text(self) -> str:
        return self.out.getvalue()


def test_finding_a_games_name_is_accepted_where_a_set_of_tags_is_meant(tmp_path: Path) -> None:
    box = tag_sets()["one-night"]
    store = SimulatedTagStore()
    store.tap(*(t.uid for t in store.blank(len(box))))
    tags = Tags(tmp_path)
    assert tags(store, "write", "one-night") == 0, tags.text
    assert "unknown identity" not in tags.text
    assert [t.text for t in store.tags.values()] == list(box)  # the whole box, in its order
    assert box[:2] == ("game/one-night", "onw/villager/1")
    assert "[2/19] tap the sticker for Villager 1 (onw/villager/1)" in tags.text
    assert "player/red" in box and "lang/ja" in box
