"""Recorded voice packs: a folder of WAV files named by line key.

``onw.seer.wake.wav`` replaces the synthesised "onw.seer.wake" line; any key
without a file falls back to TTS.  ``ambience.<sound>.wav`` replaces a
generated ambience (``ambience.masking.wav``).  A pack may hold one folder per
language (``<pack>/en/…``, ``<pack>/ja/…``); a pack without them applies to
every language.

Recordings only replace whole fixed lines: a recording cannot say the number
or name of a dynamic line, so dynamic keys always use TTS.

Every file is checked when the pack loads, and the bad ones are reported by
name (not WAV, unreadable, empty, truncated, unsupported sample format, or a
key no line uses — usually a typo that would otherwise stay silent forever).
Files in another format than the stream's (mono 16-bit 22050 Hz) are
converted once into ``convert_dir`` so playing them costs only a read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG

from voice.player import PcmError, is_stream_format, read_pcm, write_wav

AMBIENCE_PREFIX = "ambience."
MAX_FILE_BYTES = 32 * 2**20  # a spoken line is seconds, an ambience loop a minute or two of audio


@dataclass(frozen=True)
class PackProblem:
    name: str  # the file's name within the pack
    reason: str

    def __str__(self) -> str:
        return f"{self.name}: {self.reason}"


@dataclass
class VoicePack:
    folder: Path
    files: dict[str, Path] = field(default_factory=dict)  # key → playable WAV
    problems: list[PackProblem] = field(default_factory=list)

    @classmethod
    def empty(cls) -> VoicePack:
        return cls(Path("."))

    @classmethod
    def for_language(
        cls,
        pack_dir: Path | None,
        lang: str,
        *,
        known_keys: Collection[str] | None = None,
        convert_dir: Path | None = None,
    ) -> VoicePack:
        """The pack's ``<lang>/`` folder if it has one, else the pack itself."""
        if pack_dir is None:
            return cls.empty()
        sub = Path(pack_dir) / lang
        folder = sub if sub.is_dir() else Path(pack_dir)
        return cls.load(folder, known_keys=known_keys, convert_dir=convert_dir)

    @classmethod
    def load(
        cls,
        folder: Path,
        *,
        known_keys: Collection[str] | None = None,
        convert_dir: Path | None = None,
    ) -> VoicePack:
        """Index and validate ``folder``; a missing folder is a problem, not an error."""
        pack = cls(Path(folder))
        if not pack.folder.is_dir():
            pack.problems.append(PackProblem(str(folder), "voice pack folder not found"))
            return pack
        for path in sorted(pack.folder.iterdir()):
            if path.is_dir() or path.name.startswith("."):
                continue
            problem = pack._add(path, known_keys, convert_dir)
            if problem:
                pack.problems.append(PackProblem(path.name, problem))
        return pack

    def _add(self, path: Path, known_keys: Collection[str] | None, convert_dir: Path | None) -> str | None:
        if path.suffix.lower() != ".wav":
            return f"not a .wav file (only WAV is played; convert it, e.g. sox {path.name} {path.stem}.wav)"
        key = path.stem
        if key in self.files:
            return f"a second file for {key}"
        # Checked before opening: a FIFO would block start-up forever, a huge
        # file would be read whole into memory.
        try:
            st = path.stat()
            if not S_ISREG(st.st_mode):
                return "not a regular file (a pipe, device or socket is never opened)"
            if st.st_size > MAX_FILE_BYTES:
                return f"{st.st_size // 2**20} MB; a pack file must be under {MAX_FILE_BYTES // 2**20} MB"
            with open(path, "rb") as f:
                head = f.read(12)
        except OSError as exc:
            return f"cannot be read ({exc.strerror or exc})"
        if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return "not a readable WAV (no RIFF/WAVE header)"
        try:
            pcm = read_pcm(path)
        except PcmError as exc:
            return str(exc).removeprefix(f"{path.name}: ")
        if known_keys is not None and key not in known_keys and not key.startswith(AMBIENCE_PREFIX):
            return f"no line has the key {key!r} (a typo?)"
        playable = path
        if convert_dir is not None and not is_stream_format(path):
            stat = path.stat()
            origin = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
            tag = hashlib.sha1(origin.encode()).hexdigest()[:12]
            playable = Path(convert_dir) / f"{key}-{tag}.wav"
            if not playable.exists():
                write_wav(playable, pcm)
        self.files[key] = playable
        return None

    def get(self, key: str) -> Path | None:
        return self.files.get(key)

    def ambience(self, sound: str) -> Path | None:
        return self.files.get(AMBIENCE_PREFIX + sound)

    def report(self) -> list[str]:
        """One human sentence per bad file, naming it."""
        return [f"voice pack {self.folder}: {p}" for p in self.problems]

    def __contains__(self, key: object) -> bool:
        return key in self.files

    def __len__(self) -> int:
        return len(self.files)

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)
