"""``companion tags …``: write, learn, read and check the NFC tags of the games.

* ``write IDENTITY…`` puts an NDEF text record (lang "en", text = identity) on
  blank tags, one after another, and verifies each by reading it back.
* ``learn IDENTITY…`` records the UIDs of read-only tags in the tag map (a YAML
  mapping ``UID: identity``), rewriting the file atomically after each tag.
* ``read`` shows what a tag holds and which identity the table would see.
* ``check SET`` walks a component set and reports what is missing, doubled or
  unknown.

Everything talks to a ``Station`` (a reader the operator taps tags on): the
nfcpy reader (``NfcStation``) or software tags (``SimulatedTagStore``), so the
same flows run at the table, in tests and without hardware.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from companion.core import tags
from companion.core.tags import printable
from hardware.nfc_reader import inspect_tag, open_frontend, tag_uid, wait_until_gone
from hardware.supervisor import ReaderUnavailable

DEFAULT_TIMEOUT_S = 60.0
TAG_MAP_HEADER = (
    "# UID → identity, for tags that carry no NDEF text record (read-only tags).\n"
    "# `companion tags learn IDENTITY…` fills this in; tags written with\n"
    "# `companion tags write` name themselves and need no entry.\n"
)


class ProvisionError(Exception):
    """A tag could not be written; the message says why, for the operator."""


@dataclass(frozen=True)
class TagReading:
    """What one tag on the station holds."""

    uid: str
    kind: str
    text: str | None = None
    error: str | None = None
    writable: bool = False


class FieldTag(Protocol):
    """The tag lying on the station now."""

    uid: str

    def read(self) -> TagReading:
        """Read it (again: a second read goes to the tag, not to a cache)."""

    def write_text(self, text: str) -> None:
        """Make its NDEF message one text record; ProvisionError if it cannot."""


class Station(Protocol):
    def next_tag(self, timeout: float, cancel: threading.Event | None = None) -> FieldTag | None:
        """The next tag laid on the station: a new presence, never the tag handed
        out last while it still lies there.  None after ``timeout`` seconds or
        once ``cancel`` is set.  ReaderUnavailable if the reader goes away."""

    def close(self) -> None: ...


# ---------------------------------------------------------------- nfcpy
class NfcFieldTag:
    def __init__(self, tag: Any) -> None:
        self._tag = tag
        self.uid = tag_uid(tag)
        self.kind = str(getattr(tag, "product", None) or getattr(tag, "type", "tag"))
        self._reads = 0

    def read(self) -> TagReading:
        seen, area = inspect_tag(self._tag, fresh=self._reads > 0)
        self._reads += 1
        writable = bool(area is not None and area.is_writeable)
        return TagReading(self.uid, self.kind, seen.text, seen.error, writable)

    def write_text(self, text: str) -> None:
        import ndef
        import nfc.clf
        import nfc.tag

        octets = b"".join(ndef.message_encoder([ndef.TextRecord(text, "en")]))
        try:
            area = self._tag.ndef
            if area is None:
                area = self._format()
            if area is None:
                raise ProvisionError("this tag has no NDEF area and cannot be formatted for one")
            if not area.is_writeable:
                raise ProvisionError("this tag is read-only: use `companion tags learn` for it")
            if len(octets) > area.capacity:
                raise ProvisionError(f"{len(octets)} bytes do not fit in its {area.capacity}")
            area.octets = octets
        except (nfc.tag.TagCommandError, nfc.clf.CommunicationError) as exc:
            raise ProvisionError(f"write failed ({exc}): was the tag moved?") from exc

    def _format(self) -> Any:
        # nfcpy's Type 3 format prints its memory probe; keep the terminal clean.
        with contextlib.redirect_stdout(io.StringIO()):
            formatted = self._tag.format()
        return self._tag.ndef if formatted else None


class NfcStation:
    """Provisioning on the real reader.  Opening fails with ReaderUnavailable."""

    def __init__(self, device: str, *, poll_s: float = 0.05, release_misses: int = 3,
                 targets: Sequence[str] = ("106A", "106B", "212F"),
                 frontend_factory: Callable[[], Any] | None = None) -> None:
        self.device = device
        self._poll = poll_s
        self._misses = release_misses
        self._targets = list(targets)
        self._clf = open_frontend(device, frontend_factory)
        self._current: Any = None

    def next_tag(self, timeout: float, cancel: threading.Event | None = None) -> FieldTag | None:
        cancel = cancel or threading.Event()
        deadline = time.monotonic() + timeout

        def give_up(seconds: float) -> bool:
            left = deadline - time.monotonic()
            return cancel.wait(max(0.0, min(seconds, left))) or left <= 0

        if self._current is not None:  # the last tag must leave before the next counts
            if not wait_until_gone(self._current, give_up, self._misses, self._poll):
                return None
            self._current = None
        options = {"targets": self._targets, "on-connect": lambda tag: False,
                   "iterations": 1, "beep-on-connect": False}
        tag = self._clf.connect(rdwr=options, terminate=lambda: give_up(self._poll))
        if tag is False:
            raise ReaderUnavailable(f"reader on {self.device} stopped answering")
        if tag is None or tag is True:
            return None
        self._current = tag
        return NfcFieldTag(tag)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._clf.close()


# ---------------------------------------------------------------- simulated
@dataclass
class SimTag:
    """A tag that exists only in software.  ``fail_writes``: writes that fail
    (the tag slid away) before one works; ``lying_writes``: writes that report
    success but store something else (caught by the read-back)."""

    uid: str
    text: str | None = None
    writable: bool = True
    garbled: bool = False
    fail_writes: int = 0
    lying_writes: int = 0
    kind: str = "simulated NTAG215"


class SimFieldTag:
    def __init__(self, tag: SimTag) -> None:
        self.tag = tag
        self.uid = tag.uid

    def read(self) -> TagReading:
        t = self.tag
        if t.garbled:
            return TagReading(t.uid, t.kind, error="garbled NDEF data", writable=t.writable)
        return TagReading(t.uid, t.kind, t.text, writable=t.writable)

    def write_text(self, text: str) -> None:
        t = self.tag
        if not t.writable:
            raise ProvisionError("this tag is read-only: use `companion tags learn` for it")
        if t.fail_writes > 0:
            t.fail_writes -= 1
            raise ProvisionError("write failed (timeout): was the tag moved?")
        t.garbled = False
        if t.lying_writes > 0:
            t.lying_writes -= 1
            t.text = text[::-1]
            return
        t.text = text


class SimulatedTagStore:
    """A station of software tags: blank writable stickers, read-only cards,
    broken tags.  ``tap(uid…)`` lays tags on it one after another; each tap is
    a new presence.  With a ``SimulatedReader`` attached, every tap also reaches
    the table as the reader would report it, so a store written here drives a
    simulated game."""

    def __init__(self, tags: Iterable[SimTag] = (), reader: Any = None) -> None:
        self.tags: dict[str, SimTag] = {}
        self.reader = reader
        self._taps: list[str] = []
        self._cond = threading.Condition()
        for tag in tags:
            self.add(tag)

    def add(self, tag: SimTag) -> SimTag:
        uid = tags.normalise_uid(tag.uid)
        if not tags.valid_uid(uid):
            raise ValueError(f"{tag.uid!r} is not a tag UID")
        tag.uid = uid
        self.tags[uid] = tag
        return tag

    def blank(self, count: int = 1, *, writable: bool = True, first: int = 1) -> list[SimTag]:
        """``count`` new tags with UIDs 04 00 00 00 00 00 01, … 02, …"""
        return [self.add(SimTag(f"04{n:012X}", writable=writable)) for n in range(first, first + count)]

    def tap(self, *uids: str) -> None:
        with self._cond:
            for uid in uids:
                uid = tags.normalise_uid(uid)
                if uid not in self.tags:
                    raise KeyError(f"no simulated tag {uid}")
                self._taps.append(uid)
                if self.reader is not None:
                    tag = self.tags[uid]
                    self.reader.present(uid=uid, text=None if tag.garbled else tag.text)
            self._cond.notify_all()

    def wait_drained(self, timeout: float = 3.0) -> bool:
        """True once every tap has been taken by ``next_tag``."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._taps, timeout)

    def next_tag(self, timeout: float, cancel: threading.Event | None = None) -> FieldTag | None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._taps:
                left = deadline - time.monotonic()
                if left <= 0 or (cancel is not None and cancel.is_set()):
                    return None
                self._cond.wait(min(left, 0.02))
            uid = self._taps.pop(0)
            self._cond.notify_all()
        return SimFieldTag(self.tags[uid])

    def close(self) -> None:
        pass


