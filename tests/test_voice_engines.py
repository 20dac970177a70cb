"""Every engine, through the real render worker: valid, audible, unclipped
files with short edges, at one loudness whatever the engine, with rate and
volume obeyed; a missing engine falls back to espeak-ng, and says so.

A test for an engine that is not installed here skips (CI installs the
``voice`` extra, so there they run); the fallback tests force the missing
case, so the espeak-ng-only path is tested everywhere.  Only a small sample
is rendered here; ``qa/bench/voice_engines.py`` renders the whole cache.
"""

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

from voice import engines
from voice.base import Line
from voice.cache import WavCache
from voice.player import NullPlayer, wav_problem
from voice.render import RenderSettings, SubprocessRenderer, ToneRenderer, resolve_engines
from voice.tts_voice import TtsVoice, line_entries

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = {  # lang → a short and a long line, as each engine is handed them
    "en": ["Undone.", "The seer wakes up and looks at one card."],
    "ja": ["取り消しました。", "占い師は目を覚まして、カードを一枚見てください。"],
    "ja-kana": ["とりけしました。", "うらないしは めをさまして、カードをいちまい みてください。"],
}
ENGINE_LANGS = [("espeak", "en"), ("espeak", "ja"), ("openjtalk", "ja"), ("piper", "en")]
MAX_EDGE_S = 0.3
FLOOR = 0.01 * 32768  # -40 dBFS: below this a sample counts as silence
MATCH_DB = 3.0  # speech levels of any two files may differ by at most this


def installed(name: str) -> pytest.MarkDecorator:
    problem = engines.info(name).missing()
    return pytest.mark.skipif(problem is not None, reason=f"{name}: {problem}")


def sample_for(engine: str, lang: str) -> list[str]:
    if lang == "ja" and not engines.info(engine).reads_written:
        return SAMPLE["ja-kana"]
    return SAMPLE[lang]


def samples(path: Path) -> tuple[array[int], int]:
    with wave.open(str(path), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth()) == (1, 2)
        return array("h", w.readframes(w.getnframes())), w.getframerate()


def level_db(s: array[int], rate: int) -> float:
    """Speech level measured here, independently of the worker: RMS of the
    20 ms windows within 30 dB of the loudest, in dBFS."""
    n = rate // 50
    rms = [math.sqrt(sum(x * x for x in s[i:i + n]) / len(s[i:i + n])) for i in range(0, len(s), n)]
    loud = [r for r in rms if r >= 0.0316 * max(rms)]
    return 20 * math.log10(math.sqrt(sum(r * r for r in loud) / len(loud)) / 32768)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[tuple[str, str], list[Path]]:
    """Each installed engine's sample, rendered once for the module."""
    out: dict[tuple[str, str], list[Path]] = {}
    tmp = tmp_path_factory.mktemp("engines")
    for engine, lang in ENGINE_LANGS:
        if engines.info(engine).missing():
            continue
        r = SubprocessRenderer(RenderSettings(engines={lang: engine}))
        try:
            paths = []
            for i, text in enumerate(sample_for(engine, lang)):
                p = tmp / f"{engine}-{lang}-{i}.wav"
                r.render(text, lang, p)
                paths.append(p)
            out[engine, lang] = paths
        finally:
            r.close()
    return out


@pytest.mark.parametrize("engine,lang", [pytest.param(e, lang, marks=installed(e)) for e, lang in ENGINE_LANGS])
def test_every_engine_writes_valid_audible_unclipped_speech_with_short_edges(rendered, engine, lang):
    for path in rendered[engine, lang]:
        assert wav_problem(path) is None
        s, rate = samples(path)
        assert rate == 22050
        peak = max(abs(min(s)), max(s))
        assert peak < 32767 * 0.95, f"{path.name}: clipped (peak {peak})"
        assert level_db(s, rate) > -40, f"{path.name}: silent"
        loud = [i for i, x in enumerate(s) if abs(x) > FLOOR]
        lead, tail = loud[0] / rate, (len(s) - loud[-1]) / rate
        assert lead <= MAX_EDGE_S and tail <= MAX_EDGE_S, f"{path.name}: {lead:.2f} s / {tail:.2f} s of silence"


