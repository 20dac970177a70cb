"""An NFC Forum Type 3 (FeliCa) tag emulated with nfcpy over its UDP driver:
the reader's own stand-in, shipped with it as gpiozero ships its mock pins,
so the real reader path runs with no reader (the tests use it).

The reader under test opens ``udp:127.0.0.1:PORT`` and runs nfcpy's real
reader path (sense_ttf, Type 3 activation, Check/Update commands, NDEF
decoding, presence polling).  On the other end of the port this module runs
nfcpy as a *card*: ``ContactlessFrontend.listen`` with a 212F ``LocalTarget``
answers the SENSF_REQ, ``nfc.tag.emulate`` builds a ``Type3TagEmulation``, and
its NDEF services read and write an in-memory block array (block 0: attribute
information block; blocks 1..: NDEF message).

Control is a "field": ``place(tag)`` lays a tag on it, ``remove()`` takes it
away and returns only once the tag has stopped answering, so a test never sees
a ghost.  While the field is empty the emulator still holds the port with a
plain socket that answers nothing but notes what the reader sends, so a test
can wait for the reader to *search* again (``wait_for_search``: it has let the
tag go) instead of sleeping.  Every emulator has its own free port and its own
thread; ``close`` joins it.

Limits (nfcpy 1.0.4's udp driver): the listener binds its port afresh for
every listen and closes it after, so the port is picked (free, with a numeric
service name, which the driver needs) but not held throughout; listen_ttf
answers a SENSF_REQ that comes after its timeout and then returns None, so the
emulator listens in long stretches and interrupts them itself (``_poke``); a
reader's sense with nothing in the field waits 1 s for an answer.
"""

from __future__ import annotations

import select
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any

NDEF_READ = 0x000B
NDEF_WRITE = 0x0009
# PMm: IC code 0xFF (a plain Type 3 tag to nfcpy, no Sony product quirks);
# bytes 5 and 6 give generous read/write response times for a Python peer.
PMM = bytes.fromhex("01FF000000FFFF00")
SYSTEM_CODE = bytes.fromhex("12FC")
LISTEN_S = 30.0


def free_udp_port() -> int:
    """A UDP port nobody holds now and that nfcpy can spell.

    nfcpy's udp driver turns the port through getnameinfo without
    NI_NUMERICSERV, so a port with a service name (9 → "discard") breaks it."""
    for _ in range(50):
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            probe.bind(("0.0.0.0", 0))
            port = probe.getsockname()[1]
        finally:
            probe.close()
        _, service = socket.getnameinfo(("127.0.0.1", port), socket.NI_NUMERICHOST)
        if service.isdigit():
            return int(port)
    raise RuntimeError("no usable UDP port found")


def attribute_block(*, length: int, blocks: int, writable: bool = True,
                    nbr: int = 4, nbw: int = 4, version: int = 0x10) -> bytearray:
    """The Type 3 attribute information block (NFC Forum T3T, block 0)."""
    data = bytearray(16)
    data[0:5] = struct.pack(">BBBH", version, nbr, nbw, blocks)
    data[10] = 0x01 if writable else 0x00
    data[11:14] = struct.pack(">I", length)[1:]
    data[14:16] = struct.pack(">H", sum(data[0:14]))
    return data


def ndef_memory(message: bytes = b"", *, blocks: int = 16, writable: bool = True) -> bytearray:
    """Block 0 attributes + ``blocks`` blocks holding ``message``."""
    assert len(message) <= blocks * 16
    area = bytearray(message) + bytearray(blocks * 16 - len(message))
    return attribute_block(length=len(message), blocks=blocks, writable=writable) + area


def text_message(*texts: str, lang: str = "en") -> bytes:
    import ndef

    return b"".join(ndef.message_encoder([ndef.TextRecord(t, lang) for t in texts]))


_next_idm = [0x10]


def new_idm() -> bytes:
    """A fresh IDm per tag (manufacturer 03FE, not 01FE which means P2P)."""
    _next_idm[0] += 1
    return bytes.fromhex("03FE0000") + _next_idm[0].to_bytes(4, "big")


