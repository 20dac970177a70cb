"""Bad files: the corpus in ``qa/reliability/corpus`` (wrong types, unknown keys,
broken YAML, latin-1 and UTF-16 files, duplicate keys, tabs, a directory, a
huge file…) is refused with a ``ConfigError`` naming the file and the line,
and none of it crashes the daemon: ``companion run --simulate`` with a bad
``--config`` exits with code 2 and a one-line message naming the file."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from companion.app import config  # noqa: E402
from companion.app.config import ConfigError  # noqa: E402
from companion.app.simulate import run_script  # noqa: E402
from qa.reliability.badfiles import (  # noqa: E402
    CONFIGS,
    CONFIGS_OK,
    CORPUS,
    SCRIPTS,
    TAGMAPS,
    TAGMAPS_OK,
    Bad,
    make_huge,
    tag_map_config,
)
from qa.reliability.proc import child_env, companion_cmd  # noqa: E402


def cases(entries: list[Bad]) -> list[object]:
    return [pytest.param(b, id=b.name, marks=[pytest.mark.xfail(strict=True, reason=b.bug)] if b.bug else [])
            for b in entries]


def assert_names_file_and_line(e: ConfigError, path: Path, line: int | None) -> None:
    assert e.file == str(path), e
    assert e.line == line, f"expected line {line}: {e}"
    text = str(e)
    where = f"{path}:{line}: " if line else f"{path}: "
    assert text.startswith(where), text
    assert "\n" not in text and len(text) < 500, text[:300]
    assert e.problem.strip()


def test_the_corpus_is_complete() -> None:
    on_disk = {p.name for p in (CORPUS / "config").iterdir()}
    assert on_disk == {b.name for b in CONFIGS} | set(CONFIGS_OK)
    assert {p.name for p in (CORPUS / "tagmap").iterdir()} == {b.name for b in TAGMAPS} | set(TAGMAPS_OK)
    assert {p.name for p in (CORPUS / "script").iterdir()} == {b.name for b in SCRIPTS}
    assert (CORPUS / "config" / "is-a-directory.yaml").is_dir()


@pytest.mark.parametrize("bad", cases(CONFIGS))
def test_a_bad_config_is_refused_naming_file_and_line(bad: Bad) -> None:
    path = bad.path("config")
    t0 = time.monotonic()
    with pytest.raises(ConfigError) as info:
        config.load([path])
    assert time.monotonic() - t0 < 2.0
    assert_names_file_and_line(info.value, path, bad.line)


@pytest.mark.parametrize("name", sorted(CONFIGS_OK))
def test_unusual_but_valid_configs_load(name: str) -> None:
    """An empty file or comments only change nothing; a UTF-8 BOM and CRLF line ends are fine."""
    cfg = config.load([CORPUS / "config" / name])
    assert cfg["language"] == CONFIGS_OK[name]


def test_a_huge_config_is_refused_unread(tmp_path: Path) -> None:
    path = make_huge(tmp_path / "huge.yaml")
    with pytest.raises(ConfigError) as info:
        config.load([path])
    assert_names_file_and_line(info.value, path, None)
    assert "bytes" in info.value.problem


@pytest.mark.parametrize("bad", cases(TAGMAPS))
def test_a_bad_tag_map_is_refused_naming_file_and_line(bad: Bad) -> None:
    path = bad.path("tagmap")
    with pytest.raises(ConfigError) as info:
        config.load_tag_map(path)
    assert_names_file_and_line(info.value, path, bad.line)


@pytest.mark.parametrize("name", sorted(TAGMAPS_OK))
def test_digit_only_uids_in_a_hand_written_tag_map_are_read_as_written(name: str) -> None:
    """``04123456: player/red`` was once read by YAML as the
    octal 1091374 and refused as "1091374 is not a tag UID"."""
    assert config.load_tag_map(CORPUS / "tagmap" / name) == TAGMAPS_OK[name]


def test_a_number_that_is_not_a_uid_is_named_as_written() -> None:
    path = CORPUS / "tagmap" / "number-not-hex.yaml"
    with pytest.raises(ConfigError) as info:
        config.load_tag_map(path)
    assert info.value.problem == "'0x04A1B2C3D4' is not a tag UID (hex, e.g. 04A1B2C3D4E5F6)"


def test_a_script_uid_that_is_a_list_is_file_line_problem(tmp_path: Path) -> None:
    """``uid: [1, 2]`` ended in a traceback (normalise_uid on a list)."""
    path = CORPUS / "script" / "uid-a-list.yaml"
    with pytest.raises(ConfigError) as info:
        run_script(path, state=tmp_path, out=io.StringIO())
    assert str(info.value) == f"{path}:4: uid takes a tag UID in hex (e.g. 04A1B2C3D4E5F6), not [1, 2]"


def test_a_huge_tag_map_is_refused_unread(tmp_path: Path) -> None:
    path = make_huge(tmp_path / "tags.yaml")
    with pytest.raises(ConfigError) as info:
        config.load_tag_map(path)
    assert_names_file_and_line(info.value, path, None)


@pytest.mark.parametrize("bad", cases(SCRIPTS))
def test_a_bad_table_script_is_refused_naming_file_and_line(bad: Bad, tmp_path: Path) -> None:
    path = bad.path("script")
    with pytest.raises(ConfigError) as info:
        run_script(path, state=tmp_path, out=io.StringIO())
    assert_names_file_and_line(info.value, path, bad.line)


# ------------------------------------------------------------------ the daemon
def run_daemon(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    tmp.mkdir(parents=True, exist_ok=True)
    return subprocess.run(companion_cmd(*args), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60, cwd=str(tmp), env=child_env())


def daemon_refuses(config_path: Path, named: Path, line: int | None, tmp: Path) -> str | None:
    """None if ``companion --config FILE run --simulate`` exits 2 with one line naming ``named``."""
    p = run_daemon(["--config", str(config_path), "run", "--simulate", "--state", str(tmp / "state")], tmp)
    lines = p.stderr.strip().splitlines()
    where = f"{named}:{line}:" if line else f"{named}:"
    if p.returncode != 2 or len(lines) != 1 or where not in lines[0] or "Traceback" in p.stderr:
        return f"{named.name}: exit {p.returncode}, stderr {p.stderr.strip()[-300:]!r}"
    return None


@pytest.mark.daemon
def test_the_daemon_refuses_every_bad_file_with_exit_2_and_one_line(tmp_path: Path) -> None:
    jobs: list[tuple[Path, Path, int | None, Path]] = []
    for b in CONFIGS:
        jobs.append((b.path("config"), b.path("config"), b.line, tmp_path / f"c-{b.name}"))
    for b in TAGMAPS:
        work = tmp_path / f"t-{b.name}"
        work.mkdir()
        jobs.append((tag_map_config(b.path("tagmap"), work / "companion.yaml"), b.path("tagmap"), b.line, work))
    huge = make_huge(tmp_path / "huge.yaml")
    jobs.append((huge, huge, None, tmp_path / "huge"))
    with ThreadPoolExecutor(max_workers=6) as pool:
        problems = [p for p in pool.map(lambda j: daemon_refuses(*j), jobs) if p]
    assert not problems, "\n".join(problems)


@pytest.mark.daemon
def test_run_takes_config_after_the_subcommand(tmp_path: Path) -> None:
    """The config named after the subcommand: ``companion run --simulate --config BAD``."""
    bad = CORPUS / "config" / "tabs.yaml"
    p = run_daemon(["run", "--simulate", "--state", str(tmp_path / "state"), "--config", str(bad)], tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [f"companion: {bad}:4: broken YAML: found character '\\t' "
                                             "that cannot start any token"]


# -------------------------------------------- files an admin writes that are not regular files
def test_a_fifo_named_like_a_voice_pack_file_does_not_hang_start_up(tmp_path: Path) -> None:
    """Only regular files are opened: a FIFO would block the load forever."""
    import os

    from voice.packs import VoicePack

    pack = tmp_path / "pack"
    pack.mkdir()
    os.mkfifo(pack / "onw.seer.wake.wav")
    with ThreadPoolExecutor(max_workers=1) as pool:
        loaded = pool.submit(VoicePack.load, pack).result(timeout=10)
    assert len(loaded) == 0
    assert [(p.name, p.reason) for p in loaded.problems] == [
        ("onw.seer.wake.wav", "not a regular file (a pipe, device or socket is never opened)")]


def test_a_huge_voice_pack_file_is_refused_unread(tmp_path: Path) -> None:
    """106 MB cost 388 MB of RSS when read whole; refused by its size before it is opened."""
    from voice.packs import VoicePack

    pack = tmp_path / "pack"
    pack.mkdir()
    with open(pack / "ambience.masking.wav", "wb") as f:
        f.write(b"RIFF\xff\xff\xff\xffWAVE")
        f.truncate(106 * 2**20)  # sparse: no disk used
    loaded = VoicePack.load(pack)
    assert len(loaded) == 0 and "106 MB" in loaded.problems[0].reason


def test_a_voice_pack_file_without_a_wav_header_is_refused_unread(tmp_path: Path) -> None:
    from voice.packs import VoicePack

    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "onw.seer.wake.wav").write_bytes(b"ID3\x04" + bytes(5000))
    loaded = VoicePack.load(pack)
    assert "no RIFF/WAVE header" in loaded.problems[0].reason


def test_a_one_night_deck_must_be_the_players_and_the_centre() -> None:
    """``deck: {3: {villager: 100000000}}`` ended in MemoryError; a deck is
    the players' cards plus 2 in the centre (1 allowed, as the 7-player ruling has)."""
    ok = {"games": {"one-night": {"deck": {4: {"villager": 3, "werewolf": 1, "seer": 1}}}}}  # 4 + 1
    config.load([], ok)
    for deck in ({3: {"villager": 100000000}}, {4: {"villager": 4, "werewolf": 2, "seer": 1, "thief": 1}},
                 {5: {"villager": 1, "werewolf": 2, "seer": 1, "thief": 1}}, {8: {"villager": 4, "werewolf": 2}},
                 {4: {"werewolf": 3, "villager": 3}}):
        with pytest.raises(ConfigError, match="games.one-night.deck"):
            config.load([], {"games": {"one-night": {"deck": deck}}})


def test_the_readable_simulation_view_spells_out_escapes_in_tag_text() -> None:
    """The refused tag's text reaches the terminal in
    ``companion run --simulate`` too."""
    from companion.app.pretty import render

    line = render({"t": 1.0, "event": "rejected", "input": "x\x1b[31mred\r", "reason": "unknown tag"})
    assert "\x1b" not in line and "\r" not in line and "x\\x1b[31mred\\x0d" in line
