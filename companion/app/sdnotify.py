"""The systemd notify protocol (sd_notify(3)) with the standard library only.

systemd passes ``$NOTIFY_SOCKET`` to a ``Type=notify`` service: a path to an
AF_UNIX datagram socket, or, starting with ``@``, a name in the abstract
namespace.  Each message is one datagram of ``KEY=value`` lines.  Off systemd
(no ``$NOTIFY_SOCKET``) every call here does nothing and returns False, so the
daemon calls them unconditionally.

The watchdog: with ``WatchdogSec=`` systemd sets ``$WATCHDOG_USEC`` (and
``$WATCHDOG_PID``, the pid that must ping); ``watchdog_interval()`` says how
often to call ``watchdog()`` - half the timeout, as sd_watchdog_enabled(3)
recommends.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

__all__ = ["Notifier", "notify", "ready", "reloading", "status", "stopping", "watchdog", "watchdog_interval"]


def _address(env: Mapping[str, str]) -> str | None:
    path = env.get("NOTIFY_SOCKET", "")
    if not path:
        return None
    if path.startswith("@"):
        return "\0" + path[1:]  # abstract namespace
    if not path.startswith("/"):
        return None  # sd_notify ignores anything else (vsock addresses are not for us)
    return path


class Notifier:
    """One connection to the notify socket.  ``env`` defaults to the process
    environment; tests pass their own."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = os.environ if env is None else env
        self._sock: socket.socket | None = None

    @property
    def enabled(self) -> bool:
        return _address(self._env) is not None

    def notify(self, message: str) -> bool:
        """Send one datagram; True if systemd got it.  Never raises: a lost
        notification must not take the table down (systemd then restarts us
        through the watchdog, which is the right outcome)."""
        address = _address(self._env)
        if address is None:
            return False
        try:
            if self._sock is None:
                # Non-blocking: a listener that stops reading must never stall the table loop.
                self._sock = socket.socket(socket.AF_UNIX,
                                           socket.SOCK_DGRAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK)
            self._sock.sendto(message.encode("utf-8"), address)
            return True
        except OSError:
            self.close()
            return False

    def ready(self, status_text: str | None = None) -> bool:
        return self.notify("READY=1" + (f"\nSTATUS={_one_line(status_text)}" if status_text else ""))

    def reloading(self) -> bool:
        return self.notify("RELOADING=1")

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def status(self, text: str) -> bool:
        return self.notify(f"STATUS={_one_line(text)}")

    def watchdog(self) -> bool:
        return self.notify("WATCHDOG=1")

    def watchdog_interval(self) -> float | None:
        """Seconds between ``watchdog()`` calls (half of ``WatchdogSec=``), or
        None when the watchdog is off or meant for another process."""
        usec = self._env.get("WATCHDOG_USEC", "")
        try:
            timeout = int(usec)
        except ValueError:
            return None
        if timeout <= 0:
            return None
        pid = self._env.get("WATCHDOG_PID", "")
        if pid:
            try:
                if int(pid) != os.getpid():
                    return None
            except ValueError:
                return None
        return timeout / 2_000_000

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _one_line(text: str) -> str:
    # A newline would start a new KEY=value assignment in the datagram.
    return " ".join(text.split())


_default = Notifier()


def notify(message: str) -> bool:
    return _default.notify(message)


def ready(status_text: str | None = None) -> bool:
    """Tell systemd the service is up (``Type=notify`` waits for this)."""
    return _default.ready(status_text)


def reloading() -> bool:
    return _default.reloading()


def stopping() -> bool:
    return _default.stopping()


def status(text: str) -> bool:
    """A one-line status for ``systemctl status``."""
    return _default.status(text)


def watchdog() -> bool:
    """Ping the watchdog; call every ``watchdog_interval()`` seconds."""
    return _default.watchdog()


def watchdog_interval() -> float | None:
    return _default.watchdog_interval()
