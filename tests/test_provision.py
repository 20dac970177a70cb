"""`companion tags write | learn | read | check`, on software tags and on a
Type 3 tag that nfcpy emulates over its udp driver."""

from __future__ import annotations

import argparse
import io
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from companion.app import config
from companion.app.tags_cmd import configure_parser, load_tag_map, run
from companion.games import component_sets, tag_sets
from hardware.base import TagSeen
from hardware.nfc_emulation import Type3Emulator, blank_tag, no_ndef_tag, text_tag
from hardware.provision import (
    TAG_MAP_HEADER,
    NfcStation,
    SimTag,
    SimulatedTagStore,
    save_tag_map,
)
from hardware.sim_reader import SimulatedReader

WAIT = 3.0
COMPONENT_SETS = component_sets()
TAG_SETS = tag_sets()  # a game's set is its whole box: its cards, the players', the languages'


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="companion tags")
    configure_parser(parser)
    return parser.parse_args(list(argv))


class Run:
    """One `companion tags …` run against a station; output captured."""

    def __init__(self, tmp_path: Path) -> None:
        self.tag_map = tmp_path / "tags.yaml"
        self.out = io.StringIO()
        self.done = threading.Event()

    def __call__(self, station: Any, *argv: str, timeout: float = 2.0) -> int:
        args = parse(*argv, "--tag-map", str(self.tag_map), "--device", "test",
                     "--timeout", str(timeout))
        return run(args, reader_factory=lambda device: station, out=self.out, done=self.done)

    @property
    def text(self) -> str:
        return self.out.getvalue()

    def lines(self) -> list[str]:
        return self.text.splitlines()


@pytest.fixture
def cli(tmp_path: Path) -> Run:
    return Run(tmp_path)


# ---------------------------------------------------------------- write
def test_write_puts_each_identity_on_the_next_blank_tag_and_verifies_it(cli):
    store = SimulatedTagStore()
    a, b, c = store.blank(3)
    store.tap(a.uid, b.uid, c.uid)
    assert cli(store, "write", "skb/knight/1", "skb/knight/2", "skb/witch") == 0
    assert [a.text, b.text, c.text] == ["skb/knight/1", "skb/knight/2", "skb/witch"]
    assert cli.lines()[:2] == ["[1/3] tap the sticker for Knight 1 (skb/knight/1)",
                               f"{a.uid}: written and verified: skb/knight/1"]
    assert "[3/3] tap the sticker for Witch (skb/witch)" in cli.lines()


def test_write_refuses_an_unknown_identity_before_any_tap(cli):
    store = SimulatedTagStore()
    (a,) = store.blank(1)
    store.tap(a.uid)
    assert cli(store, "write", "skb/knight/1", "skb/knight/9") == 2
    assert "unknown identity: skb/knight/9" in cli.text
    assert a.text is None and not store.wait_drained(0)  # the tap was never taken


def test_write_passes_over_a_read_only_tag(cli):
    store = SimulatedTagStore()
    (locked,) = store.blank(1, writable=False)
    (blank,) = store.blank(1, first=2)
    store.tap(locked.uid, blank.uid)
    assert cli(store, "write", "player/red") == 0
    assert "read-only: use `companion tags learn`" in cli.text
    assert (locked.text, blank.text) == (None, "player/red")


def test_write_does_not_overwrite_a_named_tag_without_force(cli):
    store = SimulatedTagStore([SimTag("04AA000000000001", text="player/blue")])
    (blank,) = store.blank(1)
    store.tap("04AA000000000001", blank.uid)
    assert cli(store, "write", "player/red") == 0
    assert store.tags["04AA000000000001"].text == "player/blue"
    assert "already names itself player/blue" in cli.text
    assert blank.text == "player/red"


def test_write_with_force_overwrites(cli):
    store = SimulatedTagStore([SimTag("04AA000000000001", text="player/blue")])
    store.tap("04AA000000000001")
    assert cli(store, "write", "--force", "player/red") == 0
    assert store.tags["04AA000000000001"].text == "player/red"


def test_a_tag_already_right_is_left_alone(cli):
    store = SimulatedTagStore([SimTag("04AA000000000001", text="game/one-night")])
    store.tap("04AA000000000001")
    assert cli(store, "write", "game/one-night") == 0
    assert "04AA000000000001: already game/one-night" in cli.text


def test_a_failed_write_asks_for_the_tag_again(cli):
    store = SimulatedTagStore([SimTag("04AA000000000001", fail_writes=1)])
    store.tap("04AA000000000001", "04AA000000000001")
    assert cli(store, "write", "onw/seer/1") == 0
    assert "was the tag moved?" in cli.text
    assert store.tags["04AA000000000001"].text == "onw/seer/1"


