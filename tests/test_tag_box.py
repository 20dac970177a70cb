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
from companion.games.one_night import OneNight
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
    assert box[:3] == ("game/one-night", "onw/villager/1", "onw/villager/2")  # its game card, then its roles'
    assert f"[2/{len(box)}] tap the sticker for Villager 1 (onw/villager/1)" in tags.text
    assert "player/red" in box and "lang/ja" in box


JAPANESE_BOX = ("onw/villager/1", "onw/villager/2", "onw/villager/3", "onw/villager/4", "onw/werewolf/1",
                "onw/werewolf/2", "onw/seer/1", "onw/thief/1", "onw/madman/1", "onw/tanner/1")
TABLE = (*(f"player/{c}" for c in ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")),
         "lang/en", "lang/ja")


def test_finding_one_night_walks_only_the_japanese_box_the_guide_puts_on_the_table() -> None:
    """`write one-night` walked 31 tags, Ultimate's among them: a group that owns only ワンナイト人狼
    had stickers to write for cards it does not have (the guide's *On the table*: these cards)."""
    assert tag_sets()["one-night"] == ("game/one-night", *JAPANESE_BOX, *TABLE)


def test_each_one_night_box_is_a_set_of_its_own(tmp_path: Path) -> None:
    """Ultimate's base box, and Daybreak with its tokens, each listed and written on its own."""
    ultimate = ("rules/ultimate", "onw/villager/1", "onw/villager/2", "onw/villager/3", "onw/werewolf/1",
                "onw/werewolf/2", "onw/seer/1", "onw/robber/1", "onw/tanner/1", "onw/doppelganger/1",
                "onw/minion/1", "onw/mason/1", "onw/mason/2", "onw/troublemaker/1", "onw/drunk/1",
                "onw/insomniac/1", "onw/hunter/1")
    assert tag_sets()["one-night-ultimate"] == ("game/one-night", *ultimate, *TABLE)
    daybreak = tag_sets()["one-night-daybreak"]
    roles = ("sentinel", "alpha-wolf", "mystic-wolf", "dream-wolf", "apprentice-seer", "pi", "witch",
             "village-idiot", "revealer", "curator", "bodyguard")
    tokens = tuple(f"onw/artifact/{a}" for a in ("claw", "brand", "cudgel", "void", "mask", "shroud"))
    # its roles, what its default decks need besides (a villager, two werewolves), its tokens
    assert daybreak == ("game/one-night", "rules/daybreak", *(f"onw/{r}/1" for r in roles), "onw/villager/1",
                        "onw/werewolf/1", "onw/werewolf/2", *tokens, *TABLE)
    out = io.StringIO()
    assert list_tags("one-night-daybreak", out=out) == 0
    assert out.getvalue().splitlines()[0].endswith(f"— {len(daybreak)} tags")
    assert "  onw/artifact ×6" in out.getvalue() and "onw/doppelganger/1" not in out.getvalue()
    store = SimulatedTagStore()
    store.tap(*(t.uid for t in store.blank(len(daybreak))))
    tags = Tags(tmp_path)
    assert tags(store, "write", "one-night-daybreak") == 0, tags.text
    assert [t.text for t in store.tags.values()] == list(daybreak)
    # every One Night card is in a box, so `all` still holds each once
    every = set(tag_sets()["all"])
    assert set(OneNight.components) <= every and "onw/thief/1" in every and "onw/robber/1" in every


def test_an_interrupted_walk_goes_on_where_it_stopped_and_notes_tags_made_before(tmp_path: Path) -> None:
    box = tag_sets()["demagogos"]
    tags = Tags(tmp_path)
    store = SimulatedTagStore()
    store.tap(*(t.uid for t in store.blank(3)))
    assert tags(store, "write", "demagogos", timeout=0.3) == 1  # no fourth tag came: stopped
    assert "the same command goes on from there" in tags.text
    record = yaml.safe_load((tmp_path / "state" / "tags-written.yaml").read_text(encoding="utf-8"))
    assert list(record) == list(box[:3])

    later = SimulatedTagStore()
    made_before = later.add(SimTag("04EE000000000001", text=box[5]))  # written by hand, say
    blanks = later.blank(len(box) - 4)
    later.tap(made_before.uid, *(t.uid for t in blanks))
    assert tags(later, "write", "demagogos") == 0, tags.text
    lines = tags.text.splitlines()
    assert lines[0] == f"3 of {len(box)} written already (noted in {tmp_path / 'state' / 'tags-written.yaml'}); " \
                       f"{len(box) - 3} to go"
    assert lines[1] == f"[4/{len(box)}] tap the sticker for Box 3 (dt/box/3)"
    assert f"04EE000000000001: already {box[5]}, noted; now dt/box/3" in lines
    assert [t.text for t in blanks] == [i for i in box[3:] if i != box[5]]
    assert f"[6/{len(box)}] tap the sticker for Box 5 (dt/box/5)" not in tags.text  # never asked for again

    # --again walks the whole set once more; a tag that already carries its identity is left alone
    again = SimulatedTagStore([SimTag("04EE000000000002", text=box[0])])
    again.tap("04EE000000000002")
    assert tags(again, "write", "demagogos", "--again", timeout=0.3) == 1
    assert "04EE000000000002: already game/demagogos" in tags.text


def test_explicit_identities_are_written_without_touching_the_record(tmp_path: Path) -> None:
    tags = Tags(tmp_path)
    store = SimulatedTagStore()
    store.tap(store.blank(1)[0].uid)
    assert tags(store, "write", "dt/box/1") == 0
    assert not (tmp_path / "state" / "tags-written.yaml").exists()


@pytest.mark.parametrize("game", [g.game for g in GAMES])
def test_list_names_every_tag_of_a_games_box_in_both_languages_with_how_many(game: str) -> None:
    out = io.StringIO()
    assert list_tags(game, out=out) == 0
    text = out.getvalue()
    lines = catalogue.narrator().lines
    box = boxes()[game]
    assert text.splitlines()[0].endswith(f"— {len(box)} tags")
    for identity in box:
        en, ja = (catalogue.tag_label(lines, identity, lang) for lang in LANGUAGES)
        assert identity not in (en, ja) and en != ja  # a label of its own in each language
        assert any(line.split()[:1] == [identity] and en in line and ja in line for line in text.splitlines())
    assert "  player cards ×8" in text and "  language cards ×2" in text and "  game card ×1" in text


def test_list_counts_the_kinds_of_a_box() -> None:
    out = io.StringIO()
    list_tags("one-night", out=out)
    assert "  onw/villager ×4" in out.getvalue() and "  onw/werewolf ×2" in out.getvalue()
    out = io.StringIO()
    list_tags("all", out=out)
    assert out.getvalue().count("player/red ") == 1  # the table's cards once, after the games'
    assert out.getvalue().splitlines()[-1] == f"{len(tag_sets()['all'])} tags in all"
    assert list_tags("chess", out=io.StringIO()) == 2


def test_every_tag_is_named_in_both_languages_by_the_folder_that_owns_it() -> None:
    from voice.lines import LINES_DIR, line_keys

    for game in GAMES:
        own = [*(f"rules/{r}" for r in game.known_rules()), *game.components]
        for lang in LANGUAGES:
            keys = line_keys(catalogue.folder(game) / "lines", lang)
            assert [i for i in own if f"tag.{i}" not in keys] == [], (game.game, lang)
            assert f"name.game/{game.game}" in keys
    for lang in LANGUAGES:
        keys = line_keys(LINES_DIR, lang)
        assert [i for i in boxes()["one-night"] if i.startswith(("player/", "lang/")) and f"tag.{i}" not in keys] == []


def test_labels_are_printed_never_spoken() -> None:
    from voice.lines import load_lines
    from voice.prerender import fixed_lines

    for lang in LANGUAGES:
        entries = load_lines(lang, catalogue.line_folders())
        assert "tag.skb/witch" in entries
        assert not [line.key for line in fixed_lines(lang, entries) if line.key.startswith("tag.")]