@dataclass
class EmulatedTag:
    memory: bytearray
    idm: bytes = field(default_factory=new_idm)
    writable: bool = True

    @property
    def uid(self) -> str:
        return self.idm.hex().upper()

    @property
    def ndef_octets(self) -> bytes:
        length = int.from_bytes(self.memory[11:14], "big")
        return bytes(self.memory[16:16 + length])

    def texts(self) -> list[str]:
        import ndef

        return [r.text for r in ndef.message_decoder(self.ndef_octets)
                if isinstance(r, ndef.TextRecord)]

    # -- what nfcpy's Type3TagEmulation calls, on the emulator thread
    def read_block(self, number: int, rb: bool, re: bool) -> bytearray | None:
        if 0 <= number < len(self.memory) // 16:
            return self.memory[number * 16:(number + 1) * 16]
        return None

    def write_block(self, number: int, data: bytearray, wb: bool, we: bool) -> bool:
        if not self.writable or not 0 <= number < len(self.memory) // 16:
            return False
        self.memory[number * 16:(number + 1) * 16] = data
        return True


def text_tag(*texts: str, lang: str = "en", writable: bool = True) -> EmulatedTag:
    return EmulatedTag(ndef_memory(text_message(*texts, lang=lang), writable=writable),
                       writable=writable)


def blank_tag(*, writable: bool = True) -> EmulatedTag:
    """Formatted for NDEF, holding an empty message: what a new sticker is."""
    return EmulatedTag(ndef_memory(b"", writable=writable), writable=writable)


def no_ndef_tag() -> EmulatedTag:
    """All-zero memory: no attribute information, so no NDEF at all."""
    return EmulatedTag(bytearray(17 * 16))


def garbled_tag() -> EmulatedTag:
    """Valid attribute block, but the message bytes are not NDEF."""
    junk = bytes.fromhex("DEADBEEF") * 4
    memory = attribute_block(length=len(junk), blocks=16) + bytearray(junk) + bytearray(16 * 15)
    return EmulatedTag(memory)


