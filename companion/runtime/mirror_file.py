"""The journal mirror's files (runtime.mirror writes them): their names,
their lines, and reading them back.

A mirror belongs to one journal: its file is named for the journal's
identity (runtime.journal_identity: from its first input, which the file's
first line holds too) and epoch (a restore or a recovery gives the seqs out
again, so each epoch is a history of its own):
``journal-<epoch or first>-<identity>.jsonl``.  Two tables on one stick
thus write two files, and a stick from another table holds no file of this
one.  (The first mirrors were named ``journal-<epoch>.jsonl``: such a file
is this journal's only if its first line is this journal's first input.)

One line per input: ``<CRC-32 of the JSON, 8 hex> <JSON>``, the JSON holding
the very texts the journal's row holds (the input, and when the input ended
a game its play and checkpoint, and its MQTT outbox rows) — a rebuilt
journal holds the same rows, so the table comes back in the same state.  A
line whose checksum fails (a torn write, a flipped bit) is skipped, never
guessed at.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from companion.runtime.journal_identity import identity

TAIL_BYTES = 64 * 1024  # the end of a mirror read at every start: its last lines
Record = dict[str, Any]
_NAME = re.compile(r"journal-(?P<epoch>[0-9a-z]+?)(?:-(?P<ident>[0-9a-f]{8}))?\.jsonl")


def file_name(epoch: str, ident: str) -> str:
    return f"journal-{epoch or 'first'}-{ident}.jsonl"


def epoch_of(path: Path) -> str:
    m = _NAME.fullmatch(path.name)
    return "" if m is None or m["epoch"] == "first" else m["epoch"]


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


def last_record(path: Path, upto: int | None = None) -> Record | None:
    """The last good line (with ``upto``: the last whose seq is no higher),
    read from the file's end — cheap at every start."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - TAIL_BYTES))
        tail = f.read()
    for raw in reversed(tail.split(b"\n")[1:] if size > TAIL_BYTES else tail.split(b"\n")):
        if raw and (record := parse(raw)) is not None and (upto is None or record["seq"] <= upto):
            return record
    if size <= TAIL_BYTES:
        return None
    return next(reversed([r for r in records(path) if upto is None or r["seq"] <= upto]), None)


def first_identity(path: Path) -> str | None:
    """The identity of the journal a mirror file's first line comes from."""
    with open(path, "rb") as f:
        first = parse(f.readline())
    return identity(first["t"], first["wall"], first["input"]) if first is not None and first["seq"] == 1 else None


def belongs(path: Path, ident: str | None) -> bool:
    """Is this a mirror file of the journal ``ident`` (None: of any journal)?"""
    m = _NAME.fullmatch(path.name)
    if m is None:
        return False
    if ident is None:
        return True
    return m["ident"] == ident if m["ident"] else first_identity(path) == ident


def _identity(path: Path) -> str | None:
    m = _NAME.fullmatch(path.name)
    return m["ident"] if m is not None and m["ident"] else first_identity(path)


def found(folder: Path, ident: str | None, epoch: str | None) -> Path | None:
    """The journal's mirror file: of its identity and epoch (None: unknown,
    the one written last).  With no identity (a journal missing, unreadable,
    with no backup), the mirror of the only journal the folder holds any of.
    Reads the folder only."""
    try:
        names = [p for p in folder.iterdir() if _NAME.fullmatch(p.name)]
        mine = [p for p in names if (epoch is None or epoch_of(p) == epoch) and belongs(p, ident)]
        if ident is None and len({_identity(p) for p in mine}) > 1:
            return None  # several tables' mirrors, and nothing to tell which is this one's
        return max(mine, key=lambda p: (p.name.count("-") == 2, p.stat().st_mtime), default=None)  # named for it first
    except OSError:
        return None


def keep_through(data: bytes, seq: int) -> int:
    """Where a file holding ``data`` is cut to keep its lines up to the good
    line of ``seq`` (0: none), and nothing after: a torn write, a line the
    journal never took.  Only what follows that line's own newline goes."""
    if seq == 0:
        return 0
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1
        record = parse(data[start:end])
        if record is not None and record["seq"] == seq:
            return end
        end = start
    return 0


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
