"""The pyttsx3 render worker: real espeak-ng audio, files only, never played."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import wave
from array import array
from pathlib import Path

import pytest

from voice.render import (
    RenderError,
    RenderSettings,
    SubprocessRenderer,
    ToneRenderer,
    _render_with,
    engine_id,
    espeak_available,
)

needs_espeak = pytest.mark.skipif(not espeak_available(), reason="espeak-ng is not installed")


def wav_facts(path: Path) -> tuple[float, float]:
    """(seconds, RMS of the 16-bit samples) with the stdlib only."""
    with wave.open(str(path), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth()) == (1, 2)
        frames = w.readframes(w.getnframes())
        seconds = w.getnframes() / w.getframerate()
    samples = array("h", frames)
    return seconds, math.sqrt(sum(s * s for s in samples) / max(1, len(samples)))


@pytest.fixture
def renderer():
    r = SubprocessRenderer(RenderSettings(rate=150, volume=0.8))
    yield r
    r.close()


@needs_espeak
def test_english_sentence_renders_audible_speech_of_plausible_length(renderer, tmp_path):
    out = tmp_path / "en.wav"
    renderer.render("The seer wakes up and looks at one card.", "en", out)
    seconds, rms = wav_facts(out)
    assert 0.3 < seconds < 10
    assert rms > 300  # well above silence (espeak-ng speech at volume 0.8 is ~2000+)
    if shutil.which("soxi"):
        soxi = float(subprocess.run(["soxi", "-D", str(out)], capture_output=True, text=True).stdout)
        assert soxi == pytest.approx(seconds, abs=0.01)


@needs_espeak
def test_japanese_kana_reading_renders_audible_speech(renderer, tmp_path):
    out = tmp_path / "ja.wav"
    renderer.render("うらないしは めを さまして ください。", "ja", out)
    seconds, rms = wav_facts(out)
    assert 0.3 < seconds < 10
    assert rms > 300


def spy_aplay(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose PATH has a fake aplay that logs every call."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    played = tmp_path / "played.log"
    fake = bin_dir / "aplay"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {played}\n')
    fake.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}, played


@needs_espeak
def test_the_aplay_spy_sees_pyttsx3_playing_on_its_own(tmp_path):
    # Control for the next test: pyttsx3's `say` does shell out to aplay.
    env, played = spy_aplay(tmp_path)
    code = "import pyttsx3; e = pyttsx3.init('espeak'); e.say('hi'); e.runAndWait()"
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=60, check=True)
    assert played.exists()


@needs_espeak
def test_two_lines_back_to_back_make_two_files_and_nothing_is_played(tmp_path):
    # The worker only ever uses save_to_file: a `say` would play by itself and,
    # after a save_to_file, overwrite the earlier file instead.
    env, played = spy_aplay(tmp_path)
    r = SubprocessRenderer(RenderSettings(), env=env)
    try:
        a, b = tmp_path / "a.wav", tmp_path / "b.wav"
        r.render("Everyone, close your eyes.", "en", a)
        r.render("Werewolves, wake up and look for other werewolves.", "en", b)
    finally:
        r.close()
    assert a.exists() and b.exists()
    assert a.read_bytes() != b.read_bytes()
    assert wav_facts(a)[0] < wav_facts(b)[0]  # each file holds its own line
    assert not played.exists()


@needs_espeak
def test_short_lines_back_to_back_never_come_out_empty(renderer, tmp_path):
    # Regression: pyttsx3's runAndWait cancelled espeak-ng's queued commands now
    # and then, leaving an empty file (about 1 job in 60 before the fix).
    jobs = [("red", "en"), ("3", "en"), ("あか", "ja"), ("and", "en"), ("3", "ja"), (", seat", "en")] * 12
    for i, (text, lang) in enumerate(jobs):
        out = tmp_path / f"{i}.wav"
        renderer.render(text, lang, out)
        seconds, rms = wav_facts(out)
        assert seconds > 0.1 and rms > 100, (i, text, lang)
    assert renderer.retries <= 1  # the last-resort retry stays a rarity


class FlakyEngine:
    """Gives no audio for the first ``empties`` jobs, then a real tone."""

    def __init__(self, empties: int) -> None:
        self.empties, self.runs = empties, 0

    def synth(self, text: str, voice: str, rate: int) -> tuple[bytes, int]:
        self.runs += 1
        if self.runs > self.empties:
            return array("h", [8000, -8000] * 4000).tobytes(), 22050
        return b"", 22050


def test_an_empty_file_from_the_engine_is_rendered_again(tmp_path):
    engine = FlakyEngine(empties=1)
    job = {"text": "3", "voice": "en-us", "rate": 150, "volume": 0.8, "out": str(tmp_path / "3.wav")}
    assert _render_with(engine, job) == 2
    assert wav_facts(tmp_path / "3.wav")[0] > 0.1
    assert [p.name for p in tmp_path.iterdir()] == ["3.wav"]


def test_an_engine_that_keeps_writing_nothing_is_refused(tmp_path):
    job = {"text": "3", "voice": "en-us", "rate": 150, "volume": 0.8, "out": str(tmp_path / "3.wav")}
    with pytest.raises(RenderError, match="no audio.*3 attempts"):
        _render_with(FlakyEngine(empties=99), job)
    assert list(tmp_path.iterdir()) == []  # no half-made file left behind


@needs_espeak
def test_rate_is_applied_on_the_job_that_asks_for_it(tmp_path):
    lengths = {}
    for rate in (100, 250):
        r = SubprocessRenderer(RenderSettings(rate=rate))
        try:
            r.render("Knights, tap your tiles from left to right.", "en", tmp_path / f"{rate}.wav")
        finally:
            r.close()
        lengths[rate] = wav_facts(tmp_path / f"{rate}.wav")[0]
    assert lengths[100] > 1.8 * lengths[250]


@needs_espeak
def test_engine_noise_never_reaches_our_stdout(renderer, tmp_path, capfd):
    renderer.render("Quiet please.", "en", tmp_path / "q.wav")
    assert "Audio saved" not in capfd.readouterr().out


@needs_espeak
def test_a_dead_worker_is_replaced_on_the_next_job(renderer, tmp_path):
    renderer.render("One.", "en", tmp_path / "1.wav")
    assert renderer._proc is not None
    renderer._proc.kill()
    renderer._proc.wait()
    renderer.render("Two.", "en", tmp_path / "2.wav")
    assert wav_facts(tmp_path / "2.wav")[1] > 300


@needs_espeak
def test_empty_text_is_refused_without_touching_the_engine(renderer, tmp_path):
    with pytest.raises(RenderError, match="empty"):
        renderer.render("   ", "en", tmp_path / "x.wav")
    assert renderer.renders == 0 and renderer._proc is None


def test_missing_espeak_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr("voice.render.espeak_available", lambda: False)
    r = SubprocessRenderer()
    with pytest.raises(RenderError, match="espeak-ng is not installed"):
        r.render("Hello.", "en", tmp_path / "x.wav")


def test_voice_is_chosen_per_language_and_configurable():
    s = RenderSettings.from_config({"rate": 170, "volume": 1.5, "voices": {"en": "en-gb"}})
    assert (s.rate, s.volume) == (170, 1.0)  # volume clipped to the engine's range
    assert s.voice_for("en") == "en-gb"
    assert s.voice_for("ja") == "ja"
    assert s.voice_for("en-US") == "en-gb"
    assert s.voice_for("fr") == "fr"  # espeak-ng picks by language code


def test_engine_id_names_pyttsx3_and_espeak_versions():
    ident = engine_id()
    assert ident.startswith("pyttsx3 ")
    if espeak_available():
        assert "eSpeak NG" in ident or "espeak" in ident.lower()


def test_tone_renderer_writes_distinct_audible_files(tmp_path):
    r = ToneRenderer()
    r.render("red", "en", tmp_path / "a.wav")
    r.render("blue", "en", tmp_path / "b.wav")
    assert r.renders == 2
    assert (tmp_path / "a.wav").read_bytes() != (tmp_path / "b.wav").read_bytes()
    assert wav_facts(tmp_path / "a.wav")[1] > 300
