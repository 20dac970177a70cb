"""A WAV cache on disk, so the table hears a line without waiting for synthesis.

Key: sha256 of (kind, reading, lang, espeak voice, rate, volume, engine id).
The brief named (reading, lang, rate, voice, engine version); two are added:
``volume`` because it is baked into the rendered samples by espeak-ng (no
per-play scaling cost on the Pi), and ``kind`` because fragments are stored
trimmed of their leading/trailing silence while whole lines keep espeak-ng's
natural end pause.  Anything that changes the sound changes the key, so a stale
file is never played; old files are simply no longer looked up.

Dynamic lines ("{player}, seat {n}.") are assembled from cached fragments: the
template's literal parts (", seat") and the values (numbers 0–99, every
``name.*`` reading — player colours, roles, tiles — and list words such as
"and") are rendered once each, trimmed, and joined **in memory** with short
gaps into one clip that the player streams as a single utterance.  In memory
rather than as a new WAV file: nothing is written on the cue path, the cache
does not grow by one file per announcement, and since the player streams one
continuous PCM stream there is no device re-open gap between fragments (which
playing each fragment with its own ``aplay`` would add).  The values are
recovered by matching the line's actual reading against its template, so the
cache needs no knowledge of how the narrator translates parameters; a reading
that does not match its template is rendered whole, live, and cached.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
import threading
import time
import wave
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from voice.base import Line
from voice.player import read_pcm, silence, trim_silence, write_wav
from voice.render import Renderer

Kind = Literal["line", "part"]
CACHE_FORMAT = 1  # bump when the way files are made changes
NUMBERS = tuple(str(n) for n in range(100))
WORD_GAP = 0.06  # seconds between joined fragments
PUNCT_GAP = 0.22  # … where the text has a comma or a full stop
END_PAUSE = 0.25  # after an assembled line, as espeak-ng leaves after a sentence
_PUNCT = ",.;:!?、。！？・「」()（）"
_SPEAKABLE = re.compile(r"\w", re.UNICODE)


@dataclass
class Stats:
    """What a prerender did: ``count`` items asked for, ``rendered`` of them were
    misses; ``bytes`` and ``audio_seconds`` of all files asked for."""

    count: int = 0
    rendered: int = 0
    bytes: int = 0
    audio_seconds: float = 0.0
    render_seconds: float = 0.0

    def add(self, other: Stats) -> None:
        self.count += other.count
        self.rendered += other.rendered
        self.bytes += other.bytes
        self.audio_seconds += other.audio_seconds
        self.render_seconds += other.render_seconds


@dataclass(frozen=True)
class Piece:
    """A stretch of an assembled line: speech to fetch, or a pause."""

    text: str = ""
    pause: float = 0.0


def speakable(text: str) -> bool:
    return bool(_SPEAKABLE.search(text))


def split_template(template: str) -> list[tuple[str, str | None]]:
    """``"{player}, seat {n}."`` → ``[("", "player"), (", seat ", "n"), (".", None)]``."""
    return [(lit, field) for lit, field, _, _ in string.Formatter().parse(template)]


def template_literals(template: str) -> list[str]:
    return [lit.strip() for lit, _ in split_template(template) if speakable(lit)]


def match_template(template: str, reading: str) -> list[str] | None:
    """The values that fill the template's fields in this reading, or None."""
    pattern = "".join(
        re.escape(lit) + ("(.+?)" if field is not None else "") for lit, field in split_template(template)
    )
    m = re.fullmatch(pattern, reading, re.DOTALL)
    return list(m.groups()) if m else None


def _pause_around(text: str) -> tuple[float, float]:
    s = text.strip()
    before = PUNCT_GAP if s[:1] in _PUNCT else WORD_GAP
    after = PUNCT_GAP if s[-1:] in _PUNCT else WORD_GAP
    return before, after


