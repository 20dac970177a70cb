"""The journal's mirror (``journal: mirror: DIR``: a USB stick, a second card):
every accepted input also appended and fsynced there before its feedback, in
a form the table is rebuilt from by replay alone.

One append-only file per journal epoch (``journal-<epoch>.jsonl``: a
restore or a recovery gives the seqs out again, so each epoch is a history of
its own), one line per input: ``<CRC-32 of the JSON, 8 hex> <JSON>``, the JSON
holding the very texts the journal's row holds (the input, and when the input
ended a game its play and checkpoint, and its MQTT outbox rows) — a rebuilt
journal holds the same rows, so the table comes back in the same state.  A
line whose checksum fails (a torn write, a flipped bit) is skipped, never
guessed at.

The mirror is a second chance, never a reason to stop: a folder that is
missing (an unplugged stick's empty mount point is never written to: DIR must
already exist), a write or an fsync that fails, and the table goes on with
the journal alone; the loop says it once, after the night if it is night
(``due``), the log has it at once, ``companion doctor`` reports it.  It is
tried again at the next start, which first brings it up to date.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from companion import threads
from companion.core.events import Say

TAIL_BYTES = 64 * 1024  # the end of a mirror read at every start: its last lines
Record = dict[str, Any]


def file_name(epoch: str) -> str:
    return f"journal-{epoch or 'first'}.jsonl"


def line(record: Record) -> bytes:
    body = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
    return b"%08x %s\n" % (zlib.crc32(body), body)


def parse(raw: bytes) -> Record | None:
    """One line's record, or None if its checksum or its shape is wrong."""
    crc, _, body = raw.rstrip(b"\n").partition(b" ")
    try:
        if int(crc, 16) != zlib.crc32(body):
            return None
        record = json.loads(body)
    except ValueError:
        return None
    if not (isinstance(record, dict) and isinstance(record.get("seq"), int) and isinstance(record.get("input"), str)
            and all(isinstance(record.get(k), (int, float)) for k in ("t", "wall"))):
        return None
    return record


def records(path: Path) -> Iterator[Record]:
    """Every line with a good checksum, in order, seqs rising (a line out of
    order is damage too)."""
    last = 0
    with open(path, "rb") as f:
        for raw in f:
            record = parse(raw)
            if record is not None and record["seq"] > last:
                last = record["seq"]
                yield record


def last_record(path: Path) -> Record | None:
    """The last good line, read from the file's end (every start, cheaply)."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - TAIL_BYTES))
        tail = f.read()
    for raw in reversed(tail.split(b"\n")):
        if raw and (record := parse(raw)) is not None:
            return record
    return None if size <= TAIL_BYTES else next(reversed(list(records(path))), None)


def newest(folder: Path) -> Path | None:
    """The mirror file written last: the history when the journal's epoch cannot be read."""
    try:
        found = [p for p in folder.iterdir() if p.name.startswith("journal-") and p.name.endswith(".jsonl")]
    except OSError:
        return None
    return max(found, key=lambda p: p.stat().st_mtime, default=None)


CATCH_UP = 5000  # inputs a start brings over at a time: a long history never sits in memory whole


def journal_records(db: Any, after: int, upto: int) -> Iterator[Record]:
    """The journal's rows for each input with ``after < seq <= upto``, as
    mirror records.  Every query walks an index or stops early: this runs for
    every tap, however long the history."""
    plays: dict[int, list[Any]] = {}
    for row in db.execute("SELECT id, seq, session, game, play FROM plays ORDER BY id DESC"):  # seqs rise with ids
        if row[1] <= after:
            break  # read lazily: a tap reads one play, not the season
        if row[1] <= upto:
            plays[row[1]] = [row[0], *row[2:]]
    letters: dict[int, list[list[Any]]] = {}
    for seq, k, mid, topic, payload in db.execute(
            "SELECT seq, k, id, topic, payload FROM outbox WHERE seq > ? AND seq <= ? ORDER BY seq, k",
            (after, upto)).fetchall():
        letters.setdefault(seq, []).append([k, mid, topic, payload])
    cp = db.execute("SELECT seq, state FROM checkpoint WHERE id=1 AND seq > ? AND seq <= ?", (after, upto)).fetchone()
    for seq, t, wall, text in db.execute(
            "SELECT seq, t, wall, input FROM inputs WHERE seq > ? AND seq <= ? ORDER BY seq", (after, upto)).fetchall():
        record: Record = {"seq": seq, "t": t, "wall": wall, "input": text}
        if seq in plays:
            record["play"] = plays[seq]
        if cp is not None and cp[0] == seq:
            record["checkpoint"] = cp[1]
        if seq in letters:
            record["letters"] = letters[seq]
        yield record


def as_rows(history: list[Record], epoch: str | None) -> dict[str, dict[Any, tuple[Any, ...]]]:
    """A mirror's history as the journal's rows (runtime.salvage.Rows)."""
    rows: dict[str, dict[Any, tuple[Any, ...]]] = {"meta": {}, "inputs": {}, "plays": {}, "checkpoint": {},
                                                  "outbox": {}}
    if epoch:
        rows["meta"]["epoch"] = ("epoch", epoch)
    for r in history:
        rows["inputs"][r["seq"]] = (r["t"], r["wall"], r["input"])
        play = r.get("play")
        if isinstance(play, list) and len(play) == 4 and isinstance(play[0], int):
            rows["plays"][play[0]] = (r["seq"], *play[1:])
        if isinstance(r.get("checkpoint"), str):
            rows["checkpoint"][1] = (r["seq"], r["checkpoint"])
        for letter in r.get("letters") or []:
            if isinstance(letter, list) and len(letter) == 4:
                rows["outbox"][(r["seq"], letter[0])] = (r["seq"], *letter)
    return rows


