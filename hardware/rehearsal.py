"""Rehearsing ``companion tags`` with no reader: nfcpy's real reader path
(``provision.NfcStation``) on the package's emulated reader
(``nfc_emulation.Type3Emulator``), with a hand that lays stickers on it.

* ``write``: each time the walk asks for a tag, the hand lays a new blank sticker.
* ``check`` and ``read``: the hand lays the stickers made so far, one after
  another, then says "next" (the walk ends).

The stickers are kept in a file (``UID: text``, replaced atomically after
every tap), so an interrupted rehearsal goes on as the real walk does and a
later ``check`` finds what ``write`` made.
"""

from __future__ import annotations

import threading
from pathlib import Path

import yaml

from hardware.nfc_emulation import EmulatedTag, Type3Emulator, blank_tag, text_tag
from hardware.provision import FieldTag, NfcStation, replace_atomically

HEADER = "# The emulated stickers of `companion tags … --rehearse` (UID: text); delete the file to start afresh.\n"
IDM_PREFIX = bytes.fromhex("03FE0000")  # manufacturer 03FE: a tag to nfcpy, not a P2P peer


class RehearsalStation:
    def __init__(self, path: Path, *, lay_blanks: bool) -> None:
        self.path = path
        self._lay_blanks = lay_blanks
        self.stickers: dict[str, EmulatedTag] = {}
        for uid, text in self._load().items():
            tag = text_tag(text) if text else blank_tag()
            tag.idm = bytes.fromhex(uid)
            self.stickers[uid] = tag
        self._to_lay = list(self.stickers)
        self.emulator = Type3Emulator()
        try:
            self._station = NfcStation(self.emulator.path, targets=["212F"])
        except BaseException:
            self.emulator.close()
            raise

    def _load(self) -> dict[str, str | None]:
        try:
            data = yaml.safe_load(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k).upper(): (str(v) if v else None) for k, v in data.items()
                if len(str(k)) == 16 and all(c in "0123456789ABCDEFabcdef" for c in str(k))}

    def save(self) -> None:
        # a blank laid but never written is no sticker made: it goes back in the roll
        texts = {uid: texts[0] for uid, tag in self.stickers.items() if (texts := tag.texts())}
        replace_atomically(self.path, HEADER + (yaml.safe_dump(texts, allow_unicode=True) if texts else ""))

    def _new_blank(self) -> EmulatedTag:
        last = max((int(uid[8:], 16) for uid in self.stickers), default=0)
        tag = blank_tag()
        tag.idm = IDM_PREFIX + (last + 1).to_bytes(4, "big")
        self.stickers[tag.uid] = tag
        return tag

    def next_tag(self, timeout: float, cancel: threading.Event | None = None) -> FieldTag | None:
        self.save()
        if self._lay_blanks:
            tag = self._new_blank()
        elif self._to_lay:
            tag = self.stickers[self._to_lay.pop(0)]
        else:  # every sticker has been laid: the hand says "next"
            if cancel is not None:
                cancel.set()
            return None
        self.emulator.remove()
        self.emulator.place(tag)
        return self._station.next_tag(timeout, cancel)

    def close(self) -> None:
        try:
            self.save()
        finally:
            self._station.close()
            self.emulator.close()