# ---------------------------------------------------------------- tag map file
def _leading_comments(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError):
        return ""
    head = []
    for line in lines:
        if not line.startswith("#"):
            break
        head.append(line if line.endswith("\n") else line + "\n")
    return "".join(head)


def tag_map_text(mapping: Mapping[str, str], header: str = TAG_MAP_HEADER) -> str:
    import yaml

    body = yaml.safe_dump({uid: mapping[uid] for uid in sorted(mapping)}, default_flow_style=False,
                          allow_unicode=True, sort_keys=False) if mapping else ""
    return header + body


def save_tag_map(path: Path | str, mapping: Mapping[str, str]) -> None:
    """Replace the tag map file atomically (``replace_atomically``).  UIDs are
    written upper-case; the file's leading comment block is kept."""
    target = Path(os.path.realpath(path))  # through a symlink to the real file
    header = _leading_comments(target) or TAG_MAP_HEADER
    replace_atomically(target, tag_map_text({tags.normalise_uid(u): i for u, i in mapping.items()}, header))


def replace_atomically(target: Path, text: str) -> None:
    """A temporary file in the same directory, fsynced, renamed over the old
    one, and the directory fsynced, so a power cut leaves the old file or
    the new one, never half of either."""
    directory = target.parent
    directory.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


