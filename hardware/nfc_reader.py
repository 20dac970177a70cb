"""The real reader: nfcpy's ContactlessFrontend on a Sony RC-S380 (``usb``), a
PN532 on the Pi's UART (``tty:S0:pn532``, ``tty:AMA0:pn532``) or, for tests,
nfcpy's UDP driver (``udp:127.0.0.1:PORT``).

A tag names itself with the first NDEF text record it carries; without one only
its UID is reported (the table loop maps UIDs through the tag map).  A tag that
cannot be read is reported with ``error`` so the table refuses it out loud.
Each tag is reported once per presence: after a read the connection watches the
tag until it has failed ``release_misses`` presence checks in a row; a tag
that comes back within ``debounce_s`` of leaving counts as never having left
(a tile at the edge of the field, a card nfcpy can activate but not keep);
and a tag that lay on the reader when the reader was lost, and still lies
there when it returns, is not reported a second time.

``nfc`` is imported only when a reader is opened, so the daemon starts fast
and runs without nfcpy in simulation.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from companion.core import settings
from companion.core.settings import Field
from hardware.base import Emit, Inbox, TagSeen
from hardware.supervisor import RETRY_S, Backoff, ReaderUnavailable, Supervisor

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class NfcConfig:
    """The ``reader:`` section as far as the nfcpy reader cares.

    ``device``: nfcpy path; ``poll_s``: pause between discovery rounds and
    between presence checks; ``targets``: what to look for (106A: NTAG and
    other Type 2/4A tags, 106B, 212F: FeliCa); ``release_misses``: failed
    presence checks in a row that mean "taken away"; ``debounce_s``: a tag
    back within this time of leaving is the same presence; ``retry_s``:
    ``[min, max]`` backoff while the reader is missing; ``beep``: let the
    reader beep/flash itself on a read (ACR122; the panel's buzzer is the
    usual feedback)."""

    device: str = "usb"
    poll_s: float = 0.1
    targets: tuple[str, ...] = ("106A", "106B", "212F")
    release_misses: int = 3
    debounce_s: float = 0.5
    backoff: Backoff = Backoff()
    beep: bool = False

    @classmethod
    def from_checked(cls, config: Mapping[str, Any]) -> NfcConfig:
        """The ``reader:`` section as the config loader checked it."""
        return cls(device=config["device"], poll_s=float(config["poll_s"]), targets=tuple(config["targets"]),
                   release_misses=config["release_misses"], debounce_s=float(config["debounce_s"]),
                   backoff=Backoff.from_checked(config), beep=config["beep"])

    @classmethod
    def from_mapping(cls, config: Mapping[str, Any] | None) -> NfcConfig:
        """From a plain mapping, checked by the schema's own rules (so nfcpy
        never chokes later, on the reader thread, where nobody would see why):
        ``SettingError`` (a ValueError) names the key.  The section's other
        keys (``backend``, ``tag_map``) are the wiring's and left alone."""
        own = {k: v for k, v in (config or {}).items() if k in SETTINGS}
        return cls.from_checked(settings.checked(SETTINGS, own, "reader"))


def _device(v: Any) -> str | None:
    return None if isinstance(v, str) and v else (
        f"must be an nfcpy device path (usb, tty:S0:pn532, tty:AMA0:pn532), not {v!r}")


# The reader's part of the ``reader:`` section of the config schema.
SETTINGS = {
    "device": Field(NfcConfig.device, _device,
                    "nfcpy path: usb (Sony RC-S380…), tty:S0:pn532 or tty:AMA0:pn532 (a PN532 on the UART)"),
    "retry_s": RETRY_S,
    "poll_s": Field(NfcConfig.poll_s, settings.number(0.01, 5),
                    "seconds between looks for a tag on the reader (lower: snappier, more CPU)"),
    "targets": Field(list(NfcConfig.targets), settings.subset("106A", "106B", "212F", "424F"),
                     "106A: NTAG/Type 2; 106B; 212F: FeliCa; 424F"),
    "release_misses": Field(NfcConfig.release_misses, settings.whole(1, 50),
                            "failed presence checks in a row that mean 'taken away'"),
    "debounce_s": Field(NfcConfig.debounce_s, settings.number(0, 10), "a tag back within this is the same tap"),
    "beep": Field(NfcConfig.beep, settings.switch, "let the reader beep itself (ACR122)", read=settings.read_switch),
}


