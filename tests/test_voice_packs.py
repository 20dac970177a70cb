"""Recorded voice packs: a file per line key overrides TTS; missing keys fall
back to TTS; bad files are reported by name."""

from __future__ import annotations

import struct
import wave
from array import array
from pathlib import Path

import pytest

from voice.base import Line
from voice.cache import WavCache
from voice.packs import VoicePack
from voice.player import RATE, NullPlayer, duration, read_pcm, rms, write_wav
from voice.render import ToneRenderer
from voice.tts_voice import TtsVoice


def recording(path: Path, seconds: float = 0.4, value: int = 5000) -> Path:
    write_wav(path, array("h", [value, -value] * int(seconds * RATE / 2)).tobytes())
    return path


def seer(lang: str = "en") -> Line:
    return Line("onw.seer.wake", "Seer, wake up.", lang, "Seer, wake up.")


def voice_with_pack(tmp_path: Path, pack_dir: Path, renderer: ToneRenderer, errors: list[str]) -> TtsVoice:
    entries = {"onw.seer.wake": ("Seer, wake up.", "Seer, wake up."), "undo.done": ("Undone.", "Undone."),
               "table.player_seated": ("{player}, seat {n}.", "{player}, seat {n}.")}  # fmt: skip
    return TtsVoice(
        {"pack_dir": str(pack_dir), "volume": 1.0}, cache=WavCache(tmp_path / "cache", renderer),
        player=NullPlayer(), entries=lambda lang: entries, on_error=errors.append, languages=("en",),
    )  # fmt: skip


