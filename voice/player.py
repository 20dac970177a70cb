"""Playback: the one module of ``voice`` that owns threads and the sound device.

A player is a two-stage pipeline fed by ``play``/``set_ambience``, which only
enqueue (the table loop never waits):

* the *prepare* thread runs each job's ``prepare()`` (read a cached WAV, or
  render one live) — so the next line renders while the current one plays;
* the *output* stage hands the audio on, in order, one line at a time.

``AplayPlayer`` streams raw PCM into one ``aplay`` process and mixes the
ambience loop into that stream itself.  Why one process and not a second
``aplay`` for the ambience: on a Pi's headphone jack (bcm2835, no card-specific
ALSA config, so ``default`` is plain ``plughw``) and on most HATs the device
can be opened once only — a second ``aplay`` fails with "Device or resource
busy" and, worse, could hold the device while a line must be spoken.  Mixing
in-process works on every ALSA device (hw, dmix, pulse/pipewire, null), costs a
few hundred µs of pure Python per 46 ms chunk, and guarantees lines never
overlap, since there is one stream.  Why ``aplay``: alsa-utils is on every Pi
OS image, it needs no Python package (no PortAudio build on a Pi), and a
stuck or crashed player is a child process we can kill.  The mix is done with
``array`` arithmetic, not ``audioop`` (deprecated, gone in Python 3.13).

The stream is open only while there is something to say or an ambience to
play; when both stop, stdin is closed, ``aplay`` drains and exits, and the
device is free again.  We pace our own writes against the wall clock (at most
``LEAD`` seconds ahead), so the delay from cue to sound stays bounded even when
the ambience keeps the stream busy, and a device that swallows data at once
(ALSA ``null``) behaves like a real one.

``NullPlayer`` has no device: it accounts durations on a timeline, so the
daemon runs anywhere and tests can see what "played" and for how long.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import queue
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import wave
import weakref
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, Protocol

# The stream format is espeak-ng's own, so TTS clips play without conversion.
RATE = 22050
CHANNELS = 1
WIDTH = 2
# What read_pcm takes: telephone-quality to studio recordings, and no longer
# than an ambience loop needs (a crafted 1 Hz file came out 22,050 times its size).
MIN_RATE, MAX_RATE = 8000, 192000
MAX_SECONDS = 600
CHUNK_FRAMES = 1024  # ~46 ms: the mixing and pacing granularity
LEAD = 0.2  # seconds we may write ahead of the wall clock
APLAY_BUFFER_US = 100_000  # < LEAD, so aplay starts playing before we stop to pace

log = logging.getLogger("voice.player")
ErrorSink = Callable[[str], None]


# ------------------------------------------------------------------ PCM helpers
class PcmError(ValueError):
    """A file is not audio we can play (names the file and the reason)."""


def _samples(pcm: bytes) -> array[int]:
    a = array("h")
    a.frombytes(pcm[: len(pcm) - len(pcm) % 2])
    if sys.byteorder == "big":  # pragma: no cover - WAV data is little-endian
        a.byteswap()
    return a


def _pcm(samples: array[int]) -> bytes:
    if sys.byteorder == "big":  # pragma: no cover
        samples = array("h", samples)
        samples.byteswap()
    return samples.tobytes()


def _to_16bit(data: bytes, width: int) -> bytes:
    if width == 2:
        return data
    if width == 1:  # unsigned 8-bit
        return _pcm(array("h", ((b - 128) << 8 for b in data)))
    if width in (3, 4):  # keep the two most significant bytes of each sample
        out = bytearray(len(data) // width * 2)
        out[0::2] = data[width - 2 :: width]
        out[1::2] = data[width - 1 :: width]
        return bytes(out)
    raise PcmError(f"{width * 8}-bit samples are not supported")


def _to_mono(samples: array[int], channels: int) -> array[int]:
    if channels == 1:
        return samples
    lanes = [samples[c::channels] for c in range(channels)]
    return array("h", (sum(frame) // channels for frame in zip(*lanes, strict=False)))


def _resample(samples: array[int], rate: int) -> array[int]:
    """Linear interpolation; good enough for speech and table noise."""
    if rate == RATE or not samples:
        return samples
    n_out = max(1, len(samples) * RATE // rate)
    step = rate / RATE
    last = len(samples) - 1
    out = array("h", bytes(2 * n_out))
    for i in range(n_out):
        pos = i * step
        j = int(pos)
        if j >= last:
            out[i] = samples[last]
        else:
            frac = pos - j
            out[i] = int(samples[j] + (samples[j + 1] - samples[j]) * frac)
    return out


def read_pcm(path: Path) -> bytes:
    """The file's audio in the stream format (mono, 16-bit, 22050 Hz).

    Refuses (``PcmError``) what the stdlib ``wave`` module cannot read —
    compressed or float WAVs, other containers — and empty or truncated files.
    """
    name = Path(path).name
    try:
        with wave.open(str(path), "rb") as w:
            channels, width, rate, frames = (
                w.getnchannels(),
                w.getsampwidth(),
                w.getframerate(),
                w.getnframes(),
            )
            if not MIN_RATE <= rate <= MAX_RATE:  # 0 Hz divided by zero below; 1 Hz made 22,050 times the data
                raise PcmError(f"{name}: a sample rate of {rate} Hz (a WAV we play has {MIN_RATE}–{MAX_RATE} Hz)")
            if frames > MAX_SECONDS * rate:
                raise PcmError(f"{name}: {frames // rate // 60} minutes long; at most {MAX_SECONDS // 60} are played")
            data = w.readframes(frames)
    except (OSError, EOFError, wave.Error, struct.error) as exc:
        raise PcmError(f"{name}: not a readable WAV ({exc})") from exc
    except RuntimeError as exc:  # the stdlib's chunk reader, on a chunk size past the file's end (a crafted fmt, LIST)
        raise PcmError(f"{name}: not a readable WAV (a chunk's size runs past the end of the file)") from exc
    if frames == 0 or not data:
        raise PcmError(f"{name}: no audio in the file")
    if len(data) < frames * channels * width:
        raise PcmError(f"{Path(path).name}: truncated ({len(data)} of {frames * channels * width} bytes)")
    if (channels, width, rate) == (CHANNELS, WIDTH, RATE):
        return data
    try:
        samples = _samples(_to_16bit(data, width))
    except PcmError as exc:
        raise PcmError(f"{Path(path).name}: {exc}") from exc
    return _pcm(_resample(_to_mono(samples, channels), rate))


def wav_problem(path: Path) -> str | None:
    """Why the file is not whole, playable audio — empty, not a WAV, no
    frames, shorter than its header says — or None when it is."""
    try:
        read_pcm(path)
    except PcmError as exc:
        return str(exc)
    return None


def is_stream_format(path: Path) -> bool:
    with wave.open(str(path), "rb") as w:
        return (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (CHANNELS, WIDTH, RATE)


TEMP_SUFFIX = ".tmp"  # what write_wav's temporary files end with (WavCache.clean removes strays)


def write_wav(path: Path, pcm: bytes) -> None:
    """Write atomically (temp file, fsync, rename): a reader never sees half a
    file, and after a power cut the name holds the old file, nothing, or the
    whole new one — never a renamed, still empty inode.  The folder is not
    fsynced: every file written here is a cache (a lost rename is a miss,
    rendered again), and a second fsync per file during the background fill
    would be one more journal commit for the table's own fsync to wait behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}{TEMP_SUFFIX}")
    try:
        with open(tmp, "wb") as f:
            with wave.open(f, "wb") as w:
                w.setnchannels(CHANNELS)
                w.setsampwidth(WIDTH)
                w.setframerate(RATE)
                w.writeframes(pcm)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def duration(pcm: bytes) -> float:
    return len(pcm) / (RATE * CHANNELS * WIDTH)


