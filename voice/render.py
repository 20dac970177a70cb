"""Text → WAV in one dedicated worker process that owns the speech engines.

Why a subprocess rather than a thread that owns the engine (both measured on
the dev machine: a short sentence renders in ~13 ms either way; the persistent
child adds < 1 ms of pipe traffic per job and ~60 ms once at start):

* pyttsx3's espeak driver ``print``s "Audio saved to …" on every file, and
  the daemon's stdout is the event log (DESIGN: ``companion simulate``).  In a
  thread the only cure is swapping ``sys.stdout`` for the whole process; the
  child just points its fd 1 at /dev/null and talks to us on a dup of it.
* espeak-ng may be initialised once per process and is not thread-safe; a
  crash or hang in the C library takes down only the child, which we restart.
* Open JTalk's dictionary and Piper's onnxruntime cost 100–400 MB: they live
  and die with the child (``voice.engines``), never in the daemon's process.

Each language has its engine (``RenderSettings.engines``; ``espeak`` when
none is named).  A job names the engine, and the child loads each engine on
first use.  Every file is made alike whatever the engine (``engines.finish``:
one sample rate, one loudness, short edges) and written to a temporary name,
fsynced and renamed into place (``voice.player.write_wav``), so a failed job
can never leave (or be mistaken for) an old file, even after a power cut.
"""

from __future__ import annotations

import ctypes
import functools
import json
import math
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Protocol

from voice import engines
from voice.player import _pcm, write_wav

# espeak-ng resolves these by language; "ja" reads kana only (no kanji).
DEFAULT_VOICES: Mapping[str, str] = {"en": "en-us", "ja": "ja"}


class RenderError(RuntimeError):
    """A line could not be turned into audio (engine missing, crashed, empty text)."""


@dataclass(frozen=True)
class RenderSettings:
    rate: int = 150  # words per minute, as espeak-ng counts them (other engines scale to it)
    volume: float = 0.8  # 0.0–1.0 of the common speech level (voice.engines.TARGET_LEVEL)
    voices: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_VOICES))
    engines: Mapping[str, str] = field(default_factory=dict)  # lang → engine; missing: espeak
    fallbacks: tuple[str, ...] = ()  # why a configured engine is not used (said once at start)

    def engine_for(self, lang: str) -> str:
        return self.engines.get(lang) or self.engines.get(lang.split("-")[0]) or engines.FALLBACK

    def voice_for(self, lang: str) -> str:
        """The voice for a language: the engine's own for openjtalk/piper; for
        espeak-ng the configured one, else the language code itself (espeak-ng
        picks a voice by it)."""
        own = engines.info(self.engine_for(lang)).default_voice
        if own:
            return own
        return self.voices.get(lang) or self.voices.get(lang.split("-")[0]) or lang

    def reads_written(self, lang: str) -> bool:
        """True when the engine reads the line's text as written (kanji), so it
        is handed ``Line.text``; False: the kana ``reading``."""
        return engines.info(self.engine_for(lang)).reads_written

    def with_engine(self, lang: str, name: str) -> RenderSettings:
        return replace(self, engines={**self.engines, lang: name})

    @classmethod
    def from_config(cls, voice_cfg: Mapping[str, Any]) -> RenderSettings:
        voices = dict(DEFAULT_VOICES)
        voices.update(voice_cfg.get("voices") or {})
        volume = float(voice_cfg.get("volume", 0.8))
        chosen, fallbacks = resolve_engines(voice_cfg.get("engine") or {})
        return cls(rate=int(voice_cfg.get("rate", 150)), volume=min(1.0, max(0.0, volume)), voices=voices,
                   engines=chosen, fallbacks=tuple(fallbacks))


ENGINE_LABEL = engines.ENGINES[engines.FALLBACK].label  # "pyttsx3 + espeak-ng"


