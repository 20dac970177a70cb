"""A WAV cache on disk, so the table hears a line without waiting for synthesis.

Key: sha256 of (kind, reading, lang, rate, volume, engine + version + voice).
The brief named (reading, lang, rate, voice, engine version); two are added:
``volume`` because it is baked into the rendered samples by espeak-ng (no
per-play scaling cost on the Pi), and ``kind`` because fragments are stored
trimmed of their leading/trailing silence while whole lines keep espeak-ng's
natural end pause.  Anything that changes the sound changes the key, so a stale
file is never played; old files are simply no longer looked up.

A file is trusted only when it reads back whole (``voice.player.wav_problem``:
a WAV header, frames, as many bytes as the header promises).  An SD card can
hand back a zero-length or half-written file after a power cut, or a page of
garbage; such a file is evicted and rendered again wherever it is met — on a
cue, while assembling a dynamic line, and by prerender — so one damaged
fragment ("red") never silences every line that contains it.  Temporary files
of renders that never finished (a kill, a power cut) are removed by ``clean``
when a daemon or a prerender starts.

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
import os
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
from voice.ja import COUNTERS as JA_COUNTERS
from voice.player import TEMP_SUFFIX, PcmError, read_pcm, silence, trim_silence, wav_problem, write_wav
from voice.render import Renderer

Kind = Literal["line", "part"]
CACHE_FORMAT = 2  # bump when the way files are made changes (2: levelled and trimmed by the worker)
RAW_SUFFIX = ".raw.wav"  # an untrimmed fragment on its way into the cache
STALE_TEMP_S = 120.0  # a temporary file older than this belongs to no live render (timeout: 30 s)
NUMBERS = tuple(str(n) for n in range(100))
WORD_GAP = 0.06  # seconds between joined fragments
PUNCT_GAP = 0.22  # … where the text has a comma or a full stop
END_PAUSE = 0.25  # after an assembled line, as espeak-ng leaves after a sentence
_PUNCT = ",.;:!?、。！？・「」()（）"
_SPEAKABLE = re.compile(r"\w", re.UNICODE)
COUNTERS: Mapping[str, Sequence[str]] = {"ja": JA_COUNTERS}  # words a number sounds different before


@dataclass
class Stats:
    """What a prerender did: ``count`` items asked for, ``rendered`` of them were
    misses; ``bytes`` and ``audio_seconds`` of all files asked for."""

    count: int = 0
    rendered: int = 0
    evicted: int = 0  # damaged files found and rendered again
    bytes: int = 0
    audio_seconds: float = 0.0
    render_seconds: float = 0.0

    def add(self, other: Stats) -> None:
        self.count += other.count
        self.rendered += other.rendered
        self.evicted += other.evicted
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
        rate, volume = (s.rate, s.volume) if s is not None else (None, None)
        voice_id = getattr(self.renderer, "voice_id", None)
        voice = voice_id(lang) if voice_id is not None else self.renderer.engine_id
        ident = [CACHE_FORMAT, kind, reading, lang, voice, rate, volume]
        return hashlib.sha256(json.dumps(ident, ensure_ascii=False).encode()).hexdigest()[:40]

    def path(self, reading: str, lang: str, kind: Kind = "line") -> Path:
        return self.root / lang / f"{self.key(reading, lang, kind)}.wav"

    def lookup(self, reading: str, lang: str, kind: Kind = "line") -> Path | None:
        p = self.path(reading, lang, kind)
        return p if p.exists() else None

    def reads_written(self, lang: str) -> bool:
        """True when the engine for ``lang`` reads text as written (Open JTalk
        reads kanji); False when it is given the kana reading (espeak-ng)."""
        reads_written = getattr(self.renderer, "reads_written", None)
        return bool(reads_written is not None and reads_written(lang))

    def spoken(self, text: str, reading: str, lang: str) -> str:
        return text if self.reads_written(lang) else reading

    def clean(self) -> int:
        """Remove temporary files left by renders that never finished; returns
        how many.  Only old ones: a prerender may be rendering beside us."""
        removed = 0
        if not self.root.is_dir():
            return 0
        cutoff = time.time() - STALE_TEMP_S
        for folder in [self.root, *(p for p in self.root.iterdir() if p.is_dir())]:
            for p in folder.glob(".*"):
                if not p.name.endswith((RAW_SUFFIX, TEMP_SUFFIX, ".part")):
                    continue
                try:
                    if p.is_file() and p.stat().st_mtime < cutoff:
                        p.unlink()
                        removed += 1
                except OSError:
                    pass
        return removed

    # ---------------------------------------------------------- filling
    def ensure(self, reading: str, lang: str, kind: Kind = "line") -> Path:
        """The cached file, rendering it first on a miss (blocks for that)."""
        reading = reading.strip()
        p = self.path(reading, lang, kind)
        if p.exists():
            return p
        self._render(reading, lang, kind, p)
        return p

    def pcm(self, reading: str, lang: str, kind: Kind = "line") -> bytes:
        """The cached audio, rendering on a miss; a file that does not read
        back whole is evicted and rendered once more."""
        path = self.ensure(reading, lang, kind)
        try:
            return read_pcm(path)
        except PcmError:
            self.evict(path)
            return read_pcm(self.ensure(reading, lang, kind))

    def _render(self, reading: str, lang: str, kind: Kind, p: Path) -> None:
        p.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            self.renders += 1
        fragment = getattr(self.renderer, "render_fragment", None)
        if kind == "line":
            self.renderer.render(reading, lang, p)
        elif fragment is not None:  # the worker trims it
            fragment(reading, lang, p)
        else:
            raw = p.with_name(f".{p.stem}.{os.getpid()}.{threading.get_ident()}{RAW_SUFFIX}")
            try:
                self.renderer.render(reading, lang, raw)
                write_wav(p, trim_silence(read_pcm(raw)))
            finally:
                raw.unlink(missing_ok=True)

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
            if p.exists() and wav_problem(p) is not None:
                self.evict(p)
                stats.evicted += 1
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
        return self._ensure_all((self.spoken(line.text, line.reading, line.lang), line.lang, "line")
                                for line in lines if line.is_fixed)

    def prerender_fragments(self, lang: str, fragments: Iterable[str] = ()) -> Stats:
        """Numbers 0–99 plus the given fragments (names, template parts)."""
        return self._ensure_all((f, lang, "part") for f in (*NUMBERS, *fragments))

    # -------------------------------------------------------- assembling
    def plan(self, template: str, reading: str, separators: Sequence[str] = (),
             lang: str = "") -> list[Piece] | None:
        """How to say ``reading`` from fragments, or None if it does not fit
        its template.  Values are further split at list ``separators``
        (", ", " and ") so a list of names reuses each name's clip.  A number
        followed by one of the ``counters`` (Japanese 人, 分, 点 …) stays in
        one fragment with it: the counter changes how the number sounds
        (2人 ふたり, 3分 さんぷん)."""
        values = match_template(template, reading)
        if values is None:
            return None
        parts, values = _join_counters(split_template(template), values, COUNTERS.get(lang, ()))
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
        for literal, field in parts:
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
                out += self.pcm(piece.text, lang, "part")
            else:
                out += silence(piece.pause)
        out += silence(END_PAUSE)
        return bytes(out)


def _join_counters(parts: list[tuple[str, str | None]], values: list[str], counters: Sequence[str]
                   ) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Move a counter that follows a numeric value out of the next literal and
    onto the value: ``[("", "n"), ("人です。", None)]`` with ``["2"]`` →
    ``[("", "n"), ("です。", None)]`` with ``["2人"]``."""
    out_parts = list(parts)
    out_values = list(values)
    v = 0
    for i, (_literal, field) in enumerate(parts):
        if field is None:
            continue
        if out_values[v].isdigit() and i + 1 < len(out_parts):
            nxt, nxt_field = out_parts[i + 1]
            unit = next((c for c in counters if nxt.startswith(c)), None)
            if unit:
                out_values[v] += unit
                out_parts[i + 1] = (nxt[len(unit):], nxt_field)
        v += 1
    return out_parts, out_values