def silence(seconds: float) -> bytes:
    return bytes(int(seconds * RATE) * CHANNELS * WIDTH)


def scale(pcm: bytes, gain: float) -> bytes:
    if gain == 1.0:
        return pcm
    return _pcm(array("h", (max(-32768, min(32767, int(s * gain))) for s in _samples(pcm))))


def mix(a: bytes, b: bytes) -> bytes:
    """Sum two equally long stretches of audio, clipping at full scale."""
    return _pcm(
        array("h", (max(-32768, min(32767, x + y)) for x, y in zip(_samples(a), _samples(b), strict=False)))
    )


def rms(pcm: bytes) -> float:
    s = _samples(pcm)
    return math.sqrt(sum(x * x for x in s) / len(s)) if s else 0.0


def trim_silence(pcm: bytes, *, floor: int = 300, keep: float = 0.02) -> bytes:
    """Cut near-silence at both ends, keeping ``keep`` seconds as a margin;
    used on fragments so joined fragments do not stutter."""
    s = _samples(pcm)
    loud = [i for i in range(0, len(s), 64) if abs(s[i]) > floor]
    if not loud:
        return pcm
    margin = int(keep * RATE)
    start, end = max(0, loud[0] - margin), min(len(s), loud[-1] + 64 + margin)
    return pcm[start * WIDTH : end * WIDTH]


# ------------------------------------------------------------------- the pipeline
Prepare = Callable[[], bytes]