def resolve_engines(wanted: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The engines asked for per language that are installed and speak it;
    for the rest, espeak-ng, and one sentence each saying why."""
    chosen: dict[str, str] = {}
    notes: list[str] = []
    for lang, name in wanted.items():
        if name == engines.FALLBACK:  # nothing to fall back to (a missing espeak-ng: see render, doctor)
            continue
        try:
            eng = engines.info(str(name))
        except engines.EngineError as exc:
            notes.append(f"voice engine for {lang}: {exc}; using {engines.FALLBACK}")
            continue
        problem = eng.missing() or (None if eng.speaks(lang) else f"it does not speak {lang!r}")
        if problem:
            notes.append(f"voice engine {name} for {lang} is not available: {problem}; "
                         f"using {ENGINE_LABEL} instead")
        else:
            chosen[str(lang)] = eng.name
    return chosen, notes


class Renderer(Protocol):
    engine_id: str  # part of every cache key: a new engine re-renders

    def render(self, text: str, lang: str, out: Path) -> None:
        """Write ``text`` spoken in ``lang`` to the WAV file ``out``; blocks."""

    def close(self) -> None: ...


def espeak_available() -> bool:
    return shutil.which("espeak-ng") is not None


@functools.cache
def engine_id(name: str = engines.FALLBACK) -> str:
    """The engine's package versions (and espeak-ng's), so an upgrade
    invalidates the cache."""
    ident = engines.info(name).version()
    if name != "espeak":
        return f"{name}: {ident}"
    espeak = "espeak-ng ?"
    exe = shutil.which("espeak-ng")
    if exe:
        try:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout
            espeak = out.split("Data at")[0].strip() or espeak
        except (OSError, subprocess.SubprocessError):
            pass
    return f"{ident}; {espeak}"


# ------------------------------------------------------------ the child side
ATTEMPTS = 3  # per job, against the rare empty file (see engines.EspeakEngine)


def _render_with(engine: engines.Engine, job: Mapping[str, Any]) -> int:
    """One job on the engine; returns how many attempts it took.

    An empty result is retried before the job is refused: twice an empty
    espeak-ng file was seen while other test suites loaded the machine
    (``SubprocessRenderer.retries`` counts these; it should stay 0)."""
    out = Path(job["out"])
    problem = ""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            pcm, rate = engine.synth(job["text"], job["voice"], int(job["rate"]))
        except engines.EngineError as exc:
            problem = f"{exc} for {job['text']!r}"
            continue
        edges = job.get("edges") or (engines.LEAD, engines.TAIL)
        audio = engines.finish(pcm, rate, float(job["volume"]), float(edges[0]), float(edges[1]))
        if not audio:
            problem = f"engine wrote no audio for {job['text']!r}"
            continue
        write_wav(out, audio)
        return attempt
    raise RenderError(f"{problem} ({ATTEMPTS} attempts)")


# ioprio_set's number on the machines we run on (the C library has no wrapper).
IOPRIO_SET = {"x86_64": 251, "aarch64": 30, "armv7l": 314, "armv6l": 314, "i686": 289}
IOPRIO_CLASS_IDLE = 3  # disk time only when no one else wants it
IOPRIO_CLASS_SHIFT = 13
IOPRIO_WHO_PROCESS = 1


def idle_io() -> bool:
    """Put this process's disk I/O in the idle class (``ionice -c 3``), so a
    background worker's fsyncs queue behind the journal's.  True if the
    kernel took it.  It counts under an I/O scheduler that knows priorities
    (BFQ, mq-deadline since Linux 5.14), not under ``none``; the kernel's own
    writeback and ext4's journal commits are shared whatever the class, which
    is why the fill also holds off while the table is timed
    (``voice.prerender.FillGate``).  A seccomp filter without ``ioprio_set``
    makes it a no-op (False)."""
    number = IOPRIO_SET.get(os.uname().machine)
    if number is None:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.syscall(number, IOPRIO_WHO_PROCESS, 0, IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT)) == 0


def serve(stdin: IO[str] | None = None, nice: int = 0) -> None:
    """The worker loop: one JSON job a line in, one JSON reply a line out.

    Replies go to a duplicate of the original stdout; fd 1 itself is sent to
    /dev/null so nothing an engine prints can corrupt the protocol.  ``nice``
    lowers the child's CPU priority and puts its disk writes in the idle class
    (the daemon's background fill): the table loop, in the parent, always
    comes first.  Ctrl-C reaches the whole process
    group; the parent decides when we stop (it closes our stdin), so SIGINT is
    ignored here — and a parent that left early (``--voice tts`` quitting at
    once) is no error either: the child just ends, without a traceback.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if nice:
        try:
            os.nice(nice)
        except OSError:  # a seccomp filter without setpriority: render at normal priority
            pass
        idle_io()
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    loaded: dict[str, engines.Engine] = {}
    try:
        proto.write(json.dumps({"ok": True, "ready": True}) + "\n")
        for raw in stdin or sys.stdin:
            if not raw.strip():
                continue
            started = time.perf_counter()
            try:
                job = json.loads(raw)
                name = str(job.get("engine") or engines.FALLBACK)
                if name not in loaded:
                    loaded[name] = engines.load(name)
                reply: dict[str, Any] = {"ok": True, "attempts": _render_with(loaded[name], job)}
            except Exception as exc:  # reported to the parent, which raises it there
                reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            reply["ms"] = round((time.perf_counter() - started) * 1000, 2)
            reply["rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            proto.write(json.dumps(reply) + "\n")
    except BrokenPipeError:  # the parent is gone: nobody to answer
        os.dup2(devnull, proto.fileno())  # so closing the stream at exit cannot raise again


# ----------------------------------------------------------- the parent side
class SubprocessRenderer:
    """Owns the render child; ``render`` is safe to call from any thread (jobs
    are serialised, as the engine needs) and restarts a dead or hung child."""

    def __init__(
        self,
        settings: RenderSettings | None = None,
        *,
        timeout: float = 30.0,
        env: Mapping[str, str] | None = None,
        nice: int = 0,
    ) -> None:
        self.settings = settings or RenderSettings()
        self.engine_id = engine_id()
        self.timeout = timeout
        self.nice = nice  # > 0: a background worker (see serve)
        self.peak_rss_kb = 0  # the child's, as it last reported
        self.renders = 0
        self.retries = 0  # jobs the engine had to do again (an empty file): should stay 0
        self.render_ms: list[float] = []  # as the child measured each job
        self._env = dict(env) if env is not None else None
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = b""

    def voice_id(self, lang: str) -> str:
        """Engine, its version and its voice: part of every cache key."""
        name = self.settings.engine_for(lang)
        return f"{engine_id(name)}; voice {self.settings.voice_for(lang)}"

    def reads_written(self, lang: str) -> bool:
        return self.settings.reads_written(lang)

    def _start(self) -> subprocess.Popen[bytes]:
        root = str(Path(__file__).resolve().parent.parent)
        code = f"import sys; sys.path.insert(0, {root!r}); from voice.render import serve; serve(nice={self.nice})"
        proc = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self._env,
            bufsize=0,
        )
        self._proc, self._buf = proc, b""
        try:
            self._reply()  # the "ready" line: the engine is up
        except RenderError:
            self._kill()
            raise
        return proc

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()

    def _reply(self) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RenderError(f"render worker gave no answer in {self.timeout:g} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    raise RenderError(f"render worker exited (code {self._proc.wait()})")
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        return reply

    def render(self, text: str, lang: str, out: Path) -> None:
        self._job(text, lang, out)

    def render_fragment(self, text: str, lang: str, out: Path) -> None:
        """As ``render``, trimmed close for joining (``engines.FRAGMENT_EDGE``)
        by the worker — not in the daemon's process, where pure-Python sample
        loops would take the GIL from the table loop during the fill."""
        self._job(text, lang, out, edges=(engines.FRAGMENT_EDGE, engines.FRAGMENT_EDGE))

    def _job(self, text: str, lang: str, out: Path, edges: tuple[float, float] | None = None) -> None:
        if not text.strip():
            raise RenderError("nothing to read: empty text")
        name = self.settings.engine_for(lang)
        if name == "espeak" and not espeak_available():
            raise RenderError("espeak-ng is not installed (apt install espeak-ng)")
        job = {
            "engine": name,
            "text": text,
            "voice": self.settings.voice_for(lang),
            "rate": self.settings.rate,
            "volume": self.settings.volume,
            "out": str(Path(out).resolve()),
            "edges": edges,
        }
        with self._lock:
            proc = self._proc if self._proc is not None and self._proc.poll() is None else self._start()
            assert proc.stdin is not None
            try:
                proc.stdin.write((json.dumps(job) + "\n").encode())
                reply = self._reply()
            except (OSError, RenderError) as exc:
                self._kill()  # a hung or dead child is replaced on the next job
                raise RenderError(f"rendering {text!r} failed: {exc}") from exc
        if not reply.get("ok"):
            raise RenderError(f"rendering {text!r} failed: {reply.get('error')}")
        self.renders += 1
        self.retries += int(reply.get("attempts", 1)) - 1
        self.render_ms.append(float(reply.get("ms", 0.0)))
        self.peak_rss_kb = max(self.peak_rss_kb, int(reply.get("rss_kb", 0)))

    def close(self) -> None:
        with self._lock:
            proc = self._proc
            if proc is not None and proc.stdin is not None and proc.poll() is None:
                try:
                    proc.stdin.close()  # EOF: the child leaves its loop
                    proc.wait(timeout=2)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._kill()


class ToneRenderer:
    """A stand-in engine that writes a tone as long as the text (50 ms a
    character): for tests and for machines without espeak-ng.  Counts calls."""

    engine_id = "tone 1"

    def __init__(self, settings: RenderSettings | None = None) -> None:
        self.settings = settings or RenderSettings()
        self.calls: list[tuple[str, str]] = []

    @property
    def renders(self) -> int:
        return len(self.calls)

    def render(self, text: str, lang: str, out: Path) -> None:
        if not text.strip():
            raise RenderError("nothing to read: empty text")
        self.calls.append((text, lang))
        frames = max(1, int(0.05 * len(text) * 22050))
        pitch = 220 + 20 * (sum(map(ord, text)) % 20)  # different texts sound different
        amp = int(8000 * self.settings.volume)
        samples = array("h", (int(amp * math.sin(2 * math.pi * pitch * i / 22050)) for i in range(frames)))
        write_wav(Path(out), _pcm(samples))

    def voice_id(self, lang: str) -> str:
        return f"{self.engine_id}; voice {self.settings.voice_for(lang)}"

    def reads_written(self, lang: str) -> bool:
        return self.settings.reads_written(lang)

    def close(self) -> None:
        pass
