"""The nfcpy reader: identities from NDEF text, UIDs otherwise, errors out
loud, once per presence, and a reader that may come and go.

Most tests run nfcpy's real reader path against a Type 3 tag that nfcpy
itself emulates over its UDP driver (``hardware/nfc_emulation.py``); the
presence bookkeeping is also pinned with fake tags and a fake clock, where
timing would otherwise decide."""

from __future__ import annotations

import errno
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import ndef
import pytest

from companion.core.tags import identify, valid_uid
from companion.runtime.inbox import Inbox
from hardware.base import ReaderStatus, TagSeen
from hardware.nfc_emulation import (
    EmulatedTag,
    Type3Emulator,
    blank_tag,
    garbled_tag,
    ndef_memory,
    no_ndef_tag,
    text_tag,
)
from hardware.nfc_reader import (
    NfcConfig,
    NfcConnection,
    NfcReader,
    first_text,
    open_frontend,
)
from hardware.supervisor import Backoff, ReaderUnavailable

WAIT = 3.0


def take(q: queue.Queue[Any], timeout: float = WAIT) -> Any:
    return q.get(timeout=timeout)


@pytest.fixture
def emulator() -> Iterator[Type3Emulator]:
    with Type3Emulator() as emu:
        yield emu


@pytest.fixture
def reader(emulator: Type3Emulator) -> Iterator[Any]:
    """Start an NfcReader on the emulator's port; returns its event queue."""
    started: list[NfcReader] = []

    def _start(**config: Any) -> queue.Queue[Any]:
        settings = {"device": emulator.path, "targets": ["212F"], "poll_s": 0.05,
                    "debounce_s": 0.2, **config}
        q = Inbox()  # a queue a source submits into
        r = NfcReader(settings)
        started.append(r)
        r.start(q)
        status = take(q)
        assert status == ReaderStatus(True, f"Linux IP-Stack on {emulator.path}") or \
            (isinstance(status, ReaderStatus) and status.connected), status
        return q

    yield _start
    for r in started:
        r.close()


# ---------------------------------------------------------------- config
def test_config_defaults_suit_an_rc_s380():
    config = NfcConfig.from_mapping({})
    assert config.device == "usb"
    assert config.targets == ("106A", "106B", "212F")
    assert config.backoff == Backoff(1.0, 30.0)


def test_config_reads_the_reader_section():
    config = NfcConfig.from_mapping({"backend": "nfc", "device": "tty:AMA0:pn532",
                                     "tag_map": "tags.yaml", "retry_s": [2, 20],
                                     "poll_s": 0.2, "targets": ["106A"]})
    assert (config.device, config.poll_s, config.targets) == ("tty:AMA0:pn532", 0.2, ("106A",))
    assert config.backoff == Backoff(2.0, 20.0)


@pytest.mark.parametrize("key, value", [("device", ""), ("device", 3), ("poll_s", 0),
                                        ("poll_s", "fast"), ("targets", ["106X"]),
                                        ("targets", []), ("release_misses", 0),
                                        ("debounce_s", -1), ("beep", "maybe"),
                                        ("retry_s", [5, 1])])
def test_config_refuses_bad_values_by_name(key, value):
    with pytest.raises(ValueError, match=key):
        NfcConfig.from_mapping({key: value})