# ---------------------------------------------------------------- one tag
def tag_uid(tag: Any) -> str:
    """The tag's UID (Type 3: IDm) as upper-case hex, the tag map's spelling."""
    return bytes(tag.identifier).hex().upper()


def first_text(octets: bytes) -> str | None:
    """The text of the first NDEF text record in ``octets``; None when there is
    none (an empty message, only URI records...).  Raises ``ndef.DecodeError``
    on data that is not an NDEF message."""
    import ndef

    for record in ndef.message_decoder(octets, errors="relax"):
        if isinstance(record, ndef.TextRecord):
            text = record.text.strip()
            return text or None
    return None


def fresh_ndef(tag: Any) -> Any:
    """Read the tag's NDEF data area again (not nfcpy's cached copy): a
    write is verified by what the tag gives back.  None: no NDEF on the tag."""
    ndef_area = tag.NDEF(tag)
    return ndef_area if ndef_area.has_changed else None


def read_tag(tag: Any) -> TagSeen:
    """What an activated nfcpy tag says about itself (see ``inspect_tag``)."""
    return inspect_tag(tag)[0]


def inspect_tag(tag: Any, *, fresh: bool = False) -> tuple[TagSeen, Any]:
    """The tag's report and its nfcpy NDEF area (None without one).

    ``OSError`` is let through: that is the reader going away, not the tag
    being bad.  Every tag-side failure becomes ``TagSeen(uid, error=...)``."""
    import ndef
    import nfc.clf
    import nfc.tag

    uid = tag_uid(tag)
    area = None
    try:
        area = fresh_ndef(tag) if fresh else tag.ndef
        if area is None or not area.is_readable:
            return TagSeen(uid=uid), area
        octets = area.octets
        if not octets:
            return TagSeen(uid=uid), area
        return TagSeen(uid=uid, text=first_text(octets)), area
    except OSError:
        raise
    except ndef.DecodeError as exc:
        return TagSeen(uid=uid, error=f"garbled NDEF data: {exc}"), area
    except (nfc.tag.TagCommandError, nfc.clf.CommunicationError) as exc:
        return TagSeen(uid=uid, error=f"tag read failed: {exc}"), area
    except Exception as exc:  # nfcpy on a strange tag: refuse the tag, keep the reader
        log.warning("reading %s failed", uid, exc_info=True)
        return TagSeen(uid=uid, error=f"tag read failed: {type(exc).__name__}: {exc}"), area


def wait_until_gone(tag: Any, stopping: Callable[[float], bool], misses_needed: int,
                    interval: float) -> bool:
    """Poll ``tag.is_present`` until it fails ``misses_needed`` times in a row.
    ``stopping(seconds)`` waits between checks and says whether to give up.
    Returns True when the tag is gone, False when stopped first.  OSError
    (reader lost) propagates."""
    misses = 0
    while not stopping(interval):
        try:
            present = tag.is_present
        except ValueError:  # nfcpy's UDP driver (the emulated reader) can reach select() with its
            present = False  # deadline already past, a negative wait: that poll heard nothing, a miss
        if present:
            misses = 0
            continue
        misses += 1
        if misses >= misses_needed:
            return True
    return False


def open_frontend(device: str, factory: Callable[[], Any] | None = None) -> Any:
    """An opened ContactlessFrontend on ``device``; ``ReaderUnavailable`` with the
    reason when there is none (not found, no permission, busy...)."""
    if factory is None:
        import nfc

        factory = nfc.ContactlessFrontend
    clf = factory()
    try:
        found = clf.open(device)
    except Exception as exc:
        _close(clf)
        hint = ""
        if isinstance(exc, OSError) and exc.errno == 13:
            hint = " (no permission: is the udev rule installed?)"
        if isinstance(exc, OSError) and exc.errno == 16:
            hint = " (busy: another program, or the port100 kernel module, holds it)"
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ReaderUnavailable(f"cannot open reader {device}: {reason}{hint}") from exc
    if not found:
        _close(clf)
        raise ReaderUnavailable(f"no reader found on {device}")
    return clf


def _close(clf: Any) -> None:
    try:
        clf.close()
    except Exception:  # a vanished device may fail to close; it is gone either way
        log.debug("closing the reader failed", exc_info=True)


