"""The night's masking sound: soft, irregular tapping on a wooden table.

It covers the small noises of players touching cards while eyes are closed.
Generated here with the stdlib (``random`` with a fixed seed), so the project
owns it outright — no sample, no licence — and every install makes the same
file.  It is a seamless loop: each tap's ring-out wraps around the end, and the
faint room-tone bed is cross-faded into its own start.
"""

from __future__ import annotations

import math
import random
import sys
from array import array
from pathlib import Path

from voice.player import RATE, write_wav

GENERATOR_VERSION = 1  # part of the file name: a new generator makes a new file
SEED = 20240229
SECONDS = 6.0
PEAK = 0.6  # of full scale, before the ambience volume


def generate(seconds: float = SECONDS, seed: int = SEED) -> bytes:
    """One loop of mono 16-bit PCM at the stream rate."""
    rng = random.Random(seed)
    n = int(seconds * RATE)
    buf = [0.0] * n

    # Room tone: very soft low-passed noise, cross-faded end → start.
    fade = int(0.25 * RATE)
    bed = [0.0] * (n + fade)
    y = 0.0
    for i in range(n + fade):
        y = 0.97 * y + 0.03 * rng.uniform(-1.0, 1.0)
        bed[i] = y * 0.04
    for i in range(n):
        buf[i] = bed[i]
    for i in range(fade):
        w = i / fade
        buf[i] = bed[i] * w + bed[n + i] * (1.0 - w)

    # Taps: fingertips drumming in small irregular clusters.
    t = rng.uniform(0.05, 0.4)
    while t < seconds:
        for _ in range(rng.choice((1, 2, 2, 3, 3, 4))):
            _tap(buf, int(t * RATE), rng)
            t += rng.uniform(0.08, 0.2)
        t += rng.uniform(0.35, 1.2)

    peak = max(abs(v) for v in buf) or 1.0
    gain = PEAK * 32767 / peak
    samples = array("h", (int(v * gain) for v in buf))
    if sys.byteorder == "big":  # pragma: no cover - WAV data is little-endian
        samples.byteswap()
    return samples.tobytes()


def _tap(buf: list[float], start: int, rng: random.Random) -> None:
    """A knock: two damped wood resonances plus a 3 ms click, wrapped around."""
    n = len(buf)
    amp = rng.uniform(0.25, 1.0)
    f1 = rng.uniform(170.0, 380.0)
    f2 = f1 * rng.uniform(2.2, 2.8)
    tau = rng.uniform(0.008, 0.022) * RATE
    length = int(tau * 7)
    click = int(0.003 * RATE)
    for j in range(length):
        env = math.exp(-j / tau)
        v = math.sin(2 * math.pi * f1 * j / RATE) + 0.4 * math.sin(2 * math.pi * f2 * j / RATE) * env
        if j < click:
            v += rng.uniform(-0.6, 0.6) * (1 - j / click)
        buf[(start + j) % n] += amp * env * v


def masking_path(cache_dir: Path, seconds: float = SECONDS, seed: int = SEED) -> Path:
    """The loop's file in the cache, generated on first use."""
    path = Path(cache_dir) / f"masking-v{GENERATOR_VERSION}-{seed}-{seconds:g}s.wav"
    if not path.exists():
        write_wav(path, generate(seconds, seed))
    return path
