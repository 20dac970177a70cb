"""Which phone holds which seat, the pages' CSRF tokens, and the rate limit
on pairing attempts.

A seat's secret is 32 random bytes handed to the phone once, as an HttpOnly
SameSite=Strict cookie; we keep only its SHA-256, so neither a log nor a
look at memory dumps gives a cookie away.  Pairing a seat again replaces
its secret: the earlier phone is no longer that seat's page.

With a ``store`` (a file in the state directory) the digests and the token
key outlive a restart, as the journal's "seat paired" facts do: a phone
paired before a power cut is still its seat's page after it, and its page's
token still posts.  The file holds no cookie (only digests), is the daemon's
alone (0600), and a pairing is forgotten after ``COOKIE_AGE_S``, as the
phone forgets its cookie.
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

COOKIE = "companion_seat"
COOKIE_AGE_S = 12 * 3600  # a games night, with room to spare


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Pairings:
    def __init__(self, store: Path | None = None, wall: Callable[[], float] = time.time) -> None:
        self._by_digest: dict[str, tuple[str, float]] = {}  # sha256(secret) → (seat, paired at)
        self._key = secrets.token_bytes(32)  # signs page tokens
        self._lock = threading.Lock()
        self.store, self.wall = store, wall
        if store is not None:
            self._load(store)

    def pair(self, seat: str) -> str:
        """A new secret for ``seat``, replacing the one before."""
        secret = secrets.token_urlsafe(32)
        with self._lock:
            self._by_digest = {d: v for d, v in self._by_digest.items() if v[0] != seat}
            self._by_digest[_digest(secret)] = (seat, self.wall())
            self._save()
        return secret

    def seat_of(self, secret: str) -> str | None:
        if not secret:
            return None
        seat, at = self._by_digest.get(_digest(secret), ("", 0.0))
        return seat if seat and self.wall() - at < COOKIE_AGE_S else None

    def paired_seats(self) -> set[str]:
        now = self.wall()
        return {seat for seat, at in self._by_digest.values() if now - at < COOKIE_AGE_S}

    def _load(self, store: Path) -> None:
        """What an earlier run kept; a missing or damaged file is an empty one
        (the phones pair again, nothing worse)."""
        try:
            data = json.loads(store.read_text(encoding="utf-8"))
            key = bytes.fromhex(data["key"])
            seats = {str(d): (str(v[0]), float(v[1])) for d, v in data["seats"].items()}
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return
        now = self.wall()
        self._key = key
        self._by_digest = {d: v for d, v in seats.items() if now - v[1] < COOKIE_AGE_S}

    def _save(self) -> None:
        """Atomically, and durably before the phone gets its cookie."""
        if self.store is None:
            return
        data = {"key": self._key.hex(), "seats": {d: list(v) for d, v in self._by_digest.items()}}
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
        return bool(nonce) and hmac.compare_digest(mac, self._sign(nonce))

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
