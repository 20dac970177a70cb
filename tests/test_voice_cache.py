"""The WAV cache: keys, hits that cost no synthesis, prerendering, and
dynamic lines assembled from cached fragments; the prerender command."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import pytest

from voice.base import Line
from voice.cache import (
    NUMBERS,
    WavCache,
    counted_fragments,
    fragments_of,
    match_template,
    split_template,
)
from voice.player import NullPlayer, duration, rms
from voice.render import RenderSettings, ToneRenderer, espeak_available
from voice.tts_voice import TtsVoice, line_entries

EN_YAML = textwrap.dedent(
    """\
    fmt.list_sep: ", "
    fmt.list_and: " and "
    fmt.nobody: "nobody"
    name.red: red
    name.blue: blue
    name.green: green
    table.ready: "Ready. Tap a game card to begin."
    undo.done: "Undone."
    table.player_seated: "{player}, seat {n}."
    table.resumed_gathering: "Seated so far: {players}. Tap the rest."
    """
)
JA_YAML = textwrap.dedent(
    """\
    fmt.list_sep: {text: "、", kana: "、"}
    fmt.list_and: {text: "、", kana: "、"}
    name.red: {text: 赤, kana: あか}
    name.blue: {text: 青, kana: あお}
    table.ready: {text: 準備ができました。, kana: じゅんびが できました。}
    table.player_seated: {text: "{player}、{n}番目の席。", kana: "{player}、{n}ばんめのせき。"}
    """
)


@pytest.fixture
def lines_dir(tmp_path: Path) -> Path:
    d = tmp_path / "lines"
    d.mkdir()
    (d / "en.yaml").write_text(EN_YAML, encoding="utf-8")
    (d / "ja.yaml").write_text(JA_YAML, encoding="utf-8")
    return d


def line(key: str, reading: str, lang: str = "en", **params: object) -> Line:
    return Line(key=key, text=reading, lang=lang, reading=reading, params=params)


def voice_on(tmp_path: Path, renderer: ToneRenderer, lines_dir: Path | None = None) -> TtsVoice:
    entries = line_entries(lines_dir) if lines_dir else (lambda lang: {})
    return TtsVoice(
        cache=WavCache(tmp_path / "cache", renderer), player=NullPlayer(), packs={}, entries=entries
    )


# ------------------------------------------------------------------ keys and hits
def test_a_fixed_line_renders_once_then_costs_no_synthesis(tmp_path):
    renderer = ToneRenderer()
    cache = WavCache(tmp_path, renderer)
    first = cache.ensure("Undone.", "en")
    again = cache.ensure("Undone.", "en")
    assert first == again and first.exists()
    assert renderer.renders == 1 and cache.renders == 1


def test_the_key_changes_with_everything_that_changes_the_sound(tmp_path):
    base = WavCache(tmp_path, ToneRenderer(RenderSettings(rate=150)))
    key = base.key("Undone.", "en")
    assert base.key("Undone.", "en") == key
    assert base.key("Undone!", "en") != key
    assert base.key("Undone.", "ja") != key
    assert base.key("Undone.", "en", "part") != key
    assert WavCache(tmp_path, ToneRenderer(RenderSettings(rate=180))).key("Undone.", "en") != key
    assert WavCache(tmp_path, ToneRenderer(RenderSettings(volume=0.5))).key("Undone.", "en") != key
    other_voice = RenderSettings(voices={"en": "en-gb", "ja": "ja"})
    assert WavCache(tmp_path, ToneRenderer(other_voice)).key("Undone.", "en") != key
    newer = ToneRenderer()
    newer.engine_id = "tone 2"
    assert WavCache(tmp_path, newer).key("Undone.", "en") != key


def test_prerender_renders_fixed_lines_only_and_reports_size(tmp_path):
    renderer = ToneRenderer()
    cache = WavCache(tmp_path, renderer)
    lines = [line("undo.done", "Undone."), line("a", "Ready."), line("s", "red, seat 3.", player="red", n=3)]
    stats = cache.prerender(lines)
    assert (stats.count, stats.rendered) == (2, 2)
    assert [c[0] for c in renderer.calls] == ["Undone.", "Ready."]
    assert stats.bytes == sum(p.stat().st_size for p in tmp_path.rglob("*.wav"))
    assert stats.audio_seconds == pytest.approx(0.05 * (len("Undone.") + len("Ready.")), abs=0.01)
    again = cache.prerender(lines)
    assert (again.count, again.rendered) == (2, 0) and renderer.renders == 2


def test_numbers_0_to_99_are_prerendered_as_fragments(tmp_path):
    renderer = ToneRenderer()
    stats = WavCache(tmp_path, renderer).prerender_fragments("en", ["red", "blue", "red"])
    assert NUMBERS == tuple(str(n) for n in range(100))
    assert stats.count == 102 and renderer.renders == 102


def test_a_damaged_cache_file_is_rendered_again(tmp_path):
    renderer = ToneRenderer()
    voice = voice_on(tmp_path, renderer)
    path = voice.cache.ensure("Undone.", "en")
    path.write_bytes(b"RIFF garbage")
    pcm = voice.prepare(line("undo.done", "Undone."))
    assert rms(pcm) > 300 and renderer.renders == 2


# ------------------------------------------------------------------ templates
def test_templates_split_into_literals_and_fields():
    assert split_template("{player}, seat {n}.") == [("", "player"), (", seat ", "n"), (".", None)]
    assert match_template("{player}, seat {n}.", "red, seat 3.") == ["red", "3"]
    assert match_template("{player}、{n}ばんめのせき。", "あか、3ばんめのせき。") == ["あか", "3"]
    assert match_template("{player}, seat {n}.", "Seat three, red.") is None


def test_fragments_of_a_line_file_are_names_list_words_and_template_parts(lines_dir):
    entries = line_entries(lines_dir)("en")
    frags = fragments_of(entries)
    assert {"red", "blue", "green", "and", "nobody", ", seat", "Seated so far:", ". Tap the rest."} <= set(
        frags
    )
    assert "Ready. Tap a game card to begin." not in frags  # a fixed line is a line, not a fragment


def test_a_dynamic_line_is_assembled_from_cached_fragments_without_synthesis(tmp_path, lines_dir):
    renderer = ToneRenderer()
    voice = voice_on(tmp_path, renderer, lines_dir)
    for lang in ("en", "ja"):
        entries = voice.entries(lang)
        voice.cache.prerender_fragments(lang, [*fragments_of(entries, lang=lang), *counted_fragments(entries, lang)])
    before = renderer.renders
    en = voice.prepare(line("table.player_seated", "blue, seat 7.", player="blue", n=7))
    ja = voice.prepare(line("table.player_seated", "あお、12ばんめのせき。", "ja", player="blue", n=12))
    assert renderer.renders == before  # every piece came from the cache
    # blue + ", seat" + 7, with pauses between and after
    assert duration(en) > 0.05 * (len("blue") + len(", seat") + len("7"))
    assert rms(en) > 300 and rms(ja) > 300


def test_a_list_of_names_reuses_each_names_fragment(tmp_path, lines_dir):
    renderer = ToneRenderer()
    voice = voice_on(tmp_path, renderer, lines_dir)
    voice.cache.prerender_fragments("en", fragments_of(voice.entries("en")))
    before = renderer.renders
    voice.prepare(line("table.resumed_gathering", "Seated so far: red, blue and green. Tap the rest.",
                       players=["red", "blue", "green"]))  # fmt: skip
    assert renderer.renders == before


def test_an_uncached_value_is_rendered_live_once_then_cached(tmp_path, lines_dir):
    renderer = ToneRenderer()
    voice = voice_on(tmp_path, renderer, lines_dir)
    voice.cache.prerender_fragments("en", fragments_of(voice.entries("en")))
    before = renderer.renders
    seated = line("table.player_seated", "aki, seat 2.", player="aki", n=2)
    voice.prepare(seated)
    assert renderer.calls[before:] == [("aki", "en")]
    voice.prepare(seated)
    assert renderer.renders == before + 1


def test_a_reading_that_does_not_fit_its_template_is_rendered_whole(tmp_path, lines_dir):
    renderer = ToneRenderer()
    voice = voice_on(tmp_path, renderer, lines_dir)
    odd = line("table.player_seated", "Seat three goes to red.", player="red", n=3)
    voice.prepare(odd)
    assert renderer.calls == [("Seat three goes to red.", "en")]
    voice.prepare(odd)  # and it is cached whole
    assert renderer.renders == 1


def test_assembly_can_be_turned_off(tmp_path, lines_dir):
    renderer = ToneRenderer()
    voice = TtsVoice({"assemble": False}, cache=WavCache(tmp_path, renderer), player=NullPlayer(), packs={},
                     entries=line_entries(lines_dir))  # fmt: skip
    voice.prepare(line("table.player_seated", "red, seat 3.", player="red", n=3))
    assert renderer.calls == [("red, seat 3.", "en")]


# ------------------------------------------------------------------ the command
def prerender_args(tmp_path: Path, lines_dir: Path, *langs: str) -> argparse.Namespace:
    from voice import prerender

    parser = argparse.ArgumentParser()
    prerender.configure_parser(parser)
    argv = ["prerender", "--lines-dir", str(lines_dir), "--cache-dir", str(tmp_path / "cache")]
    for lang in langs:
        argv += ["--lang", lang]
    args = parser.parse_args(argv)
    args.voice_config = {"rate": 160, "volume": 0.8}
    return args


def test_fixed_lines_of_a_line_file_skip_names_formats_and_dynamic_lines(lines_dir):
    from voice.prerender import fixed_lines

    keys = [ln.key for ln in fixed_lines("en", line_entries(lines_dir)("en"))]
    assert keys == ["table.ready", "undo.done"]
    ja = fixed_lines("ja", line_entries(lines_dir)("ja"))
    assert [ln.reading for ln in ja] == ["じゅんびが できました。"]


@pytest.mark.skipif(not espeak_available(), reason="espeak-ng is not installed")
def test_prerender_command_renders_the_fixture_then_finds_it_all_cached(tmp_path, lines_dir, capsys):
    from voice import prerender

    assert prerender.run(prerender_args(tmp_path, lines_dir, "en", "ja")) == 0
    out = capsys.readouterr().out
    assert "en: 2 lines + " in out and "ja: 1 lines + " in out
    assert "MB" in out and "s of audio" in out and "took" in out
    wavs = list((tmp_path / "cache").rglob("*.wav"))
    assert len(wavs) > 2 * 100  # numbers 0–99 per language, names, parts, lines, the masking loop
    assert prerender.run(prerender_args(tmp_path, lines_dir, "en", "ja")) == 0
    assert ", 0 rendered," in capsys.readouterr().out