def test_a_write_that_does_not_read_back_is_not_believed(cli):
    store = SimulatedTagStore([SimTag("04AA000000000001", lying_writes=1)])
    store.tap("04AA000000000001", "04AA000000000001")
    assert cli(store, "write", "onw/thief/1") == 0
    assert "read back '1/feiht/wno' instead of onw/thief/1" in cli.text
    assert cli.lines()[-2] == "04AA000000000001: written and verified: onw/thief/1"


def test_write_gives_up_after_the_timeout_and_names_what_is_left(cli):
    store = SimulatedTagStore()
    (a,) = store.blank(1)
    store.tap(a.uid)
    started = time.monotonic()
    assert cli(store, "write", "dt/box/1", "dt/box/2", "dt/box/3", timeout=0.2) == 1
    assert time.monotonic() - started < 1.5
    assert "not written: dt/box/2, dt/box/3" in cli.text


# ---------------------------------------------------------------- learn
def test_learn_maps_read_only_tags_in_the_tag_map(cli):
    store = SimulatedTagStore([SimTag("04:a1:b2:c3:d4:e5:f6", writable=False),
                               SimTag("0123456789", writable=False)])
    store.tap("04A1B2C3D4E5F6", "0123456789")
    assert cli(store, "learn", "skb/knight/1", "mh/girl/human") == 0
    assert load_tag_map(cli.tag_map) == {"04A1B2C3D4E5F6": "skb/knight/1",
                                         "0123456789": "mh/girl/human"}
    raw = yaml.load(cli.tag_map.read_text(), Loader=yaml.BaseLoader)
    assert raw == {"04A1B2C3D4E5F6": "skb/knight/1", "0123456789": "mh/girl/human"}
    assert cli.tag_map.read_text().startswith(TAG_MAP_HEADER)


def test_learn_refuses_a_uid_mapped_to_another_identity(cli):
    save_tag_map(cli.tag_map, {"04A1B2C3D4E5F6": "skb/knight/1"})
    before = cli.tag_map.read_bytes()
    store = SimulatedTagStore([SimTag("04A1B2C3D4E5F6"), SimTag("04A1B2C3D4E5F7")])
    store.tap("04A1B2C3D4E5F6")
    assert cli(store, "learn", "skb/knight/2", timeout=0.3) == 1
    assert "04A1B2C3D4E5F6 is already mapped to skb/knight/1" in cli.text
    assert cli.tag_map.read_bytes() == before
    store.tap("04A1B2C3D4E5F6", "04A1B2C3D4E5F7")  # the operator tries again with the right tile
    assert cli(store, "learn", "skb/knight/2") == 0
    assert load_tag_map(cli.tag_map) == {"04A1B2C3D4E5F6": "skb/knight/1",
                                         "04A1B2C3D4E5F7": "skb/knight/2"}


def test_learn_with_force_remaps(cli):
    save_tag_map(cli.tag_map, {"04A1B2C3D4E5F6": "skb/knight/1"})
    store = SimulatedTagStore([SimTag("04A1B2C3D4E5F6")])
    store.tap("04A1B2C3D4E5F6")
    assert cli(store, "learn", "--force", "skb/knight/2") == 0
    assert load_tag_map(cli.tag_map) == {"04A1B2C3D4E5F6": "skb/knight/2"}
    assert "learned skb/knight/2 (was skb/knight/1)" in cli.text


def test_learn_refuses_unknown_identities_and_leaves_the_map_alone(cli):
    store = SimulatedTagStore([SimTag("04A1B2C3D4E5F6")])
    store.tap("04A1B2C3D4E5F6")
    assert cli(store, "learn", "skb/queen") == 2
    assert not cli.tag_map.exists()


def test_learn_refuses_a_tag_whose_text_names_something_else(cli):
    store = SimulatedTagStore([SimTag("04A1B2C3D4E5F6", text="player/red")])
    store.tap("04A1B2C3D4E5F6")
    assert cli(store, "learn", "player/blue", timeout=0.3) == 1
    assert "its text wins over the map" in cli.text
    assert not cli.tag_map.exists()


def test_learn_never_overwrites_a_broken_tag_map(cli):
    cli.tag_map.write_text("04A1B2C3D4E5F6: [not, an, identity]\n")
    store = SimulatedTagStore([SimTag("04A1B2C3D4E5F7")])
    store.tap("04A1B2C3D4E5F7")
    with pytest.raises(config.ConfigError, match="tags.yaml:1"):
        cli(store, "learn", "skb/witch")
    assert cli.tag_map.read_text() == "04A1B2C3D4E5F6: [not, an, identity]\n"