# ---------------------------------------------------------------- the write record
RECORD_HEADER = (
    "# The tags `companion tags write SET` wrote and verified (identity: UID), so an\n"
    "# interrupted walk goes on where it stopped.  Delete a line to have that tag asked for again.\n"
)


def load_record(path: Path | None) -> dict[str, str]:
    """identity → UID of the tags written so far; a missing or unreadable
    record is empty (it only saves taps: the tags themselves are the truth)."""
    import yaml

    if path is None:
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def save_record(path: Path, record: Mapping[str, str]) -> None:
    import yaml

    body = yaml.safe_dump(dict(record), default_flow_style=False, allow_unicode=True, sort_keys=False)
    replace_atomically(Path(os.path.realpath(path)), RECORD_HEADER + (body if record else ""))


TagMapLoader = Callable[[Path, Iterable[str]], dict[str, str]]


@dataclass(frozen=True)
class Settings:
    """What ``companion tags`` takes from the config, loaded and checked by the
    app (``companion.app.tags_cmd``): the reader, the tag map and its reader
    (bad entries refused with their line), the config's extra players, and
    the component sets by name (the games' and the table's: the app knows
    the games, this module does not), the write record and the labels."""

    device: str
    tag_map: Path
    extra_players: tuple[str, ...]
    load_tag_map: TagMapLoader
    sets: Mapping[str, tuple[str, ...]]
    record: Path | None = None  # where `write SET` keeps what it wrote (None: nowhere)
    label: Callable[[str], str] = str  # an identity as the operator knows it ("Knight 1")

    @property
    def components(self) -> frozenset[str]:
        """Every identity of every set."""
        return frozenset(i for ids in self.sets.values() for i in ids)


# ---------------------------------------------------------------- command line
def configure_parser(parser: argparse.ArgumentParser, sets: Iterable[str]) -> Any:
    """The subcommands; ``sets``: the component sets' names, for the help.
    Returns the subparsers, for the app's own actions."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--device", help="nfcpy device path, e.g. usb, tty:AMA0:pn532 "
                                         "(default: reader.device from the config)")
    common.add_argument("--tag-map", type=Path,
                        help="the UID → identity YAML file (default: reader.tag_map from the config)")
    common.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help="seconds to wait for a tap (check: for the whole walk; default %(default)s)")
    sub = parser.add_subparsers(dest="tags_command", metavar="ACTION", required=True)
    w = sub.add_parser("write", parents=[common], help="write identities (or a whole set) to blank tags, one after another",
                       description="Tap blank stickers when asked; each is written and read back.  A set "
                                   "(a game's name: its whole box) goes on where the last walk stopped.")
    w.add_argument("identities", nargs="+", metavar="IDENTITY|SET",
                   help=f"e.g. {' '.join(examples(sets))}, or a set: {', '.join(set_names(sets))}")
    w.add_argument("--force", action="store_true", help="overwrite a tag that already names another identity")
    w.add_argument("--again", action="store_true",
                   help="ask for every tag of a set, even those the last walks wrote")
    learn = sub.add_parser("learn", parents=[common],
                           help="map the UIDs of read-only tags to identities in the tag map",
                           description="For tags that cannot be written (FeliCa cards, locked stickers): "
                                       "tap each tag in turn when asked; its UID is saved in the tag map "
                                       "(--tag-map, default reader.tag_map) as that identity.")
    learn.add_argument("identities", nargs="+", metavar="IDENTITY|SET",
                       help=f"one identity per tag (or a set), in the order you will tap them, "
                            f"e.g. {' '.join(examples(sets))}")
    learn.add_argument("--force", action="store_true", help="remap a UID already mapped to another identity")
    sub.add_parser("read", parents=[common], help="show what a tag holds and who the table takes it for")
    check = sub.add_parser("check", parents=[common],
                           help="tap a whole component set; report missing, duplicate and unknown tags")
    check.add_argument("set", metavar="SET", help=f"one of {', '.join(set_names(sets))}")
    check.add_argument("--in-order", action="store_true", help="ask for each piece in turn")
    return sub


def examples(sets: Iterable[str]) -> list[str]:
    """Identities to show as examples: the first piece of the first set, a
    player's card and the first game's card (this module names no game: the
    sets are the app's)."""
    found = [next((ids[0] for ids in sets.values() if ids), None)] if isinstance(sets, Mapping) else []
    found += ["player/red", *(sets.get("games", ())[:1] if isinstance(sets, Mapping) else ())]
    return [i for i in dict.fromkeys(found) if i]


def set_names(sets: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*sets, "all"]))


