"""Playback: order, no overlap, the ambience mixed under speech, the null
player, device failures, the masking loop, and speak() never blocking."""

from __future__ import annotations

import shutil
import sys
import threading
import time
import wave
from array import array
from pathlib import Path

import pytest

from voice import masking
from voice.base import Line
from voice.cache import WavCache
from voice.player import (
    RATE,
    AplayPlayer,
    NullPlayer,
    PcmError,
    duration,
    mix,
    read_pcm,
    rms,
    trim_silence,
    write_wav,
)
from voice.render import RenderSettings, ToneRenderer
from voice.tts_voice import TtsVoice

needs_aplay = pytest.mark.skipif(shutil.which("aplay") is None, reason="aplay (alsa-utils) is not installed")


def const(value: int, seconds: float) -> bytes:
    return array("h", [value] * int(seconds * RATE)).tobytes()


def until(cond, timeout: float = 5.0) -> bool:
    """Bounded poll for something another thread does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.005)
    return cond()


def fake_aplay(tmp_path: Path) -> tuple[str, Path, Path]:
    """A stand-in for aplay that appends its stdin to a file and logs its args."""
    capture, args_log = tmp_path / "stream.raw", tmp_path / "args.log"
    script = tmp_path / "fake-aplay"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"open({str(args_log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        f"with open({str(capture)!r}, 'ab') as f:\n"
        "    f.write(sys.stdin.buffer.read())\n"
    )
    script.chmod(0o755)
    return str(script), capture, args_log


def samples(raw: bytes) -> list[int]:
    return list(array("h", raw))


# ------------------------------------------------------------------ PCM helpers
def test_foreign_wavs_are_converted_to_the_stream_format(tmp_path):
    path = tmp_path / "stereo24.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(3)
        w.setframerate(44100)
        frame = (1000 << 8).to_bytes(3, "little", signed=True) * 2  # both channels at 1000 (16-bit scale)
        w.writeframes(frame * 4410)  # 0.1 s
    pcm = read_pcm(path)
    assert duration(pcm) == pytest.approx(0.1, abs=0.001)
    assert set(samples(pcm)) == {1000}


def test_unreadable_audio_is_refused_with_the_file_name(tmp_path):
    bad = tmp_path / "noise.wav"
    bad.write_bytes(b"not a wave file at all")
    with pytest.raises(PcmError, match="noise.wav"):
        read_pcm(bad)


def test_mixing_clips_at_full_scale():
    assert samples(mix(const(30000, 0.001), const(10000, 0.001)))[0] == 32767
    assert samples(mix(const(-30000, 0.001), const(-10000, 0.001)))[0] == -32768


def test_trim_silence_keeps_the_sound_and_a_small_margin():
    pcm = const(0, 0.5) + const(4000, 0.2) + const(0, 0.5)
    trimmed = trim_silence(pcm, keep=0.02)
    assert 0.2 <= duration(trimmed) <= 0.25
    assert rms(trimmed) > 3000


# ------------------------------------------------------------------ null player
def test_null_player_plays_in_order_and_accounts_durations():
    now = [100.0]
    player = NullPlayer(clock=lambda: now[0])
    gate = threading.Event()

    def slow() -> bytes:
        gate.wait(5)
        return const(100, 0.5)

    player.play("first", slow)
    player.play("second", lambda: const(100, 0.25))
    assert not player.wait_idle(0.05)  # the first is still being prepared …
    assert list(player.history) == []  # … and the second does not overtake it
    gate.set()
    assert player.wait_idle(5)
    assert [h.label for h in player.history] == ["first", "second"]
    assert player.seconds_played == pytest.approx(0.75, abs=0.001)
    assert player.busy_until == pytest.approx(100.75, abs=0.001)
    assert player.is_speaking()
    now[0] = 101.0
    assert not player.is_speaking()
    player.close()


def test_a_line_that_cannot_be_prepared_is_reported_and_the_next_still_plays():
    errors: list[str] = []
    player = NullPlayer(on_error=errors.append)

    def broken() -> bytes:
        raise PcmError("x.wav: not a readable WAV")

    player.play("bad", broken)
    player.play("good", lambda: const(1, 0.1))
    assert player.wait_idle(5)
    assert [h.label for h in player.history] == ["good"]
    assert errors == ["cannot play bad: x.wav: not a readable WAV"]
    player.close()


def test_close_drops_what_is_queued_and_is_idempotent():
    player = NullPlayer()
    player.play("closing", lambda: (player.close(), const(1, 0.1))[1])
    player.play("dropped", lambda: const(1, 0.1))
    assert until(lambda: player._closed)
    player._prepare_thread.join(5)
    assert [h.label for h in player.history] == ["closing"]
    player.close()
    player.play("after", lambda: const(1, 0.1))  # ignored, no error
    assert player.wait_idle(1)


# ------------------------------------------------------------------ aplay player
def test_lines_reach_aplay_whole_and_in_order_never_overlapping(tmp_path):
    cmd, capture, args_log = fake_aplay(tmp_path)
    player = AplayPlayer("hw:1", command=cmd, pace=False)
    a, b, c = const(1000, 0.05), const(2000, 0.11), const(3000, 0.02)
    gate = threading.Event()
    player.play("a", lambda: (gate.wait(5), a)[1])  # the slow one first
    player.play("b", lambda: b)
    player.play("c", lambda: c)
    gate.set()
    assert player.wait_idle(5)
    assert until(lambda: player._proc is None)  # idle: the device is released
    player.close()
    assert capture.read_bytes() == a + b + c
    assert [h.label for h in player.history] == ["a", "b", "c"]
    assert all(h.cue_ms >= 0 for h in player.history)
    assert "-D hw:1" in args_log.read_text()
    assert "-f S16_LE -r 22050 -c 1" in args_log.read_text()


def test_ambience_loops_under_speech_at_its_own_level(tmp_path):
    cmd, capture, _ = fake_aplay(tmp_path)
    player = AplayPlayer("default", command=cmd)  # paced: the loop runs in real time
    player.set_ambience("tapping", lambda: const(1000, 0.03))
    assert until(lambda: player._written > 0)  # the loop is playing alone …
    player.play("line", lambda: const(2000, 0.1))  # … when a line comes
    player.set_ambience("tapping", None)
    assert player.wait_idle(5)
    assert until(lambda: player._proc is None)
    player.close()
    stream = samples(capture.read_bytes())
    assert stream.count(3000) == int(0.1 * RATE)  # every sample of the line, mixed
    assert 2000 not in stream  # never the line without the ambience under it
    assert stream[0] == 1000 and stream[-1] == 3000  # the loop stops with the line, as queued


def test_the_stream_stays_open_while_the_ambience_plays(tmp_path):
    cmd, _, args_log = fake_aplay(tmp_path)
    player = AplayPlayer("default", command=cmd)
    player.set_ambience("tapping", lambda: const(500, 0.05))
    assert player.wait_idle(5)
    assert until(lambda: player._proc is not None)
    player.play("one", lambda: const(100, 0.02))
    player.play("two", lambda: const(100, 0.02))
    assert player.wait_idle(5)
    # the stand-in is a Python script: on a loaded machine it may not have logged its
    # start yet, and close() would end it first — its log is made (opened) before its
    # line is written, so the line is what is waited for, not the file
    assert until(lambda: args_log.exists() and args_log.read_text().endswith("\n"))
    player.close()
    assert len(args_log.read_text().splitlines()) == 1  # one aplay for ambience and both lines


def test_a_busy_device_is_reported_once_by_name_without_spinning(tmp_path):
    script, spawns = tmp_path / "busy-aplay", tmp_path / "spawns.log"
    script.write_text(
        f"#!/bin/sh\necho x >> {spawns}\necho 'audio open error: Device or resource busy' >&2\nexit 1\n"
    )
    script.chmod(0o755)
    errors: list[str] = []
    player = AplayPlayer("hw:0", command=str(script), on_error=errors.append, pace=False)
    player.play("one", lambda: const(100, 0.5))
    player.play("two", lambda: const(100, 0.5))
    assert player.wait_idle(10)
    player.close()
    assert errors and all("hw:0" in e and "busy" in e for e in errors)
    assert len(errors) == 1
    assert len(spawns.read_text().split()) <= 4  # one try per line (or two), not a tight loop


@needs_aplay
def test_real_aplay_on_the_null_device_plays_a_line():
    errors: list[str] = []
    player = AplayPlayer("null", on_error=errors.append, pace=False)
    player.play("beep", lambda: const(3000, 0.2))
    assert player.wait_idle(5)
    assert until(lambda: player._proc is None)
    player.close()
    assert errors == []
    assert [h.label for h in player.history] == ["beep"]


# ------------------------------------------------------------------ masking
def test_masking_is_the_same_every_time_and_a_few_seconds_long():
    a, b = masking.generate(), masking.generate()
    assert a == b
    assert 3 <= duration(a) <= 10
    assert rms(a) > 100
    assert max(abs(s) for s in samples(a)) < 32767 * 0.7


def test_masking_loops_without_a_click():
    s = samples(masking.generate())
    diffs = sorted(abs(x - y) for x, y in zip(s, s[1:], strict=False))
    typical = diffs[int(0.99 * len(diffs))]
    assert abs(s[-1] - s[0]) <= typical


def test_masking_is_written_into_the_cache_once(tmp_path):
    path = masking.masking_path(tmp_path)
    stamp = path.stat().st_mtime_ns
    assert masking.masking_path(tmp_path) == path
    assert path.stat().st_mtime_ns == stamp
    assert path.parent == tmp_path


# ------------------------------------------------------------------ TtsVoice on a player
class GatedRenderer(ToneRenderer):
    def __init__(self) -> None:
        super().__init__(RenderSettings())
        self.entered = threading.Event()
        self.release = threading.Event()

    def render(self, text: str, lang: str, out: Path) -> None:
        self.entered.set()
        self.release.wait(5)
        super().render(text, lang, out)


def test_speak_only_enqueues_even_when_the_line_must_be_synthesised(tmp_path):
    renderer = GatedRenderer()
    player = NullPlayer()
    voice = TtsVoice(cache=WavCache(tmp_path, renderer), player=player, packs={}, entries=lambda lang: {})
    voice.speak(Line("onw.seer.wake", "Seer, wake up.", "en", "Seer, wake up."))
    # speak() has returned, yet the render is only now running on the player's thread
    assert renderer.entered.wait(5)
    assert not renderer.release.is_set() and list(player.history) == []
    renderer.release.set()
    assert player.wait_idle(5)
    assert [h.label for h in player.history] == ["onw.seer.wake"]
    voice.close()


def test_voice_ambience_starts_and_stops_the_masking_loop(tmp_path):
    errors: list[str] = []
    player = NullPlayer(on_error=errors.append)
    voice = TtsVoice(
        {"masking_volume": 0.3}, cache=WavCache(tmp_path, ToneRenderer()), player=player, packs={},
        entries=lambda lang: {}, on_error=errors.append,
    )  # fmt: skip
    voice.ambience("table-tapping", True)
    assert player.wait_idle(10)
    assert player.ambience == "table-tapping"
    loop = voice._loops["table-tapping"]
    full = read_pcm(masking.masking_path(tmp_path))
    assert rms(loop) == pytest.approx(0.3 * rms(full), rel=0.02)
    voice.ambience("something-else", False)  # not playing: ignored
    voice.ambience("table-tapping", False)
    assert player.wait_idle(5)
    assert player.ambience is None
    voice.ambience("thunder", True)
    assert player.wait_idle(5)
    assert errors and "thunder" in errors[0]
    voice.close()
    voice.close()


def test_write_wav_is_atomic_and_readable(tmp_path):
    path = tmp_path / "x" / "clip.wav"
    write_wav(path, const(123, 0.1))
    assert read_pcm(path) == const(123, 0.1)
    assert [p.name for p in path.parent.iterdir()] == ["clip.wav"]