class WavCache:
    def __init__(self, root: Path, renderer: Renderer) -> None:
        self.root = Path(root)
        self.renderer = renderer
        self.renders = 0  # synthesis calls made through this cache (tests count them)
        self._lock = threading.Lock()

    # ------------------------------------------------------------- keys
    def key(self, reading: str, lang: str, kind: Kind = "line") -> str:
        s = getattr(self.renderer, "settings", None)
        voice = s.voice_for(lang) if s is not None else lang
        rate, volume = (s.rate, s.volume) if s is not None else (None, None)
        ident = [CACHE_FORMAT, kind, reading, lang, voice, rate, volume, self.renderer.engine_id]
        return hashlib.sha256(json.dumps(ident, ensure_ascii=False).encode()).hexdigest()[:40]

    def path(self, reading: str, lang: str, kind: Kind = "line") -> Path:
        return self.root / lang / f"{self.key(reading, lang, kind)}.wav"

    def lookup(self, reading: str, lang: str, kind: Kind = "line") -> Path | None:
        p = self.path(reading, lang, kind)
        return p if p.exists() else None

    # ---------------------------------------------------------- filling
    def ensure(self, reading: str, lang: str, kind: Kind = "line") -> Path:
        """The cached file, rendering it first on a miss (blocks for that)."""
        reading = reading.strip()
        p = self.path(reading, lang, kind)
        if p.exists():
            return p
        p.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            self.renders += 1
        if kind == "line":
            self.renderer.render(reading, lang, p)
        else:
            raw = p.with_name(f".{p.stem}.{threading.get_ident()}.raw.wav")
            self.renderer.render(reading, lang, raw)
            try:
                write_wav(p, trim_silence(read_pcm(raw)))
            finally:
                raw.unlink(missing_ok=True)
        return p

    def evict(self, path: Path) -> None:
        """Forget a file that turned out unreadable, so the next use re-renders."""
        if path.is_relative_to(self.root):
            path.unlink(missing_ok=True)

    def _ensure_all(self, items: Iterable[tuple[str, str, Kind]]) -> Stats:
        stats = Stats()
        seen: set[Path] = set()
        for reading, lang, kind in items:
            if not speakable(reading):
                continue
            p = self.path(reading.strip(), lang, kind)
            if p in seen:
                continue
            seen.add(p)
            stats.count += 1
            if not p.exists():
                started = time.perf_counter()
                self.ensure(reading, lang, kind)
                stats.render_seconds += time.perf_counter() - started
                stats.rendered += 1
            stats.bytes += p.stat().st_size
            with wave.open(str(p), "rb") as w:
                stats.audio_seconds += w.getnframes() / w.getframerate()
        return stats

    def prerender(self, lines: Iterable[Line]) -> Stats:
        """Render every fixed line given (dynamic ones are skipped: their
        fragments come from ``prerender_fragments``)."""
        return self._ensure_all((line.reading, line.lang, "line") for line in lines if line.is_fixed)

    def prerender_fragments(self, lang: str, fragments: Iterable[str] = ()) -> Stats:
        """Numbers 0–99 plus the given fragments (names, template parts)."""
        return self._ensure_all((f, lang, "part") for f in (*NUMBERS, *fragments))

    # -------------------------------------------------------- assembling
    def plan(self, template: str, reading: str, separators: Sequence[str] = ()) -> list[Piece] | None:
        """How to say ``reading`` from fragments, or None if it does not fit
        its template.  Values are further split at list ``separators``
        (", ", " and ") so a list of names reuses each name's clip."""
        values = match_template(template, reading)
        if values is None:
            return None
        pieces: list[Piece] = []

        def add(text: str) -> None:
            if not speakable(text):
                if text.strip() and pieces:  # bare punctuation between fragments: a pause
                    pieces.append(Piece(pause=PUNCT_GAP))
                return
            before, after = _pause_around(text)
            if pieces:
                pieces.append(Piece(pause=before))
            pieces.append(Piece(text=text.strip()))
            if after > WORD_GAP:
                pieces.append(Piece(pause=after - WORD_GAP))

        seps = [s for s in separators if s]
        split = re.compile("(" + "|".join(map(re.escape, seps)) + ")") if seps else None
        fields = iter(values)
        for literal, field in split_template(template):
            add(literal)
            if field is not None:
                value = next(fields)
                for item in split.split(value) if split else [value]:
                    add(item)
        return pieces

    def assemble(self, pieces: Sequence[Piece], lang: str) -> bytes:
        """The clip for a plan: cached fragments (rendered on a miss) and pauses."""
        out = bytearray()
        for piece in pieces:
            if piece.text:
                out += read_pcm(self.ensure(piece.text, lang, "part"))
            else:
                out += silence(piece.pause)
        out += silence(END_PAUSE)
        return bytes(out)


def fragments_of(entries: Mapping[str, tuple[str, str]]) -> list[str]:
    """The cacheable fragments of a line file: literal parts of every dynamic
    line, every ``name.*`` reading, and the speakable list words (``fmt.*``)."""
    out: list[str] = []
    for key, (_text, reading) in entries.items():
        if key.startswith("name."):
            out.append(reading)
        elif key.startswith("fmt."):
            out.extend(template_literals(reading) if "{" in reading else [reading])
        elif any(field is not None for _, field in split_template(reading)):
            out.extend(template_literals(reading))
    return [f.strip() for f in out if speakable(f)]
