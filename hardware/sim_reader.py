"""A reader that exists only in software: scripts and the terminal put tags on it.

It behaves like the real one towards the table loop: it reports a tag only
while connected, and reports its own coming and going.
"""

from __future__ import annotations

import threading

from hardware.base import Emit, ReaderStatus, TagSeen


class SimulatedReader:
    def __init__(self) -> None:
        self._emit: Emit | None = None
        self._lock = threading.Lock()
        self.connected = True

    def start(self, emit: Emit) -> None:
        self._emit = emit
        emit(ReaderStatus(True, "simulated reader"))

    def stop(self) -> None:
        self._emit = None

    def present(self, *, text: str | None = None, uid: str | None = None) -> bool:
        """Lay a tag on the reader: an identity carried as NDEF text, or a bare
        UID.  Returns False (and nothing is reported) while unplugged."""
        with self._lock:
            if not self.connected or self._emit is None:
                return False
            self._emit(TagSeen(uid=uid, text=text))
            return True

    def unplug(self) -> None:
        with self._lock:
            if self.connected:
                self.connected = False
                if self._emit:
                    self._emit(ReaderStatus(False, "simulated reader unplugged"))

    def plug(self) -> None:
        with self._lock:
            if not self.connected:
                self.connected = True
                if self._emit:
                    self._emit(ReaderStatus(True, "simulated reader"))
