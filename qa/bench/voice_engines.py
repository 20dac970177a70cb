"""The speech engines side by side: render cost, worker memory, cache size,
cue → audio; and One Night's cue drift while the cache fills under load.

* ``render(engine, …)`` fills an empty cache with every line and fragment of
  the languages the engine speaks (espeak-ng: en + ja; Open JTalk: ja; Piper:
  en) through the real render worker, as ``companion voice prerender`` does:
  seconds per rendered file, the whole cache's seconds and bytes, and the
  worker's peak RSS (``ru_maxrss``, reported by the child).  ``limit`` renders
  only the first files (``--quick``).
* ``cue(engine, lines)``: ``voice.bench.measure`` with that engine, cached and
  live.
* ``loaded_night(nights)``: ``qa.bench.night_drift`` while the daemon's
  background fill (as ``voice.prerender.fill``: its own worker at nice 19,
  the better engines when installed) renders into an empty cache, over and
  over, and one busy process per core (at normal priority) keeps every core
  busy — a Pi rendering its cache right after an install, with something
  else running.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voice import engines
from voice.cache import WavCache
from voice.player import duration, read_pcm
from voice.prerender import FillGate, fill
from voice.render import RenderSettings, SubprocessRenderer

LANGS = {"espeak": ("en", "ja"), "openjtalk": ("ja",), "piper": ("en",)}


def available() -> list[str]:
    return [name for name in LANGS if engines.info(name).missing() is None]


def settings_for(engine: str) -> RenderSettings:
    return RenderSettings(engines={lang: engine for lang in LANGS[engine]} if engine != "espeak" else {})


@dataclass
class Render:
    engine: str
    files: int
    seconds: float  # wall time of the whole fill
    render_s_per_line: float  # per rendered file, as the worker measured it
    cache_mb: float
    audio_s: float
    worker_peak_rss_mb: float


class _Bounded(WavCache):
    """Stops (``_Enough``) after ``limit`` renders (the quick bench's sample),
    or once ``stop`` is set (the end of the loaded night)."""

    def __init__(self, root: Path, renderer: SubprocessRenderer, limit: int | None = None,
                 stop: threading.Event | None = None) -> None:
        super().__init__(root, renderer)
        self.limit, self.stop = limit, stop

    def ensure(self, reading: str, lang: str, kind: Any = "line") -> Path:
        if (self.limit is not None and self.renders >= self.limit) or (self.stop and self.stop.is_set()):
            raise _Enough
        return super().ensure(reading, lang, kind)


class _Enough(Exception):
    pass


def render(engine: str, limit: int | None = None) -> Render:
    from companion.app.catalogue import line_folders
    from voice.prerender import warm
    from voice.tts_voice import line_entries

    renderer = SubprocessRenderer(settings_for(engine))
    entries = line_entries(line_folders())
    with tempfile.TemporaryDirectory(prefix=f"bench-{engine}-") as tmp:
        cache = _Bounded(Path(tmp), renderer, limit)
        started = time.perf_counter()
        try:
            for lang in LANGS[engine]:
                warm(cache, entries(lang), lang)
        except _Enough:
            pass
        finally:
            renderer.close()
        seconds = time.perf_counter() - started
        wavs = list(Path(tmp).rglob("*.wav"))
        size = sum(p.stat().st_size for p in wavs)
        audio_s = sum(duration(read_pcm(p)) for p in wavs)
    per = sum(renderer.render_ms) / 1000 / max(1, len(renderer.render_ms))
    return Render(engine, len(wavs), seconds, per, size / 1e6, audio_s,
                  renderer.peak_rss_kb / 1024)


def cue(engine: str, lines: list[Any]) -> dict[str, Any]:
    from voice.bench import measure

    mine = [line for line in lines if line.lang in LANGS[engine]]
    return dict(measure(mine, settings=settings_for(engine)))


def _spin(stop: Any) -> None:
    while not stop.is_set():
        pass


@contextmanager
def every_core_busy() -> Iterator[int]:
    """One busy process per core, at normal priority, until the block ends."""
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    procs = [ctx.Process(target=_spin, args=(stop,), daemon=True) for _ in range(os.cpu_count() or 1)]
    for p in procs:
        p.start()
    try:
        yield len(procs)
    finally:
        stop.set()
        for p in procs:
            p.join(5)
            if p.is_alive():
                p.kill()


@contextmanager
def background_fill() -> Iterator[tuple[dict[str, int], FillGate]]:
    """The daemon's background fill (``voice.prerender.fill``: a worker of its
    own at nice 19 in the idle I/O class, the better engines when installed)
    into a fresh cache, again and again, until the block ends; yields counts
    of files rendered, fills completed and times it held off for the table,
    and its gate, for the table's router (without it the fill never holds)."""
    from types import SimpleNamespace

    from companion.app.catalogue import line_folders
    from voice.tts_voice import line_entries

    wanted = {lang: e for e in available() if e != "espeak" for lang in LANGS[e]}
    stop = threading.Event()
    gate = FillGate()
    done = {"rendered": 0, "fills": 0, "holds": 0}

    made: list[WavCache] = []

    def bounded(root: Path, renderer: Any) -> WavCache:
        made.append(_Bounded(root, renderer, stop=stop))
        return made[-1]

    def run() -> None:
        while not stop.is_set():
            with tempfile.TemporaryDirectory(prefix="bench-fill-") as tmp:
                voice = SimpleNamespace(cache=WavCache(Path(tmp), SubprocessRenderer(RenderSettings(engines=wanted))),
                                        entries=line_entries(line_folders()))
                try:
                    fill(voice, ["ja", "en"], bounded, gate=gate)  # type: ignore[arg-type]
                    done["fills"] += 1
                except _Enough:
                    return
                finally:
                    done["rendered"] = sum(c.renders for c in made)
                    done["holds"] = gate.holds

    thread = threading.Thread(target=run, name="bench-fill", daemon=True)
    thread.start()
    try:
        yield done, gate
    finally:
        stop.set()
        gate.stop()
        thread.join(60)


