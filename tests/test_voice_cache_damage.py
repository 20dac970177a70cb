"""A damaged WAV cache, and a render worker whose parent left early: each
test is named after what was found.

A damaged cache file — zero bytes, a 20-byte stub, a WAV cut short, garbage —
is met on a cue, while assembling a dynamic line and by prerender; every one
of those evicts it and renders it again.  Files are fsynced before they are
renamed into place, stray temporary files are cleaned at start, and a render
worker whose parent left early ends without a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import test_voice_cache as fixtures

from voice import player as player_mod
from voice.cache import STALE_TEMP_S, WavCache
from voice.player import rms, wav_problem, write_wav
from voice.prerender import fill, warm
from voice.render import ToneRenderer, espeak_available

ROOT = Path(__file__).resolve().parent.parent
lines_dir = fixtures.lines_dir  # the line files of the cache tests, as a fixture here too
line, prerender_args, voice_on = fixtures.line, fixtures.prerender_args, fixtures.voice_on


def truncate_half(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: 44 + (len(data) - 44) // 2])  # the header promises twice what is there


def test_finding_a_20_byte_cached_fragment_is_evicted_so_lines_with_it_are_heard(tmp_path, lines_dir):
    renderer = ToneRenderer()
    voice = voice_on(tmp_path, renderer, lines_dir)
    warm(voice.cache, voice.entries("en"), "en")
    red = voice.cache.path("red", "en", "part")
    red.write_bytes(b"RIFF\x0c\x00\x00\x00WAVEjunk")  # 20 bytes: what an SD card left of "red"
    before = renderer.renders
    pcm = voice.prepare(line("table.player_seated", "red, seat 3.", player="red", n=3))
    assert renderer.calls[before:] == [("red", "en")]  # only the damaged fragment rendered again
    assert wav_problem(red) is None and rms(pcm) > 300
    voice.prepare(line("table.player_seated", "red, seat 4.", player="red", n=4))
    assert renderer.renders == before + 1  # and it stays good: no render the second time


def test_finding_a_zero_length_file_does_not_kill_prerender(tmp_path, lines_dir):
    renderer = ToneRenderer()
    cache = WavCache(tmp_path / "cache", renderer)
    table = {"undo.done": ("Undone.", "Undone."), "name.red": ("red", "red")}
    warm(cache, table, "en")
    cache.path("Undone.", "en").write_bytes(b"")
    cache.path("7", "en", "part").write_bytes(b"")
    lines, frags = warm(cache, table, "en")  # was: EOFError from wave.open
    assert (lines.evicted, frags.evicted) == (1, 1)
    assert (lines.rendered, frags.rendered) == (1, 1)
    assert wav_problem(cache.path("Undone.", "en")) is None


@pytest.mark.skipif(not espeak_available(), reason="espeak-ng is not installed")
def test_finding_a_zero_length_file_does_not_kill_the_prerender_command(tmp_path, lines_dir, capsys):
    from voice import prerender

    assert prerender.run(prerender_args(tmp_path, lines_dir, "en")) == 0
    victim = next(p for p in (tmp_path / "cache" / "en").glob("*.wav"))
    victim.write_bytes(b"")
    capsys.readouterr()
    assert prerender.run(prerender_args(tmp_path, lines_dir, "en")) == 0
    out = capsys.readouterr().out
    assert "1 damaged files rendered again" in out and ", 1 rendered," in out
    assert wav_problem(victim) is None


def test_finding_a_zero_length_file_does_not_stop_the_background_fill(tmp_path, lines_dir):
    renderer = ToneRenderer()
    voice = voice_on(tmp_path, renderer, lines_dir)
    fill(voice, ["en"])
    voice.cache.path("blue", "en", "part").write_bytes(b"")
    stats = fill(voice, ["ja", "en"])
    assert stats.evicted == 1 and wav_problem(voice.cache.path("blue", "en", "part")) is None


def test_finding_the_background_fill_stopping_gives_a_reason(monkeypatch):
    from companion.app import wiring

    def broken(voice, langs, gate=None):
        raise EOFError  # str() is "": the old message ended in an empty reason

    monkeypatch.setattr("voice.prerender.fill", broken)
    said: list[str] = []
    wiring._fill(object(), "ja", said.append)
    assert said == ["voice prerender stopped: EOFError: "]


def test_finding_a_truncated_file_no_longer_counts_as_good(tmp_path, lines_dir):
    renderer = ToneRenderer()
    voice = voice_on(tmp_path, renderer, lines_dir)
    lines, _ = warm(voice.cache, voice.entries("en"), "en")
    ready = voice.cache.path("Ready. Tap a game card to begin.", "en")
    truncate_half(ready)
    assert wav_problem(ready) is not None
    lines, _ = warm(voice.cache, voice.entries("en"), "en")
    assert lines.evicted == 1 and wav_problem(ready) is None
    truncate_half(ready)  # and on a cue
    before = renderer.renders
    pcm = voice.prepare(line("table.ready", "Ready. Tap a game card to begin."))
    assert renderer.renders == before + 1 and rms(pcm) > 300


def test_finding_files_were_renamed_into_place_without_an_fsync(tmp_path, monkeypatch):
    order: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        order.append("fsync dir" if os.path.isdir(f"/proc/self/fd/{fd}") else "fsync file")
        real_fsync(fd)

    def replace(src, dst) -> None:
        order.append("rename")
        real_replace(src, dst)

    monkeypatch.setattr(player_mod.os, "fsync", fsync)
    monkeypatch.setattr(player_mod.os, "replace", replace)
    WavCache(tmp_path, ToneRenderer()).ensure("Undone.", "en")
    assert order == ["fsync file", "rename"]  # the data on the card before the name points at it


def test_finding_stray_temporary_files_piled_up_and_are_cleaned_at_start(tmp_path):
    root = tmp_path / "cache"
    (root / "en").mkdir(parents=True)
    old = time.time() - STALE_TEMP_S - 10
    stray = [root / "en" / ".abc.123.456.raw.wav", root / "en" / ".abc.wav.123.456.tmp",
             root / "en" / ".abc.wav.123.part", root / ".masking.wav.1.2.tmp"]
    for p in stray:
        p.write_bytes(b"x" * 100)
        os.utime(p, (old, old))
    fresh = root / "en" / ".def.9.9.raw.wav"  # a render under way right now (another process)
    fresh.write_bytes(b"x")
    keep = root / "en" / "abcdef.wav"
    keep.write_bytes(b"x")
    os.utime(keep, (old, old))
    cache = WavCache(root, ToneRenderer())
    assert cache.clean() == 4
    assert not any(p.exists() for p in stray) and fresh.exists() and keep.exists()


def test_finding_the_daemons_voice_cleans_stray_files_when_it_starts(tmp_path):
    from voice.tts_voice import TtsVoice

    stray = tmp_path / "cache" / "ja" / ".x.1.2.raw.wav"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"")
    old = time.time() - STALE_TEMP_S - 10
    os.utime(stray, (old, old))
    voice = TtsVoice({"cache_dir": str(tmp_path / "cache"), "player": "null"}, packs={}, entries=lambda lang: {})
    try:
        assert not stray.exists()
    finally:
        voice.close()


def test_finding_the_render_worker_printed_a_broken_pipe_traceback_when_the_parent_left(tmp_path):
    # `--voice tts` quitting at once: the parent is gone before the child says "ready".
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from voice.render import serve; serve()"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    proc.stdout.close()  # nobody reads the replies any more
    job = f'{{"engine": "tone", "text": "hi", "voice": "en-us", "rate": 150, "volume": 0.8, "out": "{tmp_path}/x.wav"}}\n'
    try:
        proc.stdin.write(job.encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    assert proc.wait(timeout=30) == 0
    err = proc.stderr.read().decode()
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_a_wav_with_every_frame_passes_the_check(tmp_path):
    p = tmp_path / "ok.wav"
    write_wav(p, b"\x10\x00" * 2205)
    assert wav_problem(p) is None
    truncate_half(p)
    assert "truncated" in (wav_problem(p) or "")