def test_a_pack_file_overrides_its_line_and_other_keys_fall_back_to_tts(tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    recorded = recording(pack / "onw.seer.wake.wav")
    renderer, errors = ToneRenderer(), []
    voice = voice_with_pack(tmp_path, pack, renderer, errors)
    assert voice.prepare(seer()) == read_pcm(recorded)
    assert renderer.renders == 0
    undone = voice.prepare(Line("undo.done", "Undone.", "en", "Undone."))
    assert renderer.calls == [("Undone.", "en")] and rms(undone) > 300
    assert errors == []


def test_through_speak_the_recording_is_what_plays(tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    recording(pack / "onw.seer.wake.wav", seconds=1.25)
    voice = voice_with_pack(tmp_path, pack, ToneRenderer(), [])
    voice.speak(seer())
    assert voice.player.wait_idle(5)
    [played] = list(voice.player.history)
    assert (played.label, played.seconds) == ("onw.seer.wake", pytest.approx(1.25, abs=0.001))
    voice.close()


def test_a_recording_never_replaces_a_dynamic_line(tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    recording(pack / "table.player_seated.wav")
    renderer = ToneRenderer()
    voice = voice_with_pack(tmp_path, pack, renderer, [])
    voice.prepare(
        Line("table.player_seated", "red, seat 3.", "en", "red, seat 3.", {"player": "red", "n": 3})
    )
    assert ("red", "en") in renderer.calls and ("3", "en") in renderer.calls


def test_pack_volume_scales_recordings(tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    recorded = recording(pack / "onw.seer.wake.wav", value=10000)
    voice = TtsVoice({"pack_dir": str(pack), "volume": 0.5}, cache=WavCache(tmp_path / "c", ToneRenderer()),
                     player=NullPlayer(), entries=lambda lang: {}, languages=("en",))  # fmt: skip
    assert rms(voice.prepare(seer())) == pytest.approx(0.5 * rms(read_pcm(recorded)), rel=0.01)


def test_bad_files_are_reported_by_name_and_skipped(tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    recording(pack / "onw.seer.wake.wav")
    (pack / "undo.done.wav").write_text("this is not audio")
    (pack / "onw.thief.wake.mp3").write_bytes(b"ID3")
    with wave.open(str(pack / "onw.night.start.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)  # no frames
    full = pack / "onw.night.end.wav"
    recording(full, seconds=1.0)
    (pack / "onw.vote.call.wav").write_bytes(full.read_bytes()[:2000])  # cut short
    recording(pack / "onw.ser.wake.wav")  # a typo
    known = {
        "onw.seer.wake",
        "undo.done",
        "onw.thief.wake",
        "onw.night.start",
        "onw.night.end",
        "onw.vote.call",
    }
    loaded = VoicePack.load(pack, known_keys=known)
    assert sorted(loaded) == ["onw.night.end", "onw.seer.wake"]
    problems = {p.name: p.reason for p in loaded.problems}
    assert set(problems) == {"undo.done.wav", "onw.thief.wake.mp3", "onw.night.start.wav", "onw.vote.call.wav",
                             "onw.ser.wake.wav"}  # fmt: skip
    assert "not a readable WAV" in problems["undo.done.wav"]
    assert "not a .wav file" in problems["onw.thief.wake.mp3"]
    assert "no audio" in problems["onw.night.start.wav"]
    assert "truncated" in problems["onw.vote.call.wav"]
    assert "typo" in problems["onw.ser.wake.wav"]
    assert all(
        str(pack) in line and name in line
        for line, name in zip(loaded.report(), sorted(problems), strict=True)
    )


def test_the_voice_reports_bad_pack_files_when_it_starts(tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "undo.done.wav").write_text("nope")
    errors: list[str] = []
    voice = voice_with_pack(tmp_path, pack, ToneRenderer(), errors)
    assert len(errors) == 1 and "undo.done.wav" in errors[0]
    assert rms(voice.prepare(Line("undo.done", "Undone.", "en", "Undone."))) > 300  # TTS instead


def test_a_missing_pack_folder_is_reported_not_fatal(tmp_path):
    loaded = VoicePack.load(tmp_path / "nowhere")
    assert len(loaded) == 0 and "not found" in str(loaded.problems[0])


def test_recordings_in_other_formats_are_converted_once(tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    src = pack / "onw.seer.wake.wav"
    with wave.open(str(src), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(44100)
        w.writeframes(array("h", [3000, 3000] * 44100).tobytes())  # 1 s of stereo 44.1 kHz
    converted = tmp_path / "converted"
    loaded = VoicePack.load(pack, convert_dir=converted)
    playable = loaded.get("onw.seer.wake")
    assert playable is not None and playable.parent == converted
    with wave.open(str(playable), "rb") as w:
        assert (w.getnchannels(), w.getframerate()) == (1, RATE)
    assert duration(read_pcm(playable)) == pytest.approx(1.0, abs=0.01)
    stamp = playable.stat().st_mtime_ns
    assert VoicePack.load(pack, convert_dir=converted).get("onw.seer.wake") == playable
    assert playable.stat().st_mtime_ns == stamp


def test_a_language_folder_is_preferred_to_the_flat_pack(tmp_path):
    pack = tmp_path / "pack"
    (pack / "ja").mkdir(parents=True)
    recording(pack / "onw.seer.wake.wav", value=1000)
    recording(pack / "ja" / "onw.seer.wake.wav", value=2000)
    assert VoicePack.for_language(pack, "ja").folder == pack / "ja"
    assert VoicePack.for_language(pack, "en").folder == pack
    assert len(VoicePack.for_language(None, "en")) == 0


def test_a_pack_can_replace_the_generated_ambience(tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    recording(pack / "ambience.table-tapping.wav", value=4000)
    player = NullPlayer()
    voice = TtsVoice({"pack_dir": str(pack), "masking_volume": 0.5}, cache=WavCache(tmp_path / "c", ToneRenderer()),
                     player=player, entries=lambda lang: {"x": ("x", "x")}, languages=("en",))  # fmt: skip
    voice.ambience("table-tapping", True)
    assert player.wait_idle(5)
    assert rms(voice._loops["table-tapping"]) == pytest.approx(2000, rel=0.01)
    assert not list((tmp_path / "c").glob("masking-*.wav"))  # nothing generated
    voice.close()


def test_a_pack_still_overrides_its_line_whatever_the_engine(tmp_path):
    from voice.render import RenderSettings

    pack = tmp_path / "pack"
    pack.mkdir()
    recorded = recording(pack / "onw.seer.wake.wav")
    for engine in ("piper", "espeak"):
        renderer = ToneRenderer(RenderSettings(engines={"en": engine}))
        voice = voice_with_pack(tmp_path / engine, pack, renderer, [])
        assert voice.prepare(seer()) == read_pcm(recorded), engine
        assert renderer.renders == 0, engine


# Crafted WAVs once crashed the start (exit 1, a traceback).
def _riff(*chunks: bytes) -> bytes:
    body = b"WAVE" + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _chunk(tag: bytes, data: bytes, size: int | None = None) -> bytes:
    return tag + struct.pack("<I", len(data) if size is None else size) + data + b"\0" * (len(data) % 2)


def _fmt(rate: int = RATE) -> bytes:
    return struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)  # PCM, mono, 16-bit


_AUDIO = _chunk(b"data", b"\x10\x00\xf0\xff" * 2000)
CRAFTED = {  # file → what is said of it
    "zero-rate": (_riff(_chunk(b"fmt ", _fmt(0)), _AUDIO), "a sample rate of 0 Hz"),  # was ZeroDivisionError
    "huge-fmt": (_riff(b"fmt " + struct.pack("<I", 0xFFFFFFF0) + _fmt(), _AUDIO),  # was RuntimeError
                 "a chunk's size runs past the end of the file"),
    "list-overflow": (_riff(_chunk(b"fmt ", _fmt()), b"LIST" + struct.pack("<I", 0xFFFFFFF0) + b"INFO", _AUDIO),
                      "a chunk's size runs past the end of the file"),  # was RuntimeError
    "one-hertz": (_riff(_chunk(b"fmt ", _fmt(1)), _AUDIO), "a sample rate of 1 Hz"),  # 16 KB became 176 MB
}


@pytest.mark.parametrize("crafted", sorted(CRAFTED))
def test_a_crafted_wav_is_named_and_skipped(tmp_path, crafted):
    pack = tmp_path / "pack"
    pack.mkdir()
    recording(pack / "onw.seer.wake.wav")
    data, said = CRAFTED[crafted]
    (pack / "undo.done.wav").write_bytes(data)
    loaded = VoicePack.load(pack, known_keys={"onw.seer.wake", "undo.done"}, convert_dir=tmp_path / "conv")
    assert sorted(loaded) == ["onw.seer.wake"]
    [problem] = loaded.problems
    assert problem.name == "undo.done.wav" and said in problem.reason, problem


def test_the_voice_starts_past_every_crafted_wav_and_names_each(tmp_path):
    """What `companion run` does at start: the pack loads, every crafted file
    is reported by name, the lines they were for fall back to TTS."""
    pack = tmp_path / "pack"
    pack.mkdir()
    for name, (data, _said) in CRAFTED.items():
        (pack / f"ambience.{name}.wav").write_bytes(data)
    (pack / "undo.done.wav").write_bytes(CRAFTED["zero-rate"][0])
    errors: list[str] = []
    voice = voice_with_pack(tmp_path, pack, ToneRenderer(), errors)
    named = sorted(f"ambience.{n}.wav" for n in CRAFTED) + ["undo.done.wav"]
    assert len(errors) == len(named) and all(n in " ".join(errors) for n in named), errors
    assert rms(voice.prepare(Line("undo.done", "Undone.", "en", "Undone."))) > 300  # TTS instead