def loaded_night(nights: int, busy: bool = True, gated: bool = True
                 ) -> tuple[list[list[Any]], dict[str, int], int]:
    """Nights played while the fill runs — and, with ``busy``, every core is
    busy too: (cues per night, fill counts, busy processes).  ``gated``: the
    fill hears the table's ``activity``, as in the daemon; without, it renders
    straight through the night (as before the gate)."""
    from qa.bench import night_drift

    with every_core_busy() if busy else _none() as cores, background_fill() as (filled, gate):
        time.sleep(1.0)  # the fill's worker is up and rendering
        result = night_drift.measure(nights, [gate.receive] if gated else [])
    return result, dict(filled), cores  # counted once the fill has stopped


class _Sampled(WavCache):
    """Renders the first ``limit`` files of each language; each later one is a
    link to the last rendered (the worker's memory has peaked by then, and
    the fill goes on to the next language as it would)."""

    def __init__(self, root: Path, renderer: Any, limit: int) -> None:
        super().__init__(root, renderer)
        self.limit, self.per_lang, self.last = limit, dict[str, int](), dict[str, Path]()

    def ensure(self, reading: str, lang: str, kind: Any = "line") -> Path:
        p = self.path(reading.strip(), lang, kind)
        if p.exists() or self.per_lang.get(lang, 0) < self.limit:
            if not p.exists():
                self.per_lang[lang] = self.per_lang.get(lang, 0) + 1
            self.last[lang] = super().ensure(reading, lang, kind)
            return self.last[lang]
        p.parent.mkdir(parents=True, exist_ok=True)
        os.link(self.last[lang], p)  # a second name for it: as there as a copy, without writing the bytes again
        return p


def fill_worker_rss(files_per_lang: int) -> tuple[float, float]:
    """Peak RSS (MiB) of the background fill's worker over ja then en with
    the better engines, through ``voice.prerender.fill``, ``files_per_lang``
    renders each: (now: a worker per engine; before: one worker loading both)."""
    from types import SimpleNamespace

    from companion.app.catalogue import line_folders
    from voice.tts_voice import line_entries

    wanted = {lang: e for e in available() if e != "espeak" for lang in LANGS[e]}
    settings = RenderSettings(engines=wanted)
    workers: list[Any] = []
    both = SubprocessRenderer(settings, nice=19)

    def per_engine(root: Path, renderer: Any) -> WavCache:
        workers.append(renderer._renderer)  # the fill's own worker, behind its gate
        return _Sampled(root, renderer, files_per_lang)

    def one_for_both(root: Path, renderer: Any) -> WavCache:
        return _Sampled(root, both, files_per_lang)

    for make in (per_engine, one_for_both):
        with tempfile.TemporaryDirectory(prefix="bench-rss-") as tmp:
            voice = SimpleNamespace(cache=WavCache(Path(tmp), SubprocessRenderer(settings)),
                                    entries=line_entries(line_folders()))
            fill(voice, ["ja", "en"], make)  # type: ignore[arg-type]
    both.close()
    return max(w.peak_rss_kb for w in workers) / 1024, both.peak_rss_kb / 1024


@contextmanager
def _none() -> Iterator[int]:
    yield 0
