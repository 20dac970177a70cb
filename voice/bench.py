"""Cue-to-audio latency of the real voice, for the benchmark suite.

``measure(lines)`` speaks each line through a ``TtsVoice`` and reads, from
the player's history, the time from the ``speak()`` call to the moment the
line's first bytes were handed to ``aplay`` (``-D null``, unpaced, so no real
waiting) — or, without aplay, accounted by the null player.  Each line is
spoken alone (the previous one has been handed over), so queueing behind
another line is not counted.

* ``cue_audio_cached_ms``: every clip already in the cache (warmed first);
* ``cue_audio_live_ms``: an empty cache and assembling off, so each line is
  one pyttsx3 synthesis of its whole reading — the render child is already
  running, as it is in the daemon after its first line.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voice.base import Line
from voice.cache import WavCache
from voice.player import AplayPlayer, NullPlayer, Player
from voice.render import RenderSettings, SubprocessRenderer
from voice.tts_voice import TtsVoice, line_entries

TIMEOUT = 60.0  # bound on waiting for one line to reach the player


def default_lines() -> list[Line]:
    """A few fixed and dynamic lines in both languages, from the line files."""
    from voice.lines import Narrator

    n = Narrator()
    return [
        n.render("table.ready", {}, "en"),
        n.render("table.player_seated", {"player": "red", "n": 3}, "en"),
        n.render("table.standings", {"scores": {"red": 3, "blue": 5}}, "en"),
        n.render("undo.done", {}, "en"),
        n.render("table.ready", {}, "ja"),
        n.render("table.player_seated", {"player": "blue", "n": 4}, "ja"),
    ]


def _player() -> tuple[Player, str]:
    if shutil.which("aplay"):
        return AplayPlayer("null", pace=False), "aplay -D null"
    return NullPlayer(), "null"


def _cue_times(voice: TtsVoice, lines: Sequence[Line]) -> list[float]:
    history = voice.player.history
    out = []
    for line in lines:
        before = len(history)
        voice.speak(line)
        if not voice.player.wait_idle(TIMEOUT):
            raise TimeoutError(f"{line.key} did not reach the player in {TIMEOUT:g} s")
        played = [h for h in list(history)[before:] if h.kind == "line"]
        if not played:
            raise RuntimeError(f"{line.key} did not play (see the error log)")
        out.append(played[-1].cue_ms)
    return out


def measure(lines: Sequence[Line] | None = None, *, settings: RenderSettings | None = None) -> dict[str, Any]:
    """Median cue-to-audio in ms with a warm and with a cold cache."""
    lines = list(lines) if lines else default_lines()
    renderer = SubprocessRenderer(settings or RenderSettings())
    player, player_name = _player()
    errors: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="voice-bench-") as tmp:

            def voice(name: str, assemble: bool) -> TtsVoice:
                cache = WavCache(Path(tmp) / name, renderer)
                return TtsVoice({"assemble": assemble}, cache=cache, player=player, packs={},
                                entries=line_entries(), on_error=errors.append)  # fmt: skip

            warm = voice("warm", True)
            _cue_times(warm, lines)  # fills the cache (and starts the render child)
            cached = _cue_times(warm, lines)
            renders_before = renderer.renders
            live = _cue_times(voice("cold", False), lines)
            live_renders = renderer.renders - renders_before
    finally:
        player.close()
        renderer.close()
    return {
        "cue_audio_cached_ms": round(statistics.median(cached), 2),
        "cue_audio_live_ms": round(statistics.median(live), 2),
        "lines": len(lines),
        "live_renders": live_renders,
        "render_ms_median": round(statistics.median(renderer.render_ms), 2) if renderer.render_ms else None,
        "render_retries": renderer.retries,
        "player": player_name,
        "errors": errors,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(measure(), indent=2))
