"""SQLite's write-ahead log and its index (``-shm``), read by their
documented file format (sqlite.org/fileformat2.html: "The Write-Ahead Log",
"WAL-Index Format"): what a WAL would give a reader (``committed_frames``:
the salvage's), and damage SQLite would step over without a word
(``wal_problem``: the start-up check's).  Like ``page_scan`` for the main
file: the format is SQLite's long-term contract, so this stays small and right."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

from companion.runtime.journal import PAGE_SIZE


def wal_problem(wal: Path, page_size: int = PAGE_SIZE) -> str | None:
    """Damage SQLite would silently step over in a write-ahead log.  SQLite
    reads frames up to the first one whose checksum fails and drops the rest
    without a word: right after a power cut that is an unfinished write
    (nothing in it was accepted), but if *genuine* frames follow — two in a
    row of this generation whose checksums chain — a frame that was once
    durable has been damaged, and every input after it would be lost.
    (Damage inside the WAL's last transaction is indistinguishable from a
    power cut and is not reported: docs/develop/reliability.md.)"""
    shm = Path(str(wal)[:-4] + "-shm")
    missing = False
    try:
        data = wal.read_bytes()
    except FileNotFoundError:
        data, missing = b"", True
    except OSError as e:
        return f"its write-ahead log cannot be read ({e.strerror or e})"
    if len(data) < 32:  # no frame can be read (a header cut short by a power cut holds none)
        index = _shm_frames(shm, None)
        if index is not None and index[0] > index[1]:
            return (f"its write-ahead log is {'missing' if missing else 'empty' if not data else 'cut short'}: its index says "
                    f"{index[0] - index[1]} committed frames were in it, not yet in the main file")
        return None
    magic, _version, size, _ckpt, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    if 512 <= size <= 65536 and not size & (size - 1):
        page_size = size
    frame = 24 + page_size
    n = (len(data) - 32) // frame

    def head(k: int) -> tuple[int, ...]:
        return struct.unpack(">6I", data[32 + k * frame:56 + k * frame])

    def chains(k: int, start: tuple[int, ...], order: str) -> bool:
        at = 32 + k * frame
        s0, s1 = _wal_sum(data[at:at + 8], order, start[0], start[1])
        return _wal_sum(data[at + 24:at + frame], order, s0, s1) == head(k)[4:6]

    orders = [">" if magic & 1 else "<"] if magic in (0x377F0682, 0x377F0683) else ["<", ">"]
    header_ok = magic in (0x377F0682, 0x377F0683) and _wal_sum(data[:24], orders[0], 0, 0) == (c1, c2)
    first_bad = -1  # the header
    if header_ok:
        salts: tuple[int, ...] = (salt1, salt2)
        s: tuple[int, ...] = (c1, c2)
        first_bad = n
        for k in range(n):
            if head(k)[2:4] != salts or not chains(k, s, orders[0]):
                first_bad = k
                break
            s = head(k)[4:6]
        index = _shm_frames(shm, salts)
        if index is not None and index[0] > first_bad:
            return (f"its write-ahead log is damaged at frame {first_bad + 1}: its index says {index[0]} frames "
                    f"were committed, only {first_bad} can be read")
        if first_bad == n or head(first_bad)[2:4] != salts:
            return None  # all read, or the rest is an earlier generation
    else:
        index = _shm_frames(shm, None)
        if index is not None and index[0] > index[1]:
            return (f"its write-ahead log has a damaged header: its index says {index[0] - index[1]} committed "
                    "frames were in it, not yet in the main file")
        if not n:
            return None
        salts = head(0)[2:4]
    for k in range(first_bad + 1, n - 1):
        if head(k)[2:4] == salts == head(k + 1)[2:4] and any(chains(k + 1, head(k)[4:6], o) for o in orders):
            where = "its header" if first_bad < 0 else f"frame {first_bad + 1}"
            return f"its write-ahead log is damaged at {where}; the {n - first_bad - 1} frames after it would be lost"
    return None


def committed_frames(data: bytes, main_pages: int = 0) -> tuple[int, dict[int, bytes], int]:
    """What the WAL's committed frames hold: (page size, page number → its
    newest committed image, database size in pages at the last commit).

    More than SQLite would take, for a salvage: each frame is read by its own
    checksum, chained from the frame before it (its stored sum), so a damaged
    frame costs that frame, not every frame after it; a damaged 32-byte
    header costs nothing — its page size is not trusted over the journal's
    own (``PAGE_SIZE``), its byte order is tried both ways, and the
    generation's salts are the first frame's that checks out.  Only frames of
    a transaction whose commit frame checks out are taken (the rest were never
    acknowledged).  What a frame may claim is bounded by what the files hold:
    a database grows at most a page a frame beyond ``main_pages``."""
    if len(data) < 32:
        return PAGE_SIZE, {}, 0
    magic, _version, size, *_ = struct.unpack(">8I", data[:32])
    sizes = [PAGE_SIZE] + ([size] if size != PAGE_SIZE and 512 <= size <= 65536 and not size & (size - 1) else [])
    orders = [">" if magic & 1 else "<"] if magic in (0x377F0682, 0x377F0683) else [">", "<"]
    best: tuple[int, dict[int, bytes], int] = (PAGE_SIZE, {}, 0)
    for page in sizes:
        for order in orders:
            pages, db_pages = _frames_read(data, page, order, main_pages)
            if len(pages) > len(best[1]):
                best = (page, pages, db_pages)
    return best


def _frames_read(data: bytes, size: int, order: str, main_pages: int) -> tuple[dict[int, bytes], int]:
    frame = 24 + size
    n = (len(data) - 32) // frame
    limit = main_pages + n
    stored = struct.unpack(">2I", data[24:32])
    # The first frame chains from the header's sum: the one stored, or (its
    # last 8 bytes damaged) the one its first 24 bytes give.
    seeds = {stored, _wal_sum(data[:24], order, 0, 0)}
    salts: tuple[int, ...] | None = None
    pages: dict[int, bytes] = {}
    pending: dict[int, bytes] = {}
    db_pages = 0
    for k in range(n):
        at = 32 + k * frame
        pgno, commit, fs1, fs2, fc1, fc2 = struct.unpack(">6I", data[at:at + 24])
        good = (salts is None or (fs1, fs2) == salts) and 1 <= pgno <= limit and any(
            _wal_sum(data[at + 24:at + frame], order, *_wal_sum(data[at:at + 8], order, *s)) == (fc1, fc2)
            for s in seeds)
        seeds = {(fc1, fc2)}  # the next frame chains from this one's stored sum, good or not
        if not good:  # its transaction's other frames still count: each holds whole rows (see salvage)
            continue
        salts = (fs1, fs2)
        pending[pgno] = data[at + 24:at + frame]
        if commit:
            pages.update(pending)
            pending.clear()
            db_pages = min(commit, limit)  # a claim past what the files hold is not believed
    return pages, db_pages


def _shm_frames(shm: Path, salts: tuple[int, ...] | None) -> tuple[int, int] | None:
    """(frames committed, frames already copied into the main file) as the
    wal-index (``-shm``) has them, if it holds a valid header — for this
    generation of the WAL when ``salts`` are given.  Sound after a kill and
    after a power cut alike: SQLite fsyncs a commit's frames before the index
    counts them, so a durable index never counts more frames than were durable."""
    try:
        with open(shm, "rb") as f:
            raw = f.read(136)
    except OSError:
        return None
    if len(raw) < 100 or raw[:48] != raw[48:96]:
        return None  # absent, or caught mid-update: nothing to go by
    order = "<" if sys.byteorder == "little" else ">"
    _version, _unused, _change, is_init, _big, _page, mx_frame, _npage, _f1, _f2, _s1, _s2, k1, k2 = struct.unpack(
        f"{order}3IBBH8I", raw[:48])
    copied = struct.unpack(">2I", raw[32:40])  # the salts are the WAL header's bytes, copied as they are
    if not is_init or _wal_sum(raw[:40], order, 0, 0) != (k1, k2) or (salts is not None and copied != salts):
        return None
    (backfilled,) = struct.unpack(f"{order}I", raw[96:100])
    return int(mx_frame), int(backfilled)


def _wal_sum(buf: bytes, order: str, s0: int, s1: int) -> tuple[int, int]:
    words = struct.unpack(f"{order}{len(buf) // 4}I", buf)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1