def component_set(name: str, sets: Mapping[str, tuple[str, ...]], extra_players: Iterable[str] = ()) -> list[str]:
    """The identities of a set of ``sets`` (``all``: every set); KeyError for an unknown name."""
    extra = [f"player/{p}" for p in extra_players]
    if name == "all" and "all" not in sets:
        pieces = [i for ids in sets.values() for i in ids] + extra
    else:
        pieces = list(sets[name]) + (extra if name in ("players", "all") else [])
    return list(dict.fromkeys(pieces))


@dataclass
class _Context:
    station: Station
    out: TextIO
    timeout: float
    tag_map_path: Path
    extra_players: list[str]
    done: threading.Event
    load_tag_map: TagMapLoader
    sets: Mapping[str, tuple[str, ...]]
    components: frozenset[str]  # every identity of every set
    record: Path | None = None
    label: Callable[[str], str] = str

    def named(self, identity: str) -> str:
        """"Knight 1 (skb/knight/1)": how the operator is asked for a tag."""
        label = self.label(identity)
        return f"{label} ({identity})" if label != identity else identity

    def known(self, identity: str) -> bool:
        return tags.is_known(identity, self.extra_players, self.components)

    def say(self, line: str) -> None:
        # A tag's text and UID are written by whoever had the tag: never raw to the terminal.
        print(printable(line), file=self.out, flush=True)


def _stdin_next(done: threading.Event, stream: TextIO) -> None:
    """Enter on the terminal is the operator's `next`."""
    if not stream.isatty():
        return

    def wait_for_enter() -> None:
        with contextlib.suppress(Exception):
            stream.readline()
        done.set()

    threading.Thread(target=wait_for_enter, name="tags-next", daemon=True).start()


def run(args: argparse.Namespace, settings: Settings, *, reader_factory: Callable[[str], Station] | None = None,
        out: TextIO = sys.stdout, done: threading.Event | None = None) -> int:
    """Run one ``companion tags`` action.  0: all done; 1: not everything
    worked (timeout, missing or doubled tags, no reader); 2: refused before
    any tap (unknown identity or set)."""
    device = args.device or settings.device
    tag_map_path = Path(args.tag_map or settings.tag_map)
    extra = list(settings.extra_players)
    action = args.tags_command
    names = set_names(settings.sets)
    walk: list[str] = []
    if action in ("write", "learn"):
        unknown = [i for i in args.identities if i not in names and not tags.is_known(i, extra, settings.components)]
        if unknown:
            print(f"unknown identit{'y' if len(unknown) == 1 else 'ies'}: {', '.join(unknown)} "
                  f"(e.g. {', '.join(examples(settings.sets))}; or a set: {', '.join(names)})", file=out)
            return 2
        # A set's name stands for its identities, in its order (a game's: its whole box).
        walk = list(dict.fromkeys(i for a in args.identities
                                  for i in (component_set(a, settings.sets, extra) if a in names else [a])))
    if action == "check" and args.set not in names:
        print(f"unknown set {args.set!r}: one of {', '.join(names)}", file=out)
        return 2
    mapping = settings.load_tag_map(tag_map_path, extra) if action != "write" else {}
    if done is None:
        done = threading.Event()
        if action == "check":
            _stdin_next(done, sys.stdin)
    try:
        station = (reader_factory or _nfc_station)(device)
    except ReaderUnavailable as exc:
        print(f"no reader: {exc}\n  `companion doctor` checks the reader, its USB permissions and the config",
              file=out)
        return 1
    ctx = _Context(station, out, args.timeout, tag_map_path, extra, done, settings.load_tag_map,
                   settings.sets, settings.components, settings.record, settings.label)
    try:
        if action == "write":
            a_set = any(a in names for a in args.identities)
            return _write(ctx, walk, args.force, recorded=a_set, resume=a_set and not args.again)
        if action == "learn":
            return _learn(ctx, walk, args.force, mapping)
        if action == "read":
            return _read(ctx, mapping)
        return _check(ctx, args.set, args.in_order, mapping)
    except ReaderUnavailable as exc:
        ctx.say(f"reader lost: {exc}")
        return 1
    except KeyboardInterrupt:  # Ctrl-C: every tag verified so far is in the record
        ctx.say("interrupted" + (f": what was written is kept in {ctx.record}; the same command goes on "
                                 "from there" if action == "write" and ctx.record else ""))
        return 130
    finally:
        station.close()