# ---------------------------------------------------------------- connection
class NfcConnection:
    """One opened reader (the supervisor's ``Connection``): discovery rounds,
    reading, presence watching.  Owned by one thread at a time."""

    def __init__(self, config: NfcConfig, *, frontend_factory: Callable[[], Any] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._factory = frontend_factory
        self._clock = clock
        self._clf: Any = None
        # The tag that left last and when, for debounce across re-discovery.
        self._left: tuple[str, float] | None = None
        # The tag that lay on the reader when it was lost: if it is still there
        # in the first round after the reader returns, it is the same presence.
        self._held: str | None = None

    def open(self) -> str:
        self._clf = open_frontend(self.config.device, self._factory)
        return str(self._clf)

    def close(self) -> None:
        clf, self._clf = self._clf, None
        if clf is not None:
            _close(clf)

    def serve(self, emit: Emit, stopping: threading.Event) -> None:
        if self._clf is None:
            raise ReaderUnavailable("reader not open")
        while not stopping.is_set():
            tag = self._discover(stopping)
            if tag is None:
                continue
            self._handle(tag, emit, stopping)

    def _discover(self, stopping: threading.Event) -> Any:
        """The next activated tag, or None when stopping.  nfcpy's connect
        swallows IOError (unplugged, EIO/ENODEV) and returns False."""
        poll = self.config.poll_s
        rounds = 0

        def terminate() -> bool:
            # Asked before every discovery round: waiting on the stop event
            # here paces the rounds and makes stop() felt at once.
            nonlocal rounds
            rounds += 1
            if rounds > 1:
                self._held = None  # a whole round found nothing: the held tag is gone
            return stopping.wait(poll)

        options = {
            "targets": list(self.config.targets),
            "on-connect": lambda tag: False,  # hand the tag back: reading and presence are ours
            "iterations": 1,
            "beep-on-connect": False,
        }
        result = self._clf.connect(rdwr=options, terminate=terminate)
        if result is False:
            raise ReaderUnavailable(f"reader on {self.config.device} stopped answering")
        if result is None or result is True:
            return None
        return result

    def _handle(self, tag: Any, emit: Emit, stopping: threading.Event) -> None:
        uid = tag_uid(tag)
        held, self._held = self._held, None
        returning = (self._left is not None and self._left[0] == uid
                     and self._clock() - self._left[1] < self.config.debounce_s)
        if returning or held == uid:
            log.debug("tag %s is still the same presence", uid)
        else:
            event = read_tag(tag)
            log.info("tag %s: %s", uid, event.text or event.error or "no text record")
            emit(event)
            if self.config.beep:
                self._beep(True)
        try:
            gone = wait_until_gone(tag, stopping.wait, self.config.release_misses,
                                   self.config.poll_s)
        except BaseException:
            self._held = uid  # the reader went away under the tag
            raise
        finally:
            if self.config.beep:
                self._beep(False)
        if gone:
            self._left = (uid, self._clock())

    def _beep(self, on: bool) -> None:
        device: Any = getattr(self._clf, "device", None)
        try:
            if on:
                device.turn_on_led_and_buzzer()
            else:
                device.turn_off_led_and_buzzer()
        except Exception:  # feedback is a nicety; never lose a tap over it
            log.debug("reader beep failed", exc_info=True)


class NfcReader:
    """The ``Reader`` the daemon runs: an ``NfcConnection`` kept alive by a
    ``Supervisor`` (missing or lost reader: one ``ReaderStatus(False)``, retries
    with backoff, ``ReaderStatus(True)`` on return)."""

    def __init__(self, config: NfcConfig | Mapping[str, Any] | None = None, *,
                 frontend_factory: Callable[[], Any] | None = None,
                 wait: Callable[[float], object] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config if isinstance(config, NfcConfig) else NfcConfig.from_mapping(config)
        self.connection = NfcConnection(self.config, frontend_factory=frontend_factory, clock=clock)
        self.supervisor = Supervisor(self.connection, backoff=self.config.backoff, wait=wait,
                                     clock=clock, name=f"nfc reader {self.config.device}")

    @property
    def connected(self) -> bool | None:
        return self.supervisor.connected

    def start(self, inbox: Inbox) -> None:
        self.supervisor.start(inbox.submit)

    def close(self) -> None:
        self.supervisor.stop()