class Type3Emulator:
    """A field on a free UDP port where one emulated tag at a time can lie."""

    def __init__(self) -> None:
        self.port = free_udp_port()
        self._cond = threading.Condition()
        self._placed: EmulatedTag | None = None
        self._serving: EmulatedTag | None = None
        self._closing = False
        self.polls = 0  # polling commands answered (discovery and presence checks)
        self.sessions = 0  # times a reader activated the tag
        self.searches = 0  # discovery requests (SENSF_REQ) heard while the field was empty
        self._thread = threading.Thread(target=self._run, name=f"t3t-emulator:{self.port}",
                                        daemon=True)
        self._clf: Any = None
        import nfc

        self._clf = nfc.ContactlessFrontend(self.path)
        self._count_polls(self._clf.device)
        self._thread.start()

    @property
    def path(self) -> str:
        return f"udp:127.0.0.1:{self.port}"

    def place(self, tag: EmulatedTag) -> EmulatedTag:
        with self._cond:
            self._placed = tag
            self._cond.notify_all()
        return tag

    def remove(self, timeout: float = 3.0) -> None:
        with self._cond:
            self._placed = None
            self._cond.notify_all()
        if not self._until_idle(lambda: self._serving is None, timeout):
            raise TimeoutError("emulated tag did not leave the field")

    def _until_idle(self, done: Any, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not done():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._poke(self._serving)
                self._cond.wait(min(0.05, left))
        return True

    def _poke(self, tag: EmulatedTag | None) -> None:
        """Make the emulator thread look up from nfcpy.  A session ends on RFOFF.
        A listen ignores RFOFF until its time is up, but returns as soon as a
        command for its IDm follows a poll, so send that pair as well."""
        frames = [b"RFOFF", b"212F " + b"0600" + SYSTEM_CODE.hex().encode() + b"0000"]
        if tag is not None:
            frames.append(b"212F " + (bytes([10, 0x04]) + tag.idm).hex().encode())
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            for frame in frames:
                sock.sendto(frame, ("127.0.0.1", self.port))
        finally:
            sock.close()

    def wait_for_polls(self, count: int, timeout: float = 3.0) -> None:
        """Until the tag has answered ``count`` more polls (the reader found it,
        or checked it is still there)."""
        with self._cond:
            target = self.polls + count
            if not self._cond.wait_for(lambda: self.polls >= target, timeout):
                raise TimeoutError(f"reader polled {self.polls} times, expected {target}")

    def wait_for_search(self, timeout: float = 3.0) -> None:
        """Until the reader, its tag gone, sends a discovery request into the
        empty field (so it has released whatever it held)."""
        with self._cond:
            target = self.searches + 1
            if not self._cond.wait_for(lambda: self.searches >= target, timeout):
                raise TimeoutError("reader did not search the empty field")

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._placed = None
            self._cond.notify_all()
        self._until_idle(lambda: not self._thread.is_alive(), 3.0)
        self._thread.join(3.0)
        assert not self._thread.is_alive(), "emulator thread did not stop"
        self._clf.close()

    def __enter__(self) -> Type3Emulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ thread
    def _count_polls(self, device: Any) -> None:
        # A polling response (code 01h) may come from nfcpy's listen loop, which
        # answers SENSF_REQ and repeated polls itself, or from the emulated tag
        # in a session; the driver's send is the one place that sees both.
        send = device._send_data

        def counting_send(brty: str, data: bytes, addr: Any) -> None:
            send(brty, data, addr)
            if len(data) > 1 and data[1] == 0x01:
                with self._cond:
                    self.polls += 1
                    self._cond.notify_all()

        device._send_data = counting_send

    def _still(self, tag: EmulatedTag) -> bool:
        return self._placed is tag and not self._closing

    def _run(self) -> None:
        empty: socket.socket | None = None
        try:
            while True:
                with self._cond:
                    if self._closing:
                        self._serving = None
                        self._cond.notify_all()
                        return
                    tag = self._placed
                    self._serving = tag
                    self._cond.notify_all()
                if tag is None:
                    if empty is None:
                        empty = self._bind_empty_field()
                    self._listen_empty(empty)
                    continue
                if empty is not None:
                    empty.close()  # nfcpy binds the port itself to listen
                    empty = None
                self._serve(tag)
        finally:
            if empty is not None:
                empty.close()

    def _bind_empty_field(self) -> socket.socket:
        self._clf.device.mute()  # nfcpy's listener socket still holds the port
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("0.0.0.0", self.port))  # where nfcpy's listener binds
        return sock

    def _listen_empty(self, sock: socket.socket) -> None:
        if not select.select([sock], [], [], 0.02)[0]:
            return
        frame, _ = sock.recvfrom(1024)
        parts = frame.split()
        if len(parts) == 2 and parts[0].endswith(b"F"):
            data = bytes.fromhex(parts[1].decode("ascii"))
            # SENSF_REQ as nfcpy's sense_ttf sends it: LEN 00 FFFF RC TSN
            if len(data) == 6 and data[:4] == b"\x06\x00\xff\xff":
                with self._cond:
                    self.searches += 1
                    self._cond.notify_all()

    def _serve(self, tag: EmulatedTag) -> None:
        import nfc.clf
        import nfc.tag

        local = nfc.clf.LocalTarget("212F")
        local.sensf_res = bytearray(b"\x01" + tag.idm + PMM + SYSTEM_CODE)
        # One long listen rather than many short ones: nfcpy 1.0.4's listen_ttf
        # answers a SENSF_REQ that arrives after its timeout (it waits at least
        # 0.5 s for a frame) and then returns None, so a reader would find a tag
        # that ignores its next command.  A listen is cut short by _poke().
        activated = self._clf.listen(local, LISTEN_S)
        if activated is None or not self._still(tag):
            return  # taken away while listening: stay silent
        card = nfc.tag.emulate(self._clf, activated)
        if card is None:
            return
        card.add_service(NDEF_WRITE, tag.read_block, tag.write_block)
        card.add_service(NDEF_READ, tag.read_block, None)
        with self._cond:
            self.sessions += 1
        response = self._process(card, card.cmd)
        while self._still(tag):
            try:
                command = card.send_response(response, 0.05)
            except nfc.clf.BrokenLinkError:
                return  # the reader switched its field off (RFOFF)
            except nfc.clf.CommunicationError:
                response = None
                continue
            response = self._process(card, command) if command else None

    def _process(self, card: Any, command: bytearray) -> bytearray | None:
        try:
            response = card.process_command(command)
        except Exception:  # a malformed frame gets no answer, like a real card
            return None
        return response  # type: ignore[no-any-return]