def test_nfc_is_imported_only_when_a_reader_opens():
    import subprocess
    import sys

    code = ("import sys, hardware.nfc_reader, hardware.supervisor; "
            "hardware.nfc_reader.NfcReader({'device': 'usb'}); "
            "print('nfc' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    assert out.strip() == "False"


# ---------------------------------------------------------------- reading, over udp
def test_ndef_text_record_names_the_tag(emulator, reader):
    tag = emulator.place(text_tag("skb/knight/3"))
    q = reader()
    assert take(q) == TagSeen(uid=tag.uid, text="skb/knight/3")


def test_default_targets_reach_a_type3_tag_after_the_type_a_and_b_rounds(emulator, reader):
    # Over udp nobody answers 106A/106B, and each of those senses waits 1 s.
    tag = emulator.place(text_tag("game/demagogos"))
    q = reader(targets=["106A", "106B", "212F"])
    assert take(q, timeout=4) == TagSeen(uid=tag.uid, text="game/demagogos")


def test_the_first_text_record_counts(emulator, reader):
    message = b"".join(ndef.message_encoder([
        ndef.UriRecord("https://example.org/tile"),
        ndef.TextRecord("player/red", "en"),
        ndef.TextRecord("player/blue", "en"),
    ]))
    tag = emulator.place(EmulatedTag(ndef_memory(message)))
    assert take(reader()) == TagSeen(uid=tag.uid, text="player/red")


def test_japanese_language_text_is_still_the_identity(emulator, reader):
    tag = emulator.place(text_tag("game/one-night", lang="ja"))
    assert take(reader()) == TagSeen(uid=tag.uid, text="game/one-night")


@pytest.mark.parametrize("make", [blank_tag, no_ndef_tag,
                                  lambda: EmulatedTag(ndef_memory(b"".join(ndef.message_encoder(
                                      [ndef.UriRecord("https://example.org")]))))],
                         ids=["empty-ndef", "no-ndef", "no-text-record"])
def test_a_tag_without_text_reports_its_uid_only(emulator, reader, make):
    tag = emulator.place(make())
    event = take(reader())
    assert event == TagSeen(uid=tag.uid)
    assert valid_uid(event.uid)


def test_unknown_uid_is_left_to_the_tag_map(emulator, reader):
    tag = emulator.place(no_ndef_tag())
    event = take(reader())
    assert identify(event.text, event.uid, {}) is None  # the table refuses it out loud
    assert identify(event.text, event.uid, {tag.uid: "skb/witch"}) == "skb/witch"


def test_garbled_ndef_is_an_error_and_the_reader_keeps_reading(emulator, reader):
    bad = emulator.place(garbled_tag())
    q = reader()
    event = take(q)
    assert event.uid == bad.uid and event.text is None
    assert event.error and "garbled NDEF" in event.error
    emulator.remove()
    good = emulator.place(text_tag("onw/seer/1"))
    assert take(q) == TagSeen(uid=good.uid, text="onw/seer/1")


def test_a_tag_is_reported_once_per_presence(emulator, reader):
    tag = emulator.place(text_tag("player/green"))
    q = reader()
    assert take(q) == TagSeen(uid=tag.uid, text="player/green")
    emulator.wait_for_polls(8)  # the reader keeps checking that it is there...
    assert q.empty()  # ...and says nothing more
    emulator.remove()
    emulator.wait_for_search()  # it noticed the tag is gone and looks again
    emulator.place(tag)
    assert take(q) == TagSeen(uid=tag.uid, text="player/green")
    assert q.empty()


def test_a_tag_back_within_the_debounce_is_the_same_presence(emulator, reader):
    tag = emulator.place(text_tag("skb/knight/7"))
    q = reader(debounce_s=2.5)
    assert take(q) == TagSeen(uid=tag.uid, text="skb/knight/7")
    emulator.remove()
    emulator.wait_for_search()
    emulator.place(tag)
    emulator.wait_for_polls(4)  # found again and watched: the reader has decided
    assert q.empty()


def test_two_tags_in_turn_are_two_reports(emulator, reader):
    first = emulator.place(text_tag("player/red"))
    q = reader()
    assert take(q).uid == first.uid
    emulator.remove()
    second = emulator.place(text_tag("player/blue"))
    assert take(q) == TagSeen(uid=second.uid, text="player/blue")


def test_stop_is_prompt_with_a_tag_on_the_reader(emulator):
    emulator.place(text_tag("player/red"))
    q = Inbox()  # a queue a source submits into
    r = NfcReader({"device": emulator.path, "targets": ["212F"], "poll_s": 0.05})
    r.start(q)
    assert take(q).connected
    assert isinstance(take(q), TagSeen)
    started = time.monotonic()
    r.close()
    assert time.monotonic() - started < 1.0
    assert q.empty()


# ---------------------------------------------------------------- the reader comes and goes
class Plug:
    """The USB cable, for a real nfcpy frontend on the udp driver."""

    def __init__(self) -> None:
        self.plugged = True
        self.errno = errno.EIO


def unpluggable(plug: Plug) -> Any:
    import nfc

    class UnpluggableFrontend(nfc.ContactlessFrontend):  # type: ignore[misc]
        """nfcpy's frontend whose device fails like a pulled USB reader:
        open() finds nothing, and every exchange raises OSError."""

        def open(self, path: str) -> bool:
            if not plug.plugged:
                return False
            found = bool(super().open(path))
            for name in ("sense_ttf", "send_cmd_recv_rsp"):
                original = getattr(self.device, name)

                def guarded(*args: Any, _original: Any = original) -> Any:
                    if not plug.plugged:
                        raise OSError(plug.errno, "device gone")
                    return _original(*args)

                setattr(self.device, name, guarded)
            return found

    return UnpluggableFrontend


class QuickWait:
    """The supervisor's pause: records the backoff, waits only a moment."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self._event = threading.Event()

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        self._event.wait(0.01)


def start_unpluggable(emulator: Type3Emulator, plug: Plug, wait: QuickWait) -> tuple[NfcReader,
                                                                                     queue.Queue[Any]]:
    q = Inbox()  # a queue a source submits into
    r = NfcReader({"device": emulator.path, "targets": ["212F"], "poll_s": 0.05,
                   "retry_s": [1, 8]}, frontend_factory=unpluggable(plug), wait=wait)
    r.start(q)
    return r, q


def test_reader_unplugged_under_a_tag_comes_back_without_repeating_it(emulator):
    tag = emulator.place(text_tag("skb/knight/1"))
    plug, wait = Plug(), QuickWait()
    r, q = start_unpluggable(emulator, plug, wait)
    try:
        assert take(q).connected
        assert take(q) == TagSeen(uid=tag.uid, text="skb/knight/1")
        plug.plugged = False  # EIO on the next presence check: mid-read loss
        lost = take(q)
        assert lost == ReaderStatus(False, "reader error EIO: device gone")
        deadline = time.monotonic() + WAIT
        while len(wait.delays) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert wait.delays[:4] == [1, 2, 4, 8]
        assert q.empty()  # retried in silence
        plug.plugged = True
        assert take(q) == ReaderStatus(True, f"Linux IP-Stack on {emulator.path}")
        emulator.wait_for_polls(3)  # the tag still lies there: same presence
        assert q.empty()
        emulator.remove()
        other = emulator.place(text_tag("skb/knight/2"))
        assert take(q) == TagSeen(uid=other.uid, text="skb/knight/2")
    finally:
        r.close()


def test_reader_unplugged_while_searching_is_a_loss(emulator):
    plug, wait = Plug(), QuickWait()
    plug.errno = errno.ENODEV
    r, q = start_unpluggable(emulator, plug, wait)
    try:
        assert take(q).connected
        plug.plugged = False  # nfcpy's connect() swallows the ENODEV and returns False
        assert take(q) == ReaderStatus(False, f"reader on {emulator.path} stopped answering")
        plug.plugged = True
        assert take(q).connected
        tag = emulator.place(text_tag("mh/girl/human"))
        assert take(q) == TagSeen(uid=tag.uid, text="mh/girl/human")
    finally:
        r.close()


def test_reader_missing_at_start_is_announced_and_found_later(emulator):
    plug, wait = Plug(), QuickWait()
    plug.plugged = False
    r, q = start_unpluggable(emulator, plug, wait)
    try:
        assert take(q) == ReaderStatus(False, f"no reader found on {emulator.path}")
        plug.plugged = True
        assert take(q).connected
    finally:
        r.close()


def test_no_usb_reader_is_unavailable_not_a_crash():
    with pytest.raises(ReaderUnavailable, match="no reader found on usb:ffff:ffff"):
        open_frontend("usb:ffff:ffff")


# ---------------------------------------------------------------- presence, pinned with fakes
class FakeNdef:
    def __init__(self, octets: bytes) -> None:
        self.octets = octets
        self.is_readable = True


class FakeTag:
    def __init__(self, uid: str, octets: bytes = b"", present: int = 2,
                 read_error: BaseException | None = None,
                 presence_error: BaseException | None = None) -> None:
        self.identifier = bytes.fromhex(uid)
        self._octets = octets
        self._present = present
        self._read_error = read_error
        self._presence_error = presence_error

    @property
    def ndef(self) -> FakeNdef | None:
        if self._read_error is not None:
            raise self._read_error
        return FakeNdef(self._octets)

    @property
    def is_present(self) -> bool:
        if self._presence_error is not None:
            raise self._presence_error
        self._present -= 1
        return self._present >= 0


class FakeFrontend:
    """connect() hands out scripted results; each item may move the clock.
    When the script is done it sets ``stopping``."""

    def __init__(self, script: list[tuple[float, Any]], clock: list[float],
                 stopping: threading.Event) -> None:
        self.script = script
        self.clock = clock
        self.stopping = stopping

    def open(self, path: str) -> bool:
        return True

    def close(self) -> None:
        pass

    def connect(self, rdwr: dict[str, Any], terminate: Any) -> Any:
        assert rdwr["on-connect"](None) is False  # the tag comes back to us
        while True:
            if terminate():
                return None
            if not self.script:
                self.stopping.set()
                return None
            advance, result = self.script.pop(0)
            self.clock[0] += advance
            if result is not EMPTY_ROUND:
                return result


EMPTY_ROUND = object()  # a discovery round that finds nothing


class Beeper:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def turn_on_led_and_buzzer(self) -> None:
        self.calls.append("on")

    def turn_off_led_and_buzzer(self) -> None:
        self.calls.append("off")


def serve_script(script: list[tuple[float, Any]], **config: Any) -> list[Any]:
    clock = [0.0]
    stopping = threading.Event()
    settings = NfcConfig(poll_s=0.001, release_misses=2, **config)  # faster than a config may poll
    connection = NfcConnection(settings, frontend_factory=lambda: FakeFrontend(script, clock, stopping),
                         clock=lambda: clock[0])
    connection.open()
    events: list[Any] = []
    connection.serve(events.append, stopping)
    return events


TEXT = b"".join(ndef.message_encoder([ndef.TextRecord("skb/witch", "en")]))


def test_a_tag_returning_within_the_debounce_is_not_reported_again():
    events = serve_script([(0, FakeTag("04A1B2C3", TEXT)), (0.2, FakeTag("04A1B2C3", TEXT)),
                           (5.0, FakeTag("04A1B2C3", TEXT))], debounce_s=0.5)
    assert events == [TagSeen(uid="04A1B2C3", text="skb/witch")] * 2


def test_another_tag_is_reported_at_once():
    events = serve_script([(0, FakeTag("04A1B2C3", TEXT)), (0.1, FakeTag("04A1B2C4"))])
    assert events == [TagSeen(uid="04A1B2C3", text="skb/witch"), TagSeen(uid="04A1B2C4")]


def test_a_single_missed_presence_check_does_not_release_the_tag():
    class Flaky(FakeTag):
        answers = iter([True, False, True, False, True, False, False])

        @property
        def is_present(self) -> bool:
            return next(self.answers)

    stopping = threading.Event()
    from hardware.nfc_reader import wait_until_gone
    checks: list[float] = []

    def tick(seconds: float) -> bool:
        checks.append(seconds)
        return stopping.is_set()

    assert wait_until_gone(Flaky("04A1B2C3"), tick, 2, 0.1) is True
    assert len(checks) == 7  # released only at the two misses in a row


def test_connect_returning_false_means_the_reader_is_lost():
    with pytest.raises(ReaderUnavailable, match="stopped answering"):
        serve_script([(0, False)])


@pytest.mark.parametrize("code", [errno.EIO, errno.ENODEV])
def test_oserror_while_reading_is_a_lost_reader_not_a_bad_tag(code):
    with pytest.raises(OSError) as raised:
        serve_script([(0, FakeTag("04A1B2C3", read_error=OSError(code, "gone")))])
    assert raised.value.errno == code


def test_oserror_in_the_presence_check_is_a_lost_reader():
    with pytest.raises(OSError):
        serve_script([(0, FakeTag("04A1B2C3", TEXT, presence_error=OSError(errno.EIO, "gone")))])


def test_a_tag_command_error_is_reported_as_an_unreadable_tag():
    import nfc.tag.tt3

    events = serve_script([(0, FakeTag("04A1B2C3",
                                       read_error=nfc.tag.tt3.Type3TagCommandError(0x01A6)))])
    assert events[0].uid == "04A1B2C3" and events[0].error.startswith("tag read failed")


def test_first_text_skips_other_records_and_blank_text():
    assert first_text(b"") is None
    octets = b"".join(ndef.message_encoder([ndef.TextRecord("  ", "en")]))
    assert first_text(octets) is None
    with pytest.raises(ndef.DecodeError):
        first_text(bytes.fromhex("DEADBEEF"))


def test_a_tag_still_there_when_the_reader_returns_is_not_reported_again():
    clock = [0.0]
    stopping = threading.Event()
    script: list[tuple[float, Any]] = []
    settings = NfcConfig(poll_s=0.001, release_misses=2)
    connection = NfcConnection(settings, frontend_factory=lambda: FakeFrontend(script, clock, stopping),
                         clock=lambda: clock[0])
    events: list[Any] = []

    def serve(*items: Any) -> None:
        script[:] = [(10.0, item) for item in items]  # long past any debounce
        stopping.clear()
        connection.open()
        connection.serve(events.append, stopping)

    with pytest.raises(OSError):  # unplugged under the tile
        serve(FakeTag("04A1B2C3", TEXT, presence_error=OSError(errno.EIO, "gone")))
    serve(FakeTag("04A1B2C3", TEXT))  # back, and the tile still lies there
    assert events == [TagSeen(uid="04A1B2C3", text="skb/witch")]
    with pytest.raises(OSError):
        serve(FakeTag("04A1B2C3", TEXT, presence_error=OSError(errno.EIO, "gone")))
    serve(EMPTY_ROUND, FakeTag("04A1B2C3", TEXT))  # lifted while the reader was away, laid again
    assert events == [TagSeen(uid="04A1B2C3", text="skb/witch")] * 3


def test_beep_asks_the_reader_to_beep_while_the_tag_lies_there():
    clock = [0.0]
    stopping = threading.Event()
    beeper = Beeper()

    def frontend() -> FakeFrontend:
        fake = FakeFrontend([(0, FakeTag("04A1B2C3", TEXT))], clock, stopping)
        fake.device = beeper  # type: ignore[attr-defined]
        return fake

    connection = NfcConnection(NfcConfig(poll_s=0.001, beep=True),
                         frontend_factory=frontend, clock=lambda: clock[0])
    connection.open()
    connection.serve(lambda event: None, stopping)
    assert beeper.calls == ["on", "off"]


def test_finding_a_presence_check_that_times_out_before_it_waits_is_a_miss_not_a_crash():
    """nfcpy's UDP driver (the rehearsal's emulated reader) checks its deadline, then
    computes select()'s wait from it: on a loaded machine the wait came out negative
    and ``companion tags --rehearse`` ended in a traceback.  That poll heard nothing:
    a miss, counted like any other (the tag still there answers the next one)."""
    from hardware.nfc_reader import wait_until_gone

    class Late:
        def __init__(self) -> None:
            self.answers = iter([True, "late", True, "late", False])

        @property
        def is_present(self) -> bool:
            answer = next(self.answers)
            if answer == "late":
                raise ValueError("timeout must be non-negative")
            return bool(answer)

    polls: list[float] = []
    assert wait_until_gone(Late(), lambda s: polls.append(s) is not None, 2, 0.1) is True
    assert len(polls) == 5  # the late poll alone was not two misses in a row