def test_tag_map_is_replaced_atomically(tmp_path, monkeypatch):
    path = tmp_path / "tags.yaml"
    path.write_text("# my tiles\n# second line\n04A1B2C3: skb/witch\n")
    os.chmod(path, 0o600)
    synced: list[int] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    save_tag_map(path, {"04a1b2c3": "skb/witch", "04A1B2C4": "skb/knight/4"})
    assert len(synced) == 2  # the new file, then the directory holding the rename
    assert path.read_text() == "# my tiles\n# second line\n04A1B2C3: skb/witch\n04A1B2C4: skb/knight/4\n"
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tags.yaml"]


def test_a_failed_tag_map_write_keeps_the_old_map_and_no_litter(tmp_path, monkeypatch):
    path = tmp_path / "tags.yaml"
    save_tag_map(path, {"04A1B2C3": "skb/witch"})
    before = path.read_bytes()

    def power_cut(src: Any, dst: Any) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(OSError):
        save_tag_map(path, {"04A1B2C3": "skb/knight/1"})
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tags.yaml"]


def test_uids_that_look_like_numbers_stay_strings(tmp_path):
    path = tmp_path / "tags.yaml"
    save_tag_map(path, {"01234567": "skb/witch", "12345678": "skb/knight/1", "1E100000": "dt/box/1"})
    assert config.load_tag_map(path) == {"01234567": "skb/witch", "12345678": "skb/knight/1",
                                         "1E100000": "dt/box/1"}


# ---------------------------------------------------------------- read
def test_read_shows_uid_type_text_and_identity(cli):
    store = SimulatedTagStore([SimTag("04A1B2C3D4E5F6", text="onw/werewolf/2")])
    store.tap("04A1B2C3D4E5F6")
    assert cli(store, "read") == 0
    assert cli.lines() == ["tap a tag", "UID:       04A1B2C3D4E5F6",
                           "type:      simulated NTAG215", "NDEF text: onw/werewolf/2",
                           "identity:  onw/werewolf/2"]


def test_read_names_a_bare_uid_through_the_tag_map(cli):
    save_tag_map(cli.tag_map, {"04A1B2C3D4E5F6": "game/demagogos"})
    store = SimulatedTagStore([SimTag("04A1B2C3D4E5F6", writable=False), SimTag("04A1B2C3D4E5F7")])
    store.tap("04A1B2C3D4E5F6")
    assert cli(store, "read") == 0
    assert "identity:  game/demagogos (from the tag map)" in cli.text
    assert "type:      simulated NTAG215 (read-only)" in cli.text
    store.tap("04A1B2C3D4E5F7")
    assert cli(store, "read") == 0
    assert cli.lines()[-1] == "identity:  unknown"


def test_read_shows_a_broken_tag_as_such(cli):
    store = SimulatedTagStore([SimTag("04A1B2C3D4E5F6", garbled=True)])
    store.tap("04A1B2C3D4E5F6")
    assert cli(store, "read") == 0
    assert "NDEF text: garbled NDEF data" in cli.text and "identity:  unknown" in cli.text


def test_read_with_nothing_tapped_times_out(cli):
    assert cli(SimulatedTagStore(), "read", timeout=0.1) == 1
    assert "no tag tapped in time" in cli.text


# ---------------------------------------------------------------- check
def seven_knights(store: SimulatedTagStore) -> dict[str, SimTag]:
    out = {}
    for n, identity in enumerate(TAG_SETS["seven-knights"], start=1):
        out[identity] = store.add(SimTag(f"04BB{n:010X}", text=identity))
    return out


def test_check_ends_by_itself_when_every_piece_was_seen(cli):
    store = SimulatedTagStore()
    pieces = seven_knights(store)
    store.tap(*[t.uid for t in reversed(pieces.values())])
    started = time.monotonic()
    assert cli(store, "check", "seven-knights", timeout=10) == 0
    assert time.monotonic() - started < 2
    assert cli.lines()[-2:] == ["seven-knights: 23 of 23 pieces", "all present"]


