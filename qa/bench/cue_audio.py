"""Cue → audio start: a line from the WAV cache against the same line
synthesised live by pyttsx3 + espeak-ng.

The lines are the ones the benchmark games actually say (``flows``; fixed
lines and lines with players, tiles and numbers in them), rendered by the
daemon's own narrator, in English and Japanese.  ``voice.bench.measure(lines)``
is the voice team's measurement (``TtsVoice`` on ``aplay -D null``); next to
it, and instead of it if it is missing, we measure the same through the
public API of ``voice.tts_voice`` and ``voice.cache`` on a null player
(``_fallback``), which splits the cached figure into preparing the audio and
opening the output.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from qa.bench import flows
from qa.bench.stats import config


def game_lines(count: int) -> list[Any]:
    """The first ``count // 2`` distinct lines the benchmark games say, fixed
    and dynamic alternately (so both kinds are in even a short list), in
    English and in Japanese."""
    from companion.app.catalogue import narrator as table_narrator
    from companion.app.simulate import Simulation
    from voice.base import RecordingVoice

    voice = RecordingVoice()
    with tempfile.TemporaryDirectory(prefix="bench-lines-") as tmp:
        sim = Simulation(config(), Path(tmp), lambda ev: None, voice=voice)
        try:
            flows.play(sim, flows.seven_knights() + flows.one_night())
        finally:
            sim.close()
    seen: set[str] = set()
    fixed: list[Any] = []
    dynamic: list[Any] = []
    for line in voice.lines:
        if line.reading in seen:
            continue
        seen.add(line.reading)
        (fixed if line.is_fixed else dynamic).append(line)
    mixed = [x for pair in zip(fixed, dynamic, strict=False) for x in pair][: max(1, count // 2)]
    narrator = table_narrator()  # the shared lines and every game's
    return mixed + [narrator.render(line.key, line.params, "ja") for line in mixed]


def measure(lines: list[Any], rounds: int) -> list[dict[str, Any]]:
    """One dict per round: ``cue_audio_cached_ms`` and ``cue_audio_live_ms``
    (medians over the lines; from ``voice.bench``, on aplay, when it exists),
    ``cue_audio_cached_null_ms`` and ``cue_audio_live_null_ms`` (the same on a
    null player: no output stream to open, so what is left is preparing the
    audio), and ``source`` (who measured the first two)."""
    voice_measure: Callable[[list[Any]], Mapping[str, Any]] | None
    try:
        from voice.bench import measure as voice_measure
    except ImportError:
        voice_measure = None
    out = []
    for _ in range(rounds):
        null = _fallback(lines)
        row: dict[str, Any] = {"cue_audio_cached_null_ms": null["cue_audio_cached_ms"],
                               "cue_audio_live_null_ms": null["cue_audio_live_ms"]}
        if voice_measure is not None:
            got = dict(voice_measure(lines))
            if got.get("errors"):
                raise RuntimeError(f"voice.bench reported errors: {got['errors'][:3]}")
            row.update(cue_audio_cached_ms=float(got["cue_audio_cached_ms"]),
                       cue_audio_live_ms=float(got["cue_audio_live_ms"]),
                       source=f"voice.bench, {got.get('player', '?')}")
        else:  # TODO(voice): drop once voice/bench.py is in the tree for good
            row.update(null, source="qa.bench.cue_audio, null player (no voice.bench)")
        out.append(row)
    return out


def _fallback(lines: list[Any]) -> dict[str, float]:
    """``TtsVoice`` on a ``NullPlayer``: ``Played.cue_ms`` is from ``speak``
    (the loop's request) to the moment the audio is handed to the output.
    The same ``SubprocessRenderer`` (already started: its one-off ~60 ms start
    is not a cue's cost) serves both voices.

    * cached: a cache prefilled by one pass of ``prepare`` over the lines
      (fixed lines whole, dynamic ones as fragments, as ``companion voice``
      prerenders them); then each line is spoken and waited for.
    * live: an empty cache with assembling off, so each line is one live
      pyttsx3 synthesis of its whole reading.
    """
    from voice.cache import WavCache
    from voice.player import NullPlayer
    from voice.render import RenderSettings, SubprocessRenderer
    from voice.tts_voice import TtsVoice

    vcfg = dict(config()["voice"])
    renderer = SubprocessRenderer(RenderSettings.from_config(vcfg))
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-voice-") as tmp:
        try:
            renderer.render("Warming up.", "en", Path(tmp) / "warm.wav")
            for name, assemble, prefill in (("cached", True, True), ("live", False, False)):
                cache = WavCache(Path(tmp) / name, renderer)
                player = NullPlayer()
                voice = TtsVoice({**vcfg, "assemble": assemble}, cache=cache, player=player)
                if prefill:
                    for line in lines:
                        voice.prepare(line)
                cues = []
                for line in lines:
                    voice.speak(line)
                    if not player.wait_idle(30):
                        raise RuntimeError(f"{line.key} was not played within 30 s")
                    cues.append(player.history[-1].cue_ms)
                player.close()
                results[f"cue_audio_{name}_ms"] = statistics.median(cues)
        finally:
            renderer.close()
    return results


if __name__ == "__main__":
    ls = game_lines(12)
    for line in ls:
        print(line.key, "|", line.reading)
    print(measure(ls, 2))
