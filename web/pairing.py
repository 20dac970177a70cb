"""Which phone holds which seat, the pages' CSRF tokens, and the rate limit
on pairing attempts.

A seat's secret is 32 random bytes handed to the phone once, as an HttpOnly
SameSite=Strict cookie; we keep only its SHA-256, so neither a log nor a
look at memory dumps gives a cookie away.  Pairing a seat again replaces
its secret: the earlier phone is no longer that seat's page.

A pairing belongs to its evening (the games night the table counts): when
the table starts a new evening every pairing ends, as the table's own
"seat paired" facts do.  Within a run a pairing is also aged by a monotonic
clock (``COOKIE_AGE_S``), never by the wall clock, which a Pi without a
real-time clock sets late and jumps.

With a ``store`` (a file in the state directory) the digests, their evening
and the token key outlive a restart: a phone paired before a power cut is
still its seat's page after it, in the same evening.  The file holds no
cookie (only digests), is the daemon's alone (0600), and is written
durably before anything changes in memory: a pairing that could not be
stored did not happen.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

COOKIE = "companion_seat"
COOKIE_AGE_S = 12 * 3600  # a games night, with room to spare (the browser forgets the cookie then too)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Pairings:
    """``now``: a monotonic clock; ``evening``: the table's evening now (the
    read side's), None where no table says (every pairing is then of one evening)."""

    def __init__(self, store: Path | None = None, now: Callable[[], float] = time.monotonic,
                 evening: Callable[[], Any] = lambda: None) -> None:
        self._by_digest: dict[str, tuple[str, float]] = {}  # sha256(secret) → (seat, paired at, monotonic)
        self._key = secrets.token_bytes(32)  # signs page tokens
        self._lock = threading.Lock()
        self.store, self.now, self.evening = store, now, evening
        self._evening = evening()  # the evening the pairings belong to
        if store is not None:
            self._load(store)

    def pair(self, seat: str) -> str:
        """A new secret for ``seat``, replacing the one before, stored first:
        raises ``OSError`` (and nothing changed) if it cannot be."""
        secret = secrets.token_urlsafe(32)
        with self._lock:
            self._start_evening()
            seats = {d: v for d, v in self._by_digest.items() if v[0] != seat}
            seats[_digest(secret)] = (seat, self.now())
            self._save(seats)
            self._by_digest = seats
        return secret

    def snapshot(self) -> dict[str, tuple[str, float]]:
        return dict(self._by_digest)

    def restore(self, seats: dict[str, tuple[str, float]]) -> None:
        """Back to a ``snapshot`` (a pairing stored, then not journaled)."""
        with self._lock:
            self._by_digest = dict(seats)
            try:
                self._save(self._by_digest)
            except OSError:  # the digest on disk is of a cookie no phone was given: harmless
                pass

    def seat_of(self, secret: str) -> str | None:
        if not secret or self.evening() != self._evening:
            return None
        seat, at = self._by_digest.get(_digest(secret), ("", 0.0))
        return seat if seat and self.now() - at < COOKIE_AGE_S else None

    def paired_seats(self) -> set[str]:
        if self.evening() != self._evening:
            return set()
        now = self.now()
        return {seat for seat, at in self._by_digest.values() if now - at < COOKIE_AGE_S}

    def new_evening(self) -> bool:
        """If the table has started a new evening: forget every pairing (and
        the file).  True if it did."""
        with self._lock:
            return self._start_evening()

    def _start_evening(self) -> bool:
        evening = self.evening()
        if evening == self._evening:
            return False
        self._evening, self._by_digest = evening, {}
        try:
            self._save({})
        except OSError:  # memory forgot them: no cookie opens a seat; the file is tried again at the next pairing
            pass
        return True

    def _load(self, store: Path) -> None:
        """What an earlier run kept, if it is of this evening; a missing or
        damaged file, or one of an earlier evening, is an empty one (the
        phones pair again, nothing worse)."""
        try:
            data = json.loads(store.read_text(encoding="utf-8"))
            key = bytes.fromhex(data["key"])
            evening = data.get("evening")
            seats = {str(d): str(v) for d, v in data["seats"].items() if isinstance(v, str)}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return
        self._key = key  # a page open across the restart still posts
        if evening != self._evening:
            try:
                self._save({})
            except OSError:
                pass
            return
        now = self.now()  # a stored pairing is aged from this run's start: no wall clock needed
        self._by_digest = {d: (seat, now) for d, seat in seats.items()}

    def _save(self, seats: dict[str, tuple[str, float]]) -> None:
        """Atomically and durably, before the phone gets its cookie."""
        if self.store is None:
            return
        data = {"key": self._key.hex(), "evening": self._evening, "seats": {d: v[0] for d, v in seats.items()}}
        tmp = self.store.with_name(self.store.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.store)

    # A page's token: a random nonce and its HMAC under this run's key, so any
    # page we served can post and nothing else can — without keeping a list.
    def csrf_token(self) -> str:
        nonce = secrets.token_urlsafe(12)
        return f"{nonce}.{self._sign(nonce)}"

    def csrf_ok(self, token: str) -> bool:
        nonce, _, mac = token.partition(".")
        return bool(nonce) and hmac.compare_digest(mac.encode(), self._sign(nonce).encode())  # bytes: any header

    def _sign(self, nonce: str) -> str:
        return hmac.new(self._key, nonce.encode(), hashlib.sha256).hexdigest()[:32]


class RateLimit:
    """At most ``count`` attempts per ``per`` seconds for each client."""

    def __init__(self, count: int, per: float, now: Callable[[], float] = time.monotonic) -> None:
        self.count, self.per, self.now = count, per, now
        self._seen: dict[str, deque[float]] = {}

    def allow(self, who: str) -> bool:
        t = self.now()
        seen = self._seen.setdefault(who, deque())
        while seen and seen[0] <= t - self.per:
            seen.popleft()
        if len(seen) >= self.count:
            return False
        seen.append(t)
        if len(self._seen) > 1024:  # forget clients long gone
            self._seen = {w: q for w, q in self._seen.items() if q and q[-1] > t - self.per}
        return True