def test_check_reports_missing_duplicate_and_unknown_tags(cli):
    save_tag_map(cli.tag_map, {"04CC000000000003": "skb/knight/5"})
    store = SimulatedTagStore()
    pieces = seven_knights(store)
    store.add(SimTag("04CC000000000001", text="skb/knight/2"))  # a second knight 2
    store.add(SimTag("04CC000000000002"))  # nothing on it, not in the map
    store.add(SimTag("04CC000000000003"))  # knight 5 by the map
    store.add(SimTag("04CC000000000004", text="onw/seer/1"))  # another game's
    store.add(SimTag("04CC000000000005", garbled=True))
    store.tap(pieces["skb/knight/1"].uid, pieces["skb/knight/2"].uid, "04CC000000000001",
              "04CC000000000002", "04CC000000000003", "04CC000000000004", "04CC000000000005",
              pieces["skb/knight/1"].uid)
    assert cli(store, "check", "seven-knights", timeout=0.5) == 1
    report = cli.lines()
    assert "seven-knights: 3 of 23 pieces" in report
    missing = [i for i in TAG_SETS["seven-knights"] if i not in ("skb/knight/1", "skb/knight/2", "skb/knight/5")]
    assert f"missing (20): {', '.join(missing)}" in report
    assert f"duplicate: skb/knight/2 on {pieces['skb/knight/2'].uid}, 04CC000000000001" in report
    assert ("unknown (2): 04CC000000000002 (no text, not in the tag map), "
            "04CC000000000005 (garbled NDEF data)") in report
    assert "from other sets: onw/seer/1 (04CC000000000004)" in report
    assert f"{pieces['skb/knight/1'].uid}: seen already" in report


def test_next_ends_the_walk(cli):
    store = SimulatedTagStore()
    pieces = seven_knights(store)
    store.tap(pieces["skb/witch"].uid)

    def press_next() -> None:
        store.wait_drained()
        cli.done.set()

    presser = threading.Thread(target=press_next)
    presser.start()
    started = time.monotonic()
    assert cli(store, "check", "seven-knights", timeout=30) == 1
    presser.join(WAIT)
    assert time.monotonic() - started < 2
    assert "seven-knights: 1 of 23 pieces" in cli.text


def test_check_in_order_asks_for_each_piece_in_turn(cli):
    store = SimulatedTagStore()
    for n, identity in enumerate(COMPONENT_SETS["games"]):
        store.add(SimTag(f"04DD{n:010X}", text=identity))
    store.tap(*[f"04DD{n:010X}" for n in range(4)])
    assert cli(store, "check", "games", "--in-order") == 0
    asks = [line for line in cli.lines() if line.startswith("tap ")]
    assert asks == [f"tap {i}" for i in COMPONENT_SETS["games"]]


def test_check_refuses_an_unknown_set(cli):
    assert cli(SimulatedTagStore(), "check", "chess") == 2
    assert "unknown set 'chess'" in cli.text


def test_check_all_expects_every_set(cli):
    assert cli(SimulatedTagStore(), "check", "all", timeout=0.1) == 1
    total = len({i for ids in TAG_SETS.values() for i in ids})
    assert f"all: 0 of {total} pieces" in cli.text


# ---------------------------------------------------------------- the simulated store
def test_taps_on_the_store_reach_an_attached_simulated_reader():
    seen: list[Any] = []
    reader = SimulatedReader()
    reader.start(SimpleNamespace(submit=seen.append))
    store = SimulatedTagStore(reader=reader)
    (a,) = store.blank(1)
    store.tap(a.uid)
    a.text = "player/white"
    store.tap(a.uid)
    assert seen[1:] == [TagSeen(uid=a.uid), TagSeen(uid=a.uid, text="player/white")]


# ---------------------------------------------------------------- on nfcpy, over udp
@pytest.fixture
def emulator() -> Iterator[Type3Emulator]:
    with Type3Emulator() as emu:
        yield emu


def nfc_station(emulator: Type3Emulator) -> Any:
    return lambda device: NfcStation(emulator.path, targets=["212F"])


def test_write_and_verify_on_an_emulated_type3_tag_then_read_it(emulator, tmp_path):
    tag = emulator.place(blank_tag())
    cli = Run(tmp_path)
    args = parse("write", "skb/knight/3", "--tag-map", str(cli.tag_map), "--timeout", "3")
    assert run(args, reader_factory=nfc_station(emulator), out=cli.out, done=cli.done) == 0
    assert f"{tag.uid}: written and verified: skb/knight/3" in cli.text
    assert tag.texts() == ["skb/knight/3"]  # in the tag's memory, as an NDEF text record

    reread = Run(tmp_path)
    args = parse("read", "--tag-map", str(cli.tag_map), "--timeout", "3")
    assert run(args, reader_factory=nfc_station(emulator), out=reread.out, done=reread.done) == 0
    assert reread.lines()[1:4] == [f"UID:       {tag.uid}", "type:      Type3Tag",
                                   "NDEF text: skb/knight/3"]