def epoch_of(path: Path) -> str:
    name = path.name.removeprefix("journal-").removesuffix(".jsonl")
    return "" if name == "first" else name


class Mirror:
    """The mirror of one journal, opened at start (``open``), then given
    each input as it is committed (``stage`` and ``settle``, from ``Journal.append``)."""

    sync: Callable[[int], None] = staticmethod(os.fsync)  # a modeled card's in the bench

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path: Path | None = None
        self.problem: str | None = None  # why it stopped, once it has
        self._said = False
        self._f: Any = None
        self._staged_at: int | None = None  # where the line being synced begins
        self._staged_seq = 0  # and its input's seq
        self._error: OSError | None = None  # its sync's failure
        self._synced = threading.Event()
        self._jobs: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self.report: Callable[[str], None] = lambda message: None

    def open(self, db: Any, epoch: str) -> None:
        """Bring the mirror up to the journal (a torn last line cut off, the
        inputs it lacks appended): from here on it holds every input."""
        self.path = self.folder / file_name(epoch)
        try:
            if not self.folder.is_dir():
                raise FileNotFoundError(f"{self.folder} is not there (is the stick plugged in and mounted?)")
            last = 0
            if self.path.exists():
                got = last_record(self.path)
                last = got["seq"] if got else 0
                self._cut_after(last)
            self._f = open(self.path, "ab")
            top = int(db.execute("SELECT coalesce(max(seq), 0) FROM inputs").fetchone()[0])
            while last < top:
                batch = b"".join(line(r) for r in journal_records(db, last, last + CATCH_UP))
                if batch:
                    self._write(batch)
                last += CATCH_UP
        except OSError as e:
            self._fail(e)

    def _cut_after(self, last: int) -> None:
        """Drop what follows the last good line (a write a power cut tore)."""
        assert self.path is not None
        data = self.path.read_bytes()
        end = len(data)
        for raw in reversed(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")):
            record = parse(raw)
            if record is not None and record["seq"] == last:
                break
            end -= len(raw) + 1
        if end < len(data):
            with open(self.path, "r+b") as f:
                f.truncate(max(0, min(end, len(data))))
                self.sync(f.fileno())

    # One input's line: written inside its journal transaction (``stage``), its
    # fsync on the mirror's own thread while the journal's COMMIT syncs on the
    # SD card, and waited for after the COMMIT (``settle``): two devices' syncs
    # side by side, not one after the other — still before the feedback.
    def stage(self, db: Any, seq: int) -> None:
        """Input ``seq`` is about to be committed: its line written, its sync begun."""
        if self._f is None:
            return
        if self._staged_at is not None:  # a transaction that ended without a word: kept if its seq was not given again
            self.settle(committed=self._staged_seq < seq)
        try:
            at = self._f.tell()
            self._f.write(b"".join(line(r) for r in journal_records(db, seq - 1, seq)))
            self._f.flush()
        except OSError as e:
            return self._fail(e)
        self._staged_at, self._staged_seq, self._error = at, seq, None
        self._synced.clear()
        if self._worker is None:
            self._worker = threads.spawn("journal-mirror", self._sync_lines, stop=lambda: self._jobs.put(None))
        self._jobs.put(self._f.fileno())
        return None

    def settle(self, committed: bool) -> None:
        """After the journal's COMMIT (or its failure): the line synced, or —
        the input not taken — cut off again, so the mirror never holds an input
        the journal refused."""
        if self._staged_at is None:
            return
        at, self._staged_at = self._staged_at, None
        self._synced.wait()
        try:
            if self._error is not None:
                raise self._error
            if not committed and self._f is not None:
                self._f.truncate(at)
                self.sync(self._f.fileno())
        except OSError as e:
            self._fail(e)

    def _sync_lines(self) -> None:
        while (fd := self._jobs.get()) is not None:
            try:
                self.sync(fd)
            except OSError as e:
                self._error = e
            finally:
                self._synced.set()

    def _write(self, data: bytes) -> None:
        self._f.write(data)
        self._f.flush()
        self.sync(self._f.fileno())

    def _fail(self, e: OSError) -> None:
        self.problem = f"journal mirror {self.folder}: {e.strerror or e}; the table goes on with the journal alone"
        self._close_file()
        self.report(self.problem)

    def due(self, quiet: bool) -> list[Say]:
        """The line the table hears once, when the mirror stopped — never while
        eyes are closed (the night must sound the same)."""
        if self.problem is None or self._said or quiet:
            return []
        self._said = True
        return [Say("journal.mirror_lost")]

    def close(self) -> None:
        if self._worker is not None:
            self._jobs.put(None)
            self._worker.join(5)
            self._worker = None
        self._close_file()

    def _close_file(self) -> None:
        """Close the mirror's file; a device already gone cannot refuse it more."""
        if self._f is not None:
            try:
                self._f.close()
            except OSError:
                pass
            self._f = None
