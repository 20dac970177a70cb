"""Text → WAV with pyttsx3 + espeak-ng, in one dedicated worker process.

Why a subprocess rather than a thread that owns the engine (both measured on
the dev machine: a short sentence renders in ~13 ms either way; the persistent
child adds < 1 ms of pipe traffic per job and ~60 ms once at start):

* pyttsx3's espeak driver ``print``s "Audio saved to …" on every file, and
  the daemon's stdout is the event log (DESIGN: ``companion simulate``).  In a
  thread the only cure is swapping ``sys.stdout`` for the whole process; the
  child just points its fd 1 at /dev/null and talks to us on a dup of it.
* espeak-ng may be initialised once per process and is not thread-safe; a
  crash or hang in the C library takes down only the child, which we restart.

Only ``save_to_file`` + ``runAndWait`` is ever used: after a ``save_to_file``
the driver keeps its target file, so a later ``say`` would overwrite that file
instead of speaking (and ``say`` plays through ``aplay`` by itself).  We play
files ourselves (``voice.player``).  Every job writes to a fresh temporary name
that must exist and hold audio before it is renamed into place, so a failed
job can never leave (or be mistaken for) an old file.
"""

from __future__ import annotations

import functools
import json
import math
import os
import select
import shutil
import subprocess
import sys
import threading
import time
import wave
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

# espeak-ng resolves these by language; "ja" reads kana only (no kanji).
DEFAULT_VOICES: Mapping[str, str] = {"en": "en-us", "ja": "ja"}


class RenderError(RuntimeError):
    """A line could not be turned into audio (engine missing, crashed, empty text)."""


@dataclass(frozen=True)
class RenderSettings:
    rate: int = 150  # words per minute, as espeak-ng counts them
    volume: float = 0.8  # 0.0–1.0 of espeak-ng's normal level
    voices: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_VOICES))

    def voice_for(self, lang: str) -> str:
        """The espeak-ng voice for a language; an unknown language is passed
        through, since espeak-ng picks a voice by language code."""
        return self.voices.get(lang) or self.voices.get(lang.split("-")[0]) or lang

    @classmethod
    def from_config(cls, voice_cfg: Mapping[str, Any]) -> RenderSettings:
        voices = dict(DEFAULT_VOICES)
        voices.update(voice_cfg.get("voices") or {})
        volume = float(voice_cfg.get("volume", 0.8))
        return cls(rate=int(voice_cfg.get("rate", 150)), volume=min(1.0, max(0.0, volume)), voices=voices)


class Renderer(Protocol):
    engine_id: str  # part of every cache key: a new engine re-renders

    def render(self, text: str, lang: str, out: Path) -> None:
        """Write ``text`` spoken in ``lang`` to the WAV file ``out``; blocks."""

    def close(self) -> None: ...


def espeak_available() -> bool:
    return shutil.which("espeak-ng") is not None


@functools.cache
def engine_id() -> str:
    """pyttsx3 and espeak-ng versions, so an upgrade invalidates the cache."""
    try:
        from importlib.metadata import version

        pyttsx3_version = version("pyttsx3")
    except Exception:  # pragma: no cover - not installed as a distribution
        pyttsx3_version = "?"
    espeak = "espeak-ng ?"
    exe = shutil.which("espeak-ng")
    if exe:
        try:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout
            espeak = out.split("Data at")[0].strip() or espeak
        except (OSError, subprocess.SubprocessError):
            pass
    return f"pyttsx3 {pyttsx3_version}; {espeak}"


# ------------------------------------------------------------ the child side
ATTEMPTS = 3  # per job, against the rare empty file (see _render_with)