def test_write_one_tag_after_another_on_the_emulated_reader(emulator, tmp_path):
    first, second = blank_tag(), blank_tag()
    emulator.place(first)
    cli = Run(tmp_path)

    def operator() -> None:
        # Swap tiles when the companion says the first one is done.
        deadline = time.monotonic() + WAIT
        while "verified: player/red" not in cli.text and time.monotonic() < deadline:
            time.sleep(0.01)
        emulator.remove()
        emulator.place(second)

    hand = threading.Thread(target=operator)
    hand.start()
    args = parse("write", "player/red", "player/blue", "--tag-map", str(cli.tag_map), "--timeout", "3")
    try:
        assert run(args, reader_factory=nfc_station(emulator), out=cli.out, done=cli.done) == 0, cli.text
    finally:
        hand.join(WAIT)
    assert (first.texts(), second.texts()) == (["player/red"], ["player/blue"])
    assert "[2/2] tap the sticker for Blue player (player/blue)" in cli.text


def test_write_refuses_a_read_only_emulated_tag(emulator, tmp_path):
    tag = emulator.place(blank_tag(writable=False))
    cli = Run(tmp_path)
    args = parse("write", "dt/box/4", "--tag-map", str(cli.tag_map), "--timeout", "0.5")
    assert run(args, reader_factory=nfc_station(emulator), out=cli.out, done=cli.done) == 1
    assert f"{tag.uid}: this tag is read-only" in cli.text


def test_learn_and_read_a_tag_without_ndef_on_the_emulated_reader(emulator, tmp_path):
    tag = emulator.place(no_ndef_tag())
    cli = Run(tmp_path)
    args = parse("learn", "onw/villager/4", "--tag-map", str(cli.tag_map), "--timeout", "3")
    assert run(args, reader_factory=nfc_station(emulator), out=cli.out, done=cli.done) == 0
    assert load_tag_map(cli.tag_map) == {tag.uid: "onw/villager/4"}
    reread = Run(tmp_path)
    args = parse("read", "--tag-map", str(cli.tag_map), "--timeout", "3")
    assert run(args, reader_factory=nfc_station(emulator), out=reread.out, done=reread.done) == 0
    assert "identity:  onw/villager/4 (from the tag map)" in reread.text


def test_check_on_the_emulated_reader(emulator, tmp_path):
    emulator.place(text_tag("game/madness-hour"))
    cli = Run(tmp_path)
    args = parse("check", "madness-hour", "--tag-map", str(cli.tag_map), "--timeout", "1")
    assert run(args, reader_factory=nfc_station(emulator), out=cli.out, done=cli.done) == 1
    assert "ok game/madness-hour" in cli.text  # a game's card is part of its box
    assert ("missing (18): mh/girl/human, mh/girl/evil-god, mh/climax, mh/side/keep, mh/side/kill, "
            "mh/state/sane, mh/state/mad, mh/state/dead, player/red") in cli.text


def test_no_reader_points_at_companion_doctor(tmp_path: Path) -> None:
    """`tags read` with no reader should say where to look next."""
    from hardware.supervisor import ReaderUnavailable

    def missing(device: str) -> Any:
        raise ReaderUnavailable("no device found on 'usb'")

    out = io.StringIO()
    args = parse("read", "--tag-map", str(tmp_path / "tags.yaml"), "--device", "usb")
    assert run(args, reader_factory=missing, out=out) == 1
    assert "no reader" in out.getvalue() and "companion doctor" in out.getvalue()


def test_learn_explains_itself_in_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("learn", "--help")
    help_text = capsys.readouterr().out
    assert "UID" in help_text and "one identity per tag" in help_text


def test_terminal_escapes_in_tag_text_are_not_printed_raw(cli):
    """A tag written elsewhere with escape sequences (clear
    screen, set the title, a bidi override, a carriage return forging a line)
    is shown with the escapes spelled out."""
    evil = "player/red\x1b[2J\x1b]0;owned\x07\r\nidentity:  game/one-night\u202e"
    store = SimulatedTagStore([SimTag("04AA000000000001", text=evil)])
    store.tap("04AA000000000001")
    assert cli(store, "read") == 0
    assert not any(c in cli.text for c in "\x1b\x07\r\u202e")
    assert "NDEF text: player/red\\x1b[2J\\x1b]0;owned\\x07\\x0d\\x0aidentity:  game/one-night\\u202e" in cli.text
    assert [ln for ln in cli.lines() if ln.startswith("identity:")] == [
        "identity:  " + evil.replace("\x1b", "\\x1b").replace("\x07", "\\x07").replace("\r", "\\x0d")
        .replace("\n", "\\x0a").replace("\u202e", "\\u202e") + " (not a known identity)"]
