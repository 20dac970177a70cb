"""Rows read straight from a damaged SQLite file's pages, by the documented
file format (sqlite.org/fileformat2.html: "B-tree Pages", "Record Format").

What SQLite's own ``.recover`` does, for the one schema we write: every page
that is a table b-tree leaf is decoded cell by cell (overflow chains
followed), whatever happened to page 1, the schema or the interior pages that
lead to it; each row is told apart by its shape (the journal's tables differ
in column count and types).  Why not ``.recover`` itself: it needs the
``sqlite_dbpage`` table, which Debian's and Raspberry Pi OS's SQLite are
built without (the ``sqlite3`` tool there answers ``.recover`` with "SQL logic
error" and no row, damaged file or not), as are Python's and APSW's wheels.
The format is SQLite's long-term contract (unchanged since 3.0), so this
reader is small and stays right; ``salvage`` still runs ``.recover`` first
where a tool that has it is installed.

A page freed and not yet reused may hold an older version of a row.  For
inputs and plays that is the same row (they are only ever appended); for the
checkpoint, an older one is still a true state at its own seq: the newest
readable one is kept."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from companion.runtime.journal import PAGE_SIZE

TABLE_LEAF = 0x0D
MAX_OVERFLOW_PAGES = 4096  # a chain longer than any row we write is damage (or a loop)


def scan(path: Path) -> dict[str, dict[Any, tuple[Any, ...]]]:
    """The journal's rows found on ``path``'s pages, as salvage.Rows."""
    rows: dict[str, dict[Any, tuple[Any, ...]]] = {"meta": {}, "inputs": {}, "plays": {}, "checkpoint": {},
                                                  "outbox": {}}
    try:
        data = path.read_bytes()
    except OSError:
        return rows
    checkpoints: list[tuple[int, str]] = []
    for size, usable in _geometries(data):  # rows read at the first geometry win (_place keeps the first)
        for base in range(0, len(data) - size + 1, size):
            for rowid, values in _leaf_rows(data, base, size, usable):
                _place(rows, checkpoints, rowid, values)
    if checkpoints:
        rows["checkpoint"][1] = max(checkpoints)
    return rows


def _geometries(data: bytes) -> list[tuple[int, int]]:
    """(page size, usable bytes per page) to read the file with: first as
    every journal is written (``PAGE_SIZE``, no reserved bytes) — a damaged
    page-size field read as 512 or 8192 lost most rows — then as the header
    says, if it says otherwise."""
    mine = (PAGE_SIZE, PAGE_SIZE)
    if data[:16] == b"SQLite format 3\x00" and len(data) >= 100:
        (raw,) = struct.unpack(">H", data[16:18])
        size = 65536 if raw == 1 else raw
        if 512 <= size <= 65536 and not size & (size - 1) and (size, size - data[20]) != mine:
            return [mine, (size, size - data[20])]
    return [mine]


def _leaf_rows(data: bytes, base: int, size: int, usable: int) -> list[tuple[int, list[Any]]]:
    head = base + (100 if base == 0 else 0)
    if data[head] != TABLE_LEAF:
        return []
    (ncells,) = struct.unpack(">H", data[head + 3:head + 5])
    out = []
    for i in range(min(ncells, size // 2)):
        try:
            (ptr,) = struct.unpack(">H", data[head + 8 + 2 * i:head + 10 + 2 * i])
            if not 8 <= ptr < usable:
                continue
            at = base + ptr
            length, at = _varint(data, at)
            rowid, at = _varint(data, at)
            payload = _payload(data, at, length, size, usable)
            if payload is not None:
                out.append((_signed(rowid), _record(payload)))
        except (IndexError, ValueError, struct.error):
            continue  # a damaged cell: the rest of the page may still be good
    return out


def _payload(data: bytes, at: int, length: int, size: int, usable: int) -> bytes | None:
    most = usable - 35
    if length <= most:
        return data[at:at + length]
    least = (usable - 12) * 32 // 255 - 23
    local = least + (length - least) % (usable - 4)
    if local > most:
        local = least
    parts = [data[at:at + local]]
    (page,) = struct.unpack(">I", data[at + local:at + local + 4])
    got, seen = local, set[int]()
    while got < length:
        if page == 0 or page in seen or len(seen) >= MAX_OVERFLOW_PAGES or page * size > len(data):
            return None
        seen.add(page)
        start = (page - 1) * size
        chunk = data[start + 4:start + usable][:length - got]
        parts.append(chunk)
        got += len(chunk)
        (page,) = struct.unpack(">I", data[start:start + 4])
    return b"".join(parts)


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = 0
    for k in range(9):
        byte = data[at + k]
        if k == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + k + 1
    raise ValueError("varint")


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


_INTS = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def _record(payload: bytes) -> list[Any]:
    header, at = _varint(payload, 0)
    if header > len(payload):
        raise ValueError("header")
    types = []
    while at < header:
        t, at = _varint(payload, at)
        types.append(t)
    values: list[Any] = []
    body = header
    for t in types:
        if t == 0:
            values.append(None)
        elif t in _INTS:
            n = _INTS[t]
            values.append(int.from_bytes(payload[body:body + n], "big", signed=True))
            body += n
        elif t == 7:
            (f,) = struct.unpack(">d", payload[body:body + 8])
            values.append(f)
            body += 8
        elif t in (8, 9):
            values.append(t - 8)
        elif t >= 12:
            n = (t - 12) // 2
            raw = payload[body:body + n]
            values.append(raw.decode("utf-8") if t % 2 else raw)  # garbage text raises: the row is damage
            body += n
        else:
            raise ValueError("serial type")
    if body != len(payload):
        raise ValueError("record length")
    return values


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _place(rows: dict[str, dict[Any, tuple[Any, ...]]], checkpoints: list[tuple[int, str]],
           rowid: int, v: list[Any]) -> None:
    """A row goes to the table whose shape it has (journal.SCHEMA); an
    INTEGER PRIMARY KEY is stored as NULL, its value is the rowid."""
    if len(v) == 4 and v[0] is None and _number(v[1]) and _number(v[2]) and isinstance(v[3], str):
        rows["inputs"].setdefault(rowid, (v[1], v[2], v[3]))
    elif len(v) == 5 and v[0] is None and isinstance(v[1], int) and isinstance(v[2], int) \
            and isinstance(v[3], str) and isinstance(v[4], str):
        rows["plays"].setdefault(rowid, (v[1], v[2], v[3], v[4]))
    elif len(v) == 5 and isinstance(v[0], int) and isinstance(v[1], int) and all(isinstance(x, str) for x in v[2:]):
        rows["outbox"].setdefault((v[0], v[1]), tuple(v))
    elif len(v) == 3 and v[0] is None and rowid == 1 and isinstance(v[1], int) and isinstance(v[2], str):
        checkpoints.append((v[1], v[2]))
    elif len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], str):
        rows["meta"].setdefault(v[0], (v[0], v[1]))