@dataclass
class Played:
    """One job that reached the output (for tests, the bench and diagnostics)."""

    label: str
    kind: Literal["line", "ambience"]
    seconds: float  # audio length (0 for an ambience change)
    queued_at: float  # time.perf_counter() when play()/set_ambience() was called
    started_at: float  # … when its first bytes went to the device (or were accounted)

    @property
    def cue_ms(self) -> float:
        return (self.started_at - self.queued_at) * 1000


@dataclass
class _Job:
    kind: Literal["line", "ambience"]
    label: str
    prepare: Prepare | None  # None: ambience off
    queued_at: float
    pcm: bytes = b""


_STOP = object()
_LIVE: weakref.WeakSet[_Pipeline] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for player in list(_LIVE):
        player.close()


class Player(Protocol):
    history: deque[Played]
    on_error: ErrorSink

    def play(self, label: str, prepare: Prepare) -> None: ...
    def set_ambience(self, label: str, prepare: Prepare | None) -> None: ...
    def wait_idle(self, timeout: float) -> bool: ...
    def close(self) -> None: ...


class _Pipeline:
    """Prepare thread + ordered hand-over; subclasses implement ``_deliver``."""

    def __init__(self, on_error: ErrorSink | None = None) -> None:
        self.history: deque[Played] = deque(maxlen=1000)
        self.on_error: ErrorSink = on_error or (lambda msg: log.error("%s", msg))
        self._jobs: queue.Queue[_Job | object] = queue.Queue()
        self._stop = threading.Event()
        self._idle = threading.Condition()
        self._pending = 0
        self._closed = False
        self._prepare_thread = threading.Thread(target=self._prepare_loop, name="voice-prepare", daemon=True)
        self._prepare_thread.start()
        _LIVE.add(self)

    # -- caller side: never blocks
    def play(self, label: str, prepare: Prepare) -> None:
        self._submit(_Job("line", label, prepare, time.perf_counter()))

    def set_ambience(self, label: str, prepare: Prepare | None) -> None:
        """Start (``prepare`` gives one loop of audio) or stop (``None``) the
        ambience, in order with the lines queued before it."""
        self._submit(_Job("ambience", label, prepare, time.perf_counter()))

    def _submit(self, job: _Job) -> None:
        if self._closed:
            return
        with self._idle:
            self._pending += 1
        self._jobs.put(job)

    def wait_idle(self, timeout: float) -> bool:
        """True once every queued job has been handed to the output."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def _done(self) -> None:
        with self._idle:
            self._pending = max(0, self._pending - 1)  # close() may have zeroed it
            self._idle.notify_all()

    # -- prepare thread
    def _prepare_loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is _STOP or self._stop.is_set():
                return
            assert isinstance(job, _Job)
            try:
                job.pcm = job.prepare() if job.prepare is not None else b""
            except Exception as exc:  # one bad line must not silence the rest
                self.on_error(f"cannot play {job.label}: {exc}")
                self._done()
                continue
            self._deliver(job)

    def _deliver(self, job: _Job) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Drop what is queued, stop the sound, release the device; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._jobs.put(_STOP)
        self._shutdown()
        if threading.current_thread() is not self._prepare_thread:
            self._prepare_thread.join(timeout=2)
        with self._idle:
            self._pending = 0
            self._idle.notify_all()

    def _shutdown(self) -> None:
        pass


class NullPlayer(_Pipeline):
    """No sound card: every line "plays" on an accounted timeline."""

    def __init__(
        self, on_error: ErrorSink | None = None, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self._clock = clock
        self.busy_until = 0.0  # on the clock's timeline: when the last line would end
        self.seconds_played = 0.0
        self.ambience: str | None = None
        super().__init__(on_error)

    def _deliver(self, job: _Job) -> None:
        now = self._clock()
        if job.kind == "ambience":
            self.ambience = job.label if job.prepare is not None else None
            self.history.append(Played(job.label, "ambience", 0.0, job.queued_at, now))
        else:
            seconds = duration(job.pcm)
            self.busy_until = max(now, self.busy_until) + seconds
            self.seconds_played += seconds
            self.history.append(Played(job.label, "line", seconds, job.queued_at, now))
        self._done()

    def is_speaking(self) -> bool:
        return self._clock() < self.busy_until


class AplayPlayer(_Pipeline):
    """Streams to ``aplay -D device``; see the module notes for why."""

    def __init__(
        self,
        device: str = "default",
        *,
        on_error: ErrorSink | None = None,
        pace: bool = True,
        command: str = "aplay",
    ) -> None:
        exe = shutil.which(command)
        if exe is None:
            raise FileNotFoundError(f"{command} not found (apt install alsa-utils)")
        self.device = device
        self.pace = pace
        self._exe = exe
        self._ready: queue.Queue[_Job | object] = queue.Queue()
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._t0 = 0.0
        self._written = 0  # frames since the stream opened
        self._ambience: bytes = b""
        self._amb_pos = 0
        self._failures = 0
        self._last_error = ""
        super().__init__(on_error)
        self._output_thread = threading.Thread(target=self._output_loop, name="voice-output", daemon=True)
        self._output_thread.start()

    def _deliver(self, job: _Job) -> None:
        self._ready.put(job)

    # -- the stream
    def _open(self) -> bool:
        self._stderr = tempfile.TemporaryFile()
        cmd = [self._exe, "-q", "-D", self.device, "-t", "raw", "-f", "S16_LE", "-r", str(RATE),
               "-c", str(CHANNELS), f"--buffer-time={APLAY_BUFFER_US}"]  # fmt: skip
        try:
            self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=self._stderr)
        except OSError as exc:
            self._report(f"aplay could not start: {exc}")
            self._proc = None
            return False
        self._t0, self._written = time.monotonic(), 0
        return True

    def _aplay_error(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""  # aplay's own verdict; ALSA's lines before it are detail

    def _close_stream(self, drain: bool = True) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()  # aplay plays what it holds, then exits
        except OSError:
            pass
        try:
            proc.wait(timeout=LEAD + 2.0 if drain else 0.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.returncode not in (0, -9) and drain:
            self._report(f"aplay on device {self.device!r} failed: {self._aplay_error() or proc.returncode}")
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _write(self, chunk: bytes) -> bool:
        if self._proc is None and not self._open():
            return False
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(chunk)
            self._proc.stdin.flush()
        except OSError:  # aplay died: busy or missing device
            self._close_stream(drain=True)
            return False
        self._written += len(chunk) // (WIDTH * CHANNELS)
        if self.pace:
            ahead = self._written / RATE - (time.monotonic() - self._t0)
            if ahead < 0:  # we fell behind (underrun): restart the clock
                self._t0 = time.monotonic() - self._written / RATE
            elif ahead > LEAD:
                self._stop.wait(ahead - LEAD)
        return True

    def _ambience_chunk(self, nbytes: int) -> bytes:
        out = bytearray()
        while len(out) < nbytes:
            piece = self._ambience[self._amb_pos : self._amb_pos + nbytes - len(out)]
            out += piece
            self._amb_pos = (self._amb_pos + len(piece)) % len(self._ambience)
        return bytes(out)

    # -- output thread
    def _output_loop(self) -> None:
        chunk_bytes = CHUNK_FRAMES * WIDTH * CHANNELS
        current: _Job | None = None
        pos = 0
        while not self._stop.is_set():
            if current is None:
                idle = not self._ambience
                if idle and self._proc is not None:
                    self._close_stream()  # nothing to say, nothing to loop: free the device
                try:
                    item = self._ready.get(block=idle)
                except queue.Empty:
                    item = None
                if item is _STOP:
                    break
                if isinstance(item, _Job):
                    if item.kind == "ambience":
                        self._ambience, self._amb_pos = item.pcm[: len(item.pcm) - len(item.pcm) % WIDTH], 0
                        self.history.append(
                            Played(item.label, "ambience", 0.0, item.queued_at, time.perf_counter())
                        )
                        self._done()
                        continue
                    current, pos = item, 0
            if current is not None:
                chunk = current.pcm[pos : pos + chunk_bytes]
                pos += len(chunk)
                if self._ambience:
                    chunk = mix(chunk, self._ambience_chunk(len(chunk)))
            else:  # the ambience alone: nothing to mix
                chunk = self._ambience_chunk(chunk_bytes)
            ok = self._write(chunk)
            if current is not None:
                if ok and pos == len(chunk):  # its first bytes are with aplay now
                    self.history.append(
                        Played(
                            current.label,
                            "line",
                            duration(current.pcm),
                            current.queued_at,
                            time.perf_counter(),
                        )
                    )
                if pos >= len(current.pcm) or not ok:
                    current = None
                    self._done()
            if not ok:  # a busy or missing device: back off instead of spinning
                self._failures += 1
                self._stop.wait(min(5.0, 0.25 * self._failures))
            else:
                self._failures = 0
        self._close_stream(drain=False)

    def _report(self, msg: str) -> None:
        if msg != self._last_error:  # a device that stays busy is said once
            self._last_error = msg
            self.on_error(msg)

    def _shutdown(self) -> None:
        self._ready.put(_STOP)
        if threading.current_thread() is self._output_thread:
            return
        self._output_thread.join(timeout=2)
        proc = self._proc
        if self._output_thread.is_alive() and proc is not None:
            proc.kill()  # unblocks a write stuck on a wedged aplay
            self._output_thread.join(timeout=2)