def test_loudness_is_matched_across_engines_and_lines(rendered):
    if len(rendered) < 2:
        pytest.skip("only one engine installed")
    levels = {p.name: level_db(*samples(p)) for paths in rendered.values() for p in paths}
    assert max(levels.values()) - min(levels.values()) <= MATCH_DB, levels


@pytest.mark.skipif(shutil.which("sox") is None, reason="sox is not installed")
def test_sox_agrees_the_files_are_not_clipped_and_not_silent(rendered):
    for paths in rendered.values():
        for p in paths:
            stat = subprocess.run(["sox", str(p), "-n", "stat"], capture_output=True, text=True).stderr
            facts = dict(line.split(":", 1) for line in stat.splitlines() if ":" in line)
            assert 0.05 < float(facts["Maximum amplitude"]) < 0.95, (p.name, stat)
            assert float(facts["RMS     amplitude"]) > 0.01, (p.name, stat)


@pytest.mark.parametrize("engine,lang", [pytest.param(e, lang, marks=installed(e)) for e, lang in ENGINE_LANGS])
def test_rate_and_volume_work_for_every_engine(tmp_path, engine, lang):
    text = sample_for(engine, lang)[1]
    facts = {}
    for rate, volume in [(110, 0.8), (220, 0.8), (220, 0.4)]:
        r = SubprocessRenderer(RenderSettings(rate=rate, volume=volume, engines={lang: engine}))
        try:
            p = tmp_path / f"{rate}-{volume}.wav"
            r.render(text, lang, p)
        finally:
            r.close()
        s, sr = samples(p)
        facts[rate, volume] = (len(s) / sr, level_db(s, sr))
    assert facts[110, 0.8][0] > 1.4 * facts[220, 0.8][0]  # twice the rate: clearly shorter
    assert facts[220, 0.4][1] == pytest.approx(facts[220, 0.8][1] - 6.0, abs=1.0)  # half the volume: -6 dB


def test_assembled_fragments_do_not_jump_in_volume(tmp_path):
    """The fragments of one dynamic line, each rendered alone, at one level."""
    engine = "openjtalk" if not engines.info("openjtalk").missing() else "espeak"
    r = SubprocessRenderer(RenderSettings(engines={"ja": engine}))
    cache = WavCache(tmp_path, r)
    voice = TtsVoice(cache=cache, player=NullPlayer(), packs={}, entries=line_entries())
    try:
        text, kana = "赤、3番目の席。", "あか、3ばんめのせき。"
        voice.prepare(Line("table.player_seated", text, "ja", kana, {"player": "red", "n": 3}))
        parts = sorted((tmp_path / "ja").glob("*.wav"))
        assert len(parts) == 3  # 赤, 3番目 (the number with its counter), の席。
        levels = [level_db(*samples(p)) for p in parts]
        assert max(levels) - min(levels) <= MATCH_DB, levels
    finally:
        r.close()


# ------------------------------------------------------------------ fallback
def test_a_missing_engine_falls_back_to_espeak_and_says_why(monkeypatch):
    monkeypatch.setattr(engines.importlib.util, "find_spec", lambda name: None)
    chosen, notes = resolve_engines({"ja": "openjtalk", "en": "piper"})
    assert chosen == {}
    assert len(notes) == 2
    assert "openjtalk for ja is not available" in notes[0] and "pyopenjtalk" in notes[0]
    assert "using pyttsx3 + espeak-ng instead" in notes[0]
    s = RenderSettings.from_config({"engine": {"ja": "openjtalk", "en": "piper"}})
    assert (s.engine_for("ja"), s.engine_for("en")) == ("espeak", "espeak")
    assert not s.reads_written("ja")  # espeak-ng gets the kana reading


def test_an_engine_for_a_language_it_does_not_speak_falls_back():
    chosen, notes = resolve_engines({"en": "openjtalk"})
    assert chosen == {} and "does not speak 'en'" in notes[0]