def _nfc_station(device: str) -> Station:
    return NfcStation(device)


def _next(ctx: _Context, prompt: str) -> FieldTag | None:
    ctx.say(prompt)
    tag = ctx.station.next_tag(ctx.timeout, ctx.done)
    if tag is None:
        ctx.say("no tag tapped in time" if not ctx.done.is_set() else "stopped")
    return tag


def _write(ctx: _Context, identities: list[str], force: bool, *, recorded: bool = False,
           resume: bool = False) -> int:
    """Write ``identities`` one after another.  A walk over a set
    (``recorded``) notes every tag verified in the record (identity → UID,
    replaced atomically), so a walk that goes on (``resume``) asks only for
    what no walk has written yet; a tag tapped that already carries one of
    the walk's identities is noted, not refused."""
    try:
        mapping = ctx.load_tag_map(ctx.tag_map_path, ctx.extra_players)
    except Exception:  # the map only adds a warning here; a bad one is `learn`'s business
        mapping = {}
    record = load_record(ctx.record) if recorded else {}
    total = len(identities)
    pending = [i for i in identities if not (resume and i in record)]
    if resume and len(pending) < total:
        ctx.say(f"{total - len(pending)} of {total} written already (noted in {ctx.record}); {len(pending)} to go")

    def note(identity: str, uid: str) -> None:
        pending.remove(identity)
        record[identity] = uid
        if recorded and ctx.record is not None:
            save_record(ctx.record, record)

    written = 0
    while pending:
        identity = pending[0]
        place = f"[{identities.index(identity) + 1}/{total}] " if total > 1 else ""
        tag = _next(ctx, f"{place}tap the sticker for {ctx.named(identity)}")
        if tag is None:
            ctx.say(f"not written: {', '.join(pending)}")
            if resume:
                ctx.say("the same command goes on from there")
            return 1
        before = tag.read()
        if before.text == identity:
            note(identity, tag.uid)
            ctx.say(f"{tag.uid}: already {identity}")
            continue
        if before.text and ctx.known(before.text) and not force:
            if before.text in pending:  # a tag of this walk made before: noted, not asked for again
                note(before.text, tag.uid)
                ctx.say(f"{tag.uid}: already {before.text}, noted; now {identity}")
                continue
            ctx.say(f"{tag.uid} already names itself {before.text}; tap a blank tag "
                    f"(or use --force to overwrite)")
            continue
        try:
            tag.write_text(identity)
        except ProvisionError as exc:
            ctx.say(f"{tag.uid}: {exc}; tap a tag again")
            continue
        after = tag.read()
        if after.text != identity:
            got = after.text or after.error or "nothing"
            ctx.say(f"{tag.uid}: read back {got!r} instead of {identity}; tap it again")
            continue
        note(identity, tag.uid)  # on disk before it is said, so a Ctrl-C after the word never loses it
        written += 1
        ctx.say(f"{tag.uid}: written and verified: {identity}")
        mapped = mapping.get(tag.uid)
        if mapped and mapped != identity:
            ctx.say(f"  note: the tag map says {mapped} for this UID; its text wins now")
    ctx.say(f"done: {total} tag{'s' if total != 1 else ''} "
            f"({written} written, {total - written} already right)")
    return 0