def counted_fragments(entries: Mapping[str, tuple[str, str]], lang: str, written: bool = False,
                      upto: int = 20) -> list[str]:
    """"0人" … "20人" for every counter that follows a field in a dynamic line
    (the counts a table meets; higher ones render on first use)."""
    counters = COUNTERS.get(lang, ())
    found: list[str] = []
    for key, entry in entries.items():
        template = entry[0 if written else 1]
        if key.startswith(("name.", "fmt.")) and "{" not in template:
            continue
        parts = split_template(template)
        for (_lit, field), (nxt, _) in zip(parts, parts[1:], strict=False):
            unit = next((c for c in counters if nxt.startswith(c)), None) if field is not None else None
            if unit and unit not in found:
                found.append(unit)
    return [f"{n}{unit}" for unit in found for n in range(upto + 1)]


def fragments_of(entries: Mapping[str, tuple[str, str]], written: bool = False, lang: str = "") -> list[str]:
    """The cacheable fragments of a line file: literal parts of every dynamic
    line (a counter after a field goes with the number: ``counted_fragments``),
    every ``name.*`` reading, and the speakable list words (``fmt.*``).
    ``written``: of the text as written (for Open JTalk), not the kana reading."""
    counters = COUNTERS.get(lang, ())
    out: list[str] = []
    for key, entry in entries.items():
        reading = entry[0 if written else 1]
        if key.startswith("name."):
            out.append(reading)
        elif "{" not in reading:
            if key.startswith("fmt."):
                out.append(reading)
        else:
            parts = split_template(reading)
            fake = ["0" if field is not None else "" for _, field in parts if field is not None]
            joined, _ = _join_counters(parts, fake, counters)
            out.extend(lit.strip() for lit, _ in joined if speakable(lit))
    return [f.strip() for f in out if speakable(f)]
