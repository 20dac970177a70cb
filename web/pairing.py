"""Which phone holds which seat, the pages' CSRF tokens, and the rate limit
on pairing attempts.

A seat's secret is 32 random bytes handed to the phone once, as an HttpOnly
SameSite=Strict cookie; we keep only its SHA-256, so neither a log nor a
look at memory dumps gives a cookie away.  Pairing a seat again replaces
its secret: the earlier phone is no longer that seat's page.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable

COOKIE = "companion_seat"


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Pairings:
    def __init__(self) -> None:
        self._by_digest: dict[str, str] = {}  # sha256(secret) → seat
        self._key = secrets.token_bytes(32)  # signs page tokens; new at each start (pages reload)
        self._lock = threading.Lock()

    def pair(self, seat: str) -> str:
        """A new secret for ``seat``, replacing the one before."""
        secret = secrets.token_urlsafe(32)
        with self._lock:
            self._by_digest = {d: s for d, s in self._by_digest.items() if s != seat}
            self._by_digest[_digest(secret)] = seat
        return secret

    def seat_of(self, secret: str) -> str | None:
        if not secret:
            return None
        return self._by_digest.get(_digest(secret))

    def paired_seats(self) -> set[str]:
        return set(self._by_digest.values())

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