def _learn(ctx: _Context, identities: list[str], force: bool, mapping: dict[str, str]) -> int:
    for n, identity in enumerate(identities):
        while True:
            tag = _next(ctx, f"tap the tag for {ctx.named(identity)}")
            if tag is None:
                ctx.say(f"not learned: {', '.join(identities[n:])}")
                return 1
            reading = tag.read()
            uid = reading.uid
            if reading.text == identity:
                ctx.say(f"{uid} names itself {identity}: no map entry needed")
                break
            if reading.text:
                ctx.say(f"{uid} names itself {reading.text}, and its text wins over the map; "
                        f"rewrite it with `companion tags write` or tap another tag")
                continue
            current = mapping.get(uid)
            if current == identity:
                ctx.say(f"{uid}: already {identity}")
                break
            if current and not force:
                ctx.say(f"{uid} is already mapped to {current}; tap another tag "
                        f"(or use --force to remap it)")
                continue
            mapping[uid] = identity
            save_tag_map(ctx.tag_map_path, mapping)
            ctx.say(f"{uid}: learned {identity}" + (f" (was {current})" if current else "")
                    + f" → {ctx.tag_map_path}")
            break
    return 0


def _read(ctx: _Context, mapping: Mapping[str, str]) -> int:
    tag = _next(ctx, "tap a tag")
    if tag is None:
        return 1
    r = tag.read()
    identity = None if r.error else tags.identify(r.text, r.uid, mapping)
    known = identity is not None and ctx.known(identity)
    ctx.say(f"UID:       {r.uid}")
    ctx.say(f"type:      {r.kind}{'' if r.writable else ' (read-only)'}")
    ctx.say(f"NDEF text: {r.error or r.text or '(none)'}")
    ctx.say(f"identity:  {identity or 'unknown'}{'' if known or identity is None else ' (not a known identity)'}"
            + (" (from the tag map)" if identity and not r.text else ""))
    mapped = mapping.get(r.uid)
    if mapped and r.text and mapped != r.text:
        ctx.say(f"note: the tag map says {mapped}, but the tag's text wins")
    return 0


def _check(ctx: _Context, set_name: str, in_order: bool, mapping: Mapping[str, str]) -> int:
    expected = component_set(set_name, ctx.sets, ctx.extra_players)
    wanted = set(expected)
    uids_of: dict[str, list[str]] = {}
    seen: set[str] = set()
    unknown: list[str] = []
    others: list[str] = []
    deadline = time.monotonic() + ctx.timeout
    if not in_order:
        ctx.say(f"check {set_name}: tap all {len(expected)} pieces, in any order; "
                f"Enter (next) when done")
    while not ctx.done.is_set() and not wanted <= set(uids_of):
        left = deadline - time.monotonic()
        if left <= 0:
            ctx.say("time is up")
            break
        if in_order:
            ctx.say(f"tap {next(i for i in expected if i not in uids_of)}")
        tag = ctx.station.next_tag(left, ctx.done)
        if tag is None:
            continue
        r = tag.read()
        if r.uid in seen:
            ctx.say(f"{r.uid}: seen already")
            continue
        seen.add(r.uid)
        identity = None if r.error else tags.identify(r.text, r.uid, mapping)
        if identity is None or not ctx.known(identity):
            why = r.error or (f"text {r.text!r}" if r.text else "no text, not in the tag map")
            unknown.append(f"{r.uid} ({why})")
            ctx.say(f"? unknown tag {r.uid}: {why}")
        elif identity not in wanted:
            others.append(f"{identity} ({r.uid})")
            ctx.say(f"- {identity}: not part of {set_name}")
        else:
            twice = identity in uids_of
            uids_of.setdefault(identity, []).append(r.uid)
            ctx.say(f"{'! duplicate' if twice else 'ok'} {identity}")
    missing = [i for i in expected if i not in uids_of]
    duplicates = {i: u for i, u in uids_of.items() if len(u) > 1}
    ctx.say(f"{set_name}: {len(expected) - len(missing)} of {len(expected)} pieces")
    if missing:
        ctx.say(f"missing ({len(missing)}): {', '.join(missing)}")
    for identity, uids in duplicates.items():
        ctx.say(f"duplicate: {identity} on {', '.join(uids)}")
    if unknown:
        ctx.say(f"unknown ({len(unknown)}): {', '.join(unknown)}")
    if others:
        ctx.say(f"from other sets: {', '.join(others)}")
    if not (missing or duplicates or unknown):
        ctx.say("all present")
        return 0
    return 1