def _render_with(engine: Any, job: Mapping[str, Any]) -> int:
    """One job on the engine; returns how many attempts it took.

    A second trap, found by rendering many short lines back to back: espeak-ng
    runs asynchronously in pyttsx3's retrieval mode, and ``setProperty`` only
    *queues* rate/volume commands.  ``runAndWait`` first calls the driver's
    ``stop()``, which cancels whatever espeak-ng still has queued — and flags
    the driver to cancel again once the synthesis has started — so now and
    then a line came out as an empty file (1 job in ~60).  Draining the queue
    with ``espeak_Synchronize`` before and after the job keeps ``stop()`` a
    no-op (0 empty files in ~10,000 jobs under load since).  Twice more an
    empty file was still seen, both while other test suites loaded the
    machine, so an empty result is retried on a fresh temporary file before
    the job is refused; ``SubprocessRenderer.retries`` counts these.
    """
    from pyttsx3.drivers import _espeak

    out = Path(job["out"])
    tmp = out.with_name(f".{out.name}.{os.getpid()}.part")
    problem = ""
    for attempt in range(1, ATTEMPTS + 1):
        tmp.unlink(missing_ok=True)
        engine.setProperty("voice", job["voice"])
        engine.setProperty("rate", int(job["rate"]))
        engine.setProperty("volume", float(job["volume"]))
        _espeak.Synchronize()
        engine.save_to_file(job["text"], str(tmp))
        engine.runAndWait()
        _espeak.Synchronize()
        try:
            with wave.open(str(tmp), "rb") as w:
                frames = w.getnframes()
        except (OSError, EOFError, wave.Error) as exc:
            problem = f"engine wrote no readable file for {job['text']!r}: {exc}"
            continue
        if frames == 0:
            problem = f"engine wrote no audio for {job['text']!r}"
            continue
        os.replace(tmp, out)
        return attempt
    tmp.unlink(missing_ok=True)
    raise RenderError(f"{problem} ({ATTEMPTS} attempts)")


def serve(stdin: IO[str] | None = None) -> None:
    """The worker loop: one JSON job a line in, one JSON reply a line out.

    Replies go to a duplicate of the original stdout; fd 1 itself is sent to
    /dev/null so nothing pyttsx3 or espeak-ng prints can corrupt the protocol.
    """
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    import pyttsx3  # here, so the daemon process never loads espeak-ng itself

    engine = pyttsx3.init("espeak")
    proto.write(json.dumps({"ok": True, "ready": True}) + "\n")
    for raw in stdin or sys.stdin:
        if not raw.strip():
            continue
        started = time.perf_counter()
        try:
            reply: dict[str, Any] = {"ok": True, "attempts": _render_with(engine, json.loads(raw))}
        except Exception as exc:  # reported to the parent, which raises it there
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        reply["ms"] = round((time.perf_counter() - started) * 1000, 2)
        proto.write(json.dumps(reply) + "\n")


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
    ) -> None:
        self.settings = settings or RenderSettings()
        self.engine_id = engine_id()
        self.timeout = timeout
        self.renders = 0
        self.retries = 0  # jobs the engine had to do again (an empty file): should stay 0
        self.render_ms: list[float] = []  # as the child measured each job
        self._env = dict(env) if env is not None else None
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = b""

    def _start(self) -> subprocess.Popen[bytes]:
        if not espeak_available():
            raise RenderError("espeak-ng is not installed (apt install espeak-ng)")
        root = str(Path(__file__).resolve().parent.parent)
        code = f"import sys; sys.path.insert(0, {root!r}); from voice.render import serve; serve()"
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
        if not text.strip():
            raise RenderError("nothing to read: empty text")
        job = {
            "text": text,
            "voice": self.settings.voice_for(lang),
            "rate": self.settings.rate,
            "volume": self.settings.volume,
            "out": str(Path(out).resolve()),
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
        if sys.byteorder == "big":  # pragma: no cover
            samples.byteswap()
        out = Path(out)
        tmp = out.with_name(f".{out.name}.part")
        with wave.open(str(tmp), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(22050)
            w.writeframes(samples.tobytes())
        os.replace(tmp, out)

    def close(self) -> None:
        pass
