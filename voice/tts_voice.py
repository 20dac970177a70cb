"""``TtsVoice``: the real narrator — recorded pack, else cached WAV, else live TTS.

``speak`` only enqueues a job on the player (``voice.player`` owns the
threads); the job's ``prepare`` runs on the player's prepare thread, so a live
render never blocks the table loop, and lines still play strictly in order.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from voice.base import Line
from voice.cache import WavCache, split_template
from voice.masking import masking_path
from voice.packs import VoicePack
from voice.player import AplayPlayer, ErrorSink, NullPlayer, PcmError, Player, read_pcm, scale
from voice.render import RenderSettings, SubprocessRenderer

log = logging.getLogger("voice")
Entries = Callable[[str], Mapping[str, tuple[str, str]]]  # lang → key → (text, reading)
GENERATED_AMBIENCE = frozenset({"table-tapping", "masking", "night"})


def line_entries(lines_dir: Path | tuple[Path, ...] | None = None) -> Entries:
    """The narration files, read through ``voice.lines`` (a missing language → {});
    ``lines_dir``: a folder, or the folders of the shared and the games' lines."""

    def entries(lang: str) -> Mapping[str, tuple[str, str]]:
        from voice.lines import LINES_DIR, load_lines

        try:
            return load_lines(lang, lines_dir or LINES_DIR)
        except FileNotFoundError:
            return {}

    return entries


def make_player(voice_cfg: Mapping[str, Any], on_error: ErrorSink | None = None) -> Player:
    """``player: aplay`` (default) or ``null``; without aplay installed the
    null player is used and the reason reported, so the daemon still runs."""
    kind = str(voice_cfg.get("player", "aplay"))
    if kind == "null":
        return NullPlayer(on_error)
    if kind != "aplay":
        raise ValueError(f"voice.player must be aplay or null, not {kind!r}")
    if shutil.which("aplay") is None:
        (on_error or log.error)("aplay not found (apt install alsa-utils): narration is silent")
        return NullPlayer(on_error)
    return AplayPlayer(str(voice_cfg.get("device", "default")), on_error=on_error)


class TtsVoice:
    """Built from the ``voice:`` config section (``TtsVoice(cfg["voice"])``);
    tests and tools inject ``cache``, ``player``, ``packs`` or ``entries``."""

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        state_dir: Path | None = None,
        on_error: ErrorSink | None = None,
        cache: WavCache | None = None,
        player: Player | None = None,
        packs: Mapping[str, VoicePack] | None = None,
        entries: Entries | None = None,
        lines_dir: Path | tuple[Path, ...] | None = None,
        languages: Iterable[str] = ("en", "ja"),
    ) -> None:
        cfg: Mapping[str, Any] = config or {}
        if isinstance(cfg.get("voice"), Mapping):  # handed the whole config
            cfg = cfg["voice"]
        self.on_error: ErrorSink = on_error or (lambda msg: log.error("%s", msg))
        settings = RenderSettings.from_config(cfg)
        if cache is None:
            root = cfg.get("cache_dir") or Path(state_dir or "state") / "voice-cache"
            cache = WavCache(Path(root), SubprocessRenderer(settings))
            for note in settings.fallbacks:  # once, at start: which engine a table hears instead
                self.on_error(note)
            cache.clean()
        self.cache = cache
        self.settings = settings
        self.entries: Entries = entries or line_entries(lines_dir)
        if packs is None:
            packs = self._load_packs(cfg.get("pack_dir"), languages)
        self.packs = dict(packs)
        self.player: Player = player or make_player(cfg, self.on_error)
        if on_error is not None:  # every problem, including the player's, goes to one place
            self.player.on_error = on_error
        self.masking_volume = float(cfg.get("masking_volume", 0.3))
        self.pack_volume = settings.volume  # TTS has it baked in; recordings get it here
        self.assemble = bool(cfg.get("assemble", True))
        self._ambience: str | None = None
        self._loops: dict[str, bytes] = {}
        self._closed = False

    def _load_packs(self, pack_dir: str | None, languages: Iterable[str]) -> dict[str, VoicePack]:
        """Check every recording at start-up and report the bad ones by name."""
        packs: dict[str, VoicePack] = {}
        if not pack_dir:
            return packs
        for lang in languages:
            known = set(self.entries(lang)) or None
            pack = VoicePack.for_language(
                Path(pack_dir), lang, known_keys=known, convert_dir=self.cache.root / "packs"
            )
            for problem in pack.report():
                self.on_error(problem)
            packs[lang] = pack
        return packs

    # ----------------------------------------------------------- Voice
    def speak(self, line: Line) -> None:
        """Queue the line; returns at once (the work happens on the player's thread)."""
        if not self._closed:
            self.player.play(line.key, lambda: self.prepare(line))

    def ambience(self, sound: str, on: bool) -> None:
        if self._closed:
            return
        if on:
            self._ambience = sound
            self.player.set_ambience(sound, lambda: self._loop(sound))
        elif self._ambience == sound:
            self._ambience = None
            self.player.set_ambience(sound, None)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.player.close()
        self.cache.renderer.close()

    # ------------------------------------------------ on the prepare thread
    def prepare(self, line: Line) -> bytes:
        """The line's audio: pack recording, else cache (rendering on a miss);
        a dynamic line from cached fragments when it fits its template."""
        table = self.entries(line.lang)
        which = 0 if self.cache.reads_written(line.lang) else 1  # text as written, or the kana reading
        entry = table.get(line.key)
        template = entry[which] if entry else None
        spoken = line.text if which == 0 else line.reading
        dynamic = not line.is_fixed and (
            template is None or any(field is not None for _, field in split_template(template))
        )
        if not dynamic:
            recorded = self.packs.get(line.lang, VoicePack.empty()).get(line.key)
            if recorded is not None:
                try:
                    return scale(read_pcm(recorded), self.pack_volume)
                except PcmError as exc:  # changed since it was checked: say it, use TTS
                    self.on_error(f"voice pack: {exc}")
        elif self.assemble and template is not None:
            seps = [table.get(k, ("", ""))[which] for k in ("fmt.list_sep", "fmt.list_and")]
            pieces = self.cache.plan(template, spoken, seps, line.lang)
            if pieces is not None:
                return self.cache.assemble(pieces, line.lang)
        return self.cache.pcm(spoken, line.lang)

    def _loop(self, sound: str) -> bytes:
        if sound not in self._loops:
            path = next((p.ambience(sound) for p in self.packs.values() if p.ambience(sound)), None)
            if path is None:
                if sound not in GENERATED_AMBIENCE:
                    raise PcmError(
                        f"no ambience called {sound!r} (known: {', '.join(sorted(GENERATED_AMBIENCE))})"
                    )
                path = masking_path(self.cache.root)
            self._loops[sound] = scale(read_pcm(path), self.masking_volume)
        return self._loops[sound]