def test_the_fallback_is_said_once_when_the_voice_starts(tmp_path, monkeypatch):
    real = engines.importlib.util.find_spec
    monkeypatch.setattr(engines.importlib.util, "find_spec", lambda name: None if name == "pyopenjtalk" else real(name))
    said: list[str] = []
    voice = TtsVoice({"engine": {"ja": "openjtalk", "en": "espeak"}, "cache_dir": str(tmp_path), "player": "null"},
                     packs={}, entries=lambda lang: {}, on_error=said.append)
    voice.close()
    assert len(said) == 1 and "openjtalk" in said[0] and "espeak-ng" in said[0]


def test_the_cache_key_names_engine_and_voice(tmp_path):
    keys = {WavCache(tmp_path, ToneRenderer(RenderSettings(engines=e))).key("取り消しました。", "ja")
            for e in ({}, {"ja": "openjtalk"})}
    assert len(keys) == 2
    ojt = SubprocessRenderer(RenderSettings(engines={"ja": "openjtalk"}))
    assert "openjtalk" in ojt.voice_id("ja") and "mei_normal" in ojt.voice_id("ja")
    assert "pyttsx3" in ojt.voice_id("en") and "voice en-us" in ojt.voice_id("en")


def test_no_engine_is_ever_loaded_into_the_daemons_process(tmp_path):
    """The worker loads the engines; the process that speaks through it (the
    daemon) imports none of them, even after rendering with each."""
    code = f"""
import sys; sys.path.insert(0, {str(ROOT)!r})
from pathlib import Path
from voice.base import Line
from voice.tts_voice import TtsVoice
v = TtsVoice({{"engine": {{"ja": "openjtalk", "en": "piper"}}, "cache_dir": {str(tmp_path)!r},
             "player": "null"}}, packs={{}})
v.prepare(Line("undo.done", "取り消しました。", "ja", "とりけしました。"))
v.prepare(Line("undo.done", "Undone.", "en", "Undone."))
v.close()
loaded = sorted(m for m in ("pyttsx3", "pyopenjtalk", "piper", "onnxruntime", "numpy") if m in sys.modules)
print(loaded)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------ commands
def voice_cmd(*argv: str) -> int:
    import argparse

    from voice import prerender

    parser = argparse.ArgumentParser()
    prerender.configure_parser(parser)
    args = parser.parse_args(list(argv))
    args.voice_config = {"engine": {"ja": "openjtalk", "en": "piper"}}
    return prerender.run(args)


def test_voice_engines_lists_what_is_installed_and_in_use(capsys):
    assert voice_cmd("engines") == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[:3]] == ["espeak", "openjtalk", "piper"]
    for line in out[:3]:
        name = line.split()[0]
        assert ("installed;" in line) == (engines.info(name).missing() is None), line
    ojt = out[1]
    assert ("in use for ja" in ojt) == (engines.info("openjtalk").missing() is None)


def test_voice_engines_says_why_an_engine_is_not_used(capsys, monkeypatch):
    real = engines.importlib.util.find_spec
    monkeypatch.setattr(engines.importlib.util, "find_spec", lambda name: None if name == "piper" else real(name))
    assert voice_cmd("engines") == 0
    out = capsys.readouterr().out
    assert "piper      Piper (joe, US English) (en): not installed: the Python module piper" in out
    assert "voice engine piper for en is not available" in out and "espeak-ng instead" in out


@pytest.mark.skipif(engines.info("espeak").missing() is not None, reason="espeak-ng is not installed")
def test_voice_render_writes_one_line_by_key_or_text(tmp_path, capsys):
    out = tmp_path / "undo.wav"
    assert voice_cmd("render", "undo.done", "--lang", "ja", "--engine", "espeak", "-o", str(out)) == 0
    assert wav_problem(out) is None
    assert "espeak (ja): とりけしました。" in capsys.readouterr().out  # the kana reading, for espeak-ng
    free = tmp_path / "free.wav"
    assert voice_cmd("render", "Seat three.", "--engine", "espeak", "-o", str(free)) == 0
    assert wav_problem(free) is None


def test_voice_render_refuses_a_missing_engine_and_a_line_that_needs_parameters(tmp_path, capsys, monkeypatch):
    assert voice_cmd("render", "refuse.player_count", "--lang", "ja", "--engine", "espeak",
                     "-o", str(tmp_path / "x.wav")) == 2
    assert "needs parameters" in capsys.readouterr().err
    real = engines.importlib.util.find_spec
    monkeypatch.setattr(engines.importlib.util, "find_spec", lambda n: None if n == "pyopenjtalk" else real(n))
    assert voice_cmd("render", "undo.done", "--lang", "ja", "--engine", "openjtalk", "-o", str(tmp_path / "y.wav")) == 2
    assert "openjtalk: the Python module pyopenjtalk is not installed" in capsys.readouterr().err
    assert not (tmp_path / "y.wav").exists()


@pytest.mark.skipif(engines.info("openjtalk").missing() is not None, reason="Open JTalk is not installed")
def test_voice_render_gives_open_jtalk_the_text_as_written(tmp_path, capsys):
    out = tmp_path / "undo.wav"
    assert voice_cmd("render", "undo.done", "--lang", "ja", "-o", str(out)) == 0
    assert "openjtalk (mei_normal): 取り消しました。" in capsys.readouterr().out
    assert wav_problem(out) is None


def test_doctor_names_the_engines_and_the_fallback(monkeypatch):
    from companion.app import doctor

    real = engines.importlib.util.find_spec
    monkeypatch.setattr(engines.importlib.util, "find_spec", lambda n: None if n == "pyopenjtalk" else real(n))
    r = doctor.check_speech_engines({"voice": {"backend": "tts", "engine": {"ja": "openjtalk", "en": "espeak"}}})
    assert r.status == "WARN" and "[voice]" in r.fix  # the table still hears espeak-ng, not what is configured
    assert r.detail.startswith("en: espeak, ja: espeak") and "openjtalk for ja is not available" in r.detail
    assert doctor.check_speech_engines({"voice": {"backend": "silent"}}).status == "SKIP"


@pytest.mark.skipif(engines.info("espeak").missing() is not None, reason="espeak-ng is not installed")
def test_the_background_fill_renders_at_the_lowest_priority(tmp_path):
    from voice.prerender import FILL_NICE

    r = SubprocessRenderer(RenderSettings(), nice=FILL_NICE)
    try:
        r.render("Ready.", "en", tmp_path / "x.wav")
        assert r._proc is not None
        nice = int(Path(f"/proc/{r._proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
        assert nice == 19 == FILL_NICE
        assert os.getpriority(os.PRIO_PROCESS, 0) < 19  # the process that asked is untouched
    finally:
        r.close()


@pytest.mark.skipif(engines.info("espeak").missing() is not None, reason="espeak-ng is not installed")
def test_the_daemon_says_the_fallback_once_at_start(tmp_path):
    """`companion run` with Open JTalk configured but not importable: one
    `error` event at start names it, and the daemon carries on with espeak-ng."""
    import json
    import signal
    import time

    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import importlib.util\n_real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda n, *a, **k: None if n == 'pyopenjtalk' else _real(n, *a, **k)\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text('voice:\n  player: "null"\n  engine: {ja: openjtalk, en: espeak}\n')
    companion = Path(sys.executable).parent / "companion"
    env = {**os.environ, "PYTHONPATH": str(hide)}
    proc = subprocess.Popen([str(companion), "run", "--simulate", "--json", "--no-input", "--voice", "tts",
                             "--state", str(tmp_path / "state"), "--config", str(cfg)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    time.sleep(3)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    said = [e["message"] for e in events if e["event"] == "error" and "voice engine" in e["message"]]
    assert len(said) == 1 and "openjtalk for ja is not available" in said[0], said
    assert "Traceback" not in err
