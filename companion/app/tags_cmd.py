"""``companion tags`` — provisioning NFC tags (``hardware.provision``), with
the settings it needs loaded and checked here, where the config lives; and
what needs no reader: ``list`` (each game's box, named in both languages) and
``sheet`` (a printable PDF of labels, ``companion.app.tags_sheet``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from companion.app import catalogue, config
from companion.core.tags import LANGUAGES
from companion.games import boxes, table_cards, tag_sets
from hardware import provision

RECORD = "tags-written.yaml"  # in the state directory: what `write SET` has written
REHEARSAL = "tags-rehearsal"  # the rehearsal's own record and stickers, beside it


def configure_parser(parser: argparse.ArgumentParser) -> None:
    sub = provision.configure_parser(parser, tag_sets())
    for action in ("write", "read", "check"):
        sub.choices[action].add_argument(
            "--rehearse", action="store_true",
            help="no reader needed: nfcpy's reader path on the emulated reader, a hand laying "
                 "stickers (kept in <state>/tags-rehearsal/), its own record")
    sets = ", ".join(g for g in tag_sets() if g in boxes()) + ", all"
    ls = sub.add_parser("list", help="every tag of a game's box, named in both languages, with how many of each")
    ls.add_argument("set", nargs="?", default="all", metavar="BOX", help=f"one of {sets} (default: all)")
    sheet = sub.add_parser("sheet", help="a printable PDF of labels for 25-30 mm stickers, with a cut guide")
    sheet.add_argument("set", metavar="BOX", help=f"one of {sets}")
    sheet.add_argument("-o", "--output", type=Path, required=True, help="the PDF file to write")
    sheet.add_argument("--size", type=float, default=28.0, help="a label's side in mm (25 to 30; default %(default)s)")
    sheet.add_argument("--url", help="the pages' address for the QR card (default: from `web: listen:`)")
    sheet.add_argument("--font", type=Path, help="a font with Japanese glyphs (default: Noto Sans CJK, "
                                                 "Debian's fonts-noto-cjk, or what fontconfig finds)")


def load_tag_map(path: Path | str, extra_players: Iterable[str] = ()) -> dict[str, str]:
    """The tag map as the daemon reads it: a missing file is empty; a bad one
    raises ConfigError with its line, and is never overwritten."""
    return config.load_tag_map(path, extra_players)


def _config(args: argparse.Namespace) -> dict[str, Any]:
    return config.load(config.default_paths() + list(getattr(args, "config", None) or []))


def labeller(lang: str = "en") -> Callable[[str], str]:
    """An identity → its label in ``lang``, from the lines of the games' folders and the table's."""
    lines = catalogue.narrator().lines
    return lambda identity: catalogue.tag_label(lines, identity, lang)


def settings(args: argparse.Namespace, cfg: Mapping[str, Any] | None = None) -> provision.Settings:
    from companion.app.start import state_dir

    cfg = cfg or _config(args)
    extra = tuple(cfg["players"]["extra"])
    record = state_dir(dict(cfg)) / RECORD
    if getattr(args, "rehearse", False):
        record = state_dir(dict(cfg)) / REHEARSAL / "written.yaml"
    return provision.Settings(device=cfg["reader"]["device"], tag_map=Path(cfg["reader"]["tag_map"]),
                              extra_players=extra, load_tag_map=load_tag_map,
                              sets=tag_sets(extra_players=extra), record=record, label=labeller())


def run(args: argparse.Namespace, **kwargs: Any) -> int:
    if args.tags_command == "list":
        return list_tags(args.set, _config(args)["players"]["extra"])
    if args.tags_command == "sheet":
        from companion.app.tags_sheet import run_sheet

        cfg = _config(args)
        try:
            parts = sections(args.set, cfg["players"]["extra"])
        except KeyError:
            print(f"companion tags sheet: unknown box {args.set!r}: one of {', '.join([*boxes(), 'all'])}",
                  file=sys.stderr)
            return 2
        return run_sheet(args, cfg, parts, section_title)
    cfg = _config(args)
    if getattr(args, "rehearse", False) and "reader_factory" not in kwargs:
        from companion.app.start import state_dir
        from hardware.rehearsal import RehearsalStation

        stickers = state_dir(cfg) / REHEARSAL / "stickers.yaml"
        kwargs["reader_factory"] = lambda device: RehearsalStation(stickers, lay_blanks=args.tags_command == "write")
        print(f"rehearsal: the emulated reader, stickers in {stickers}", file=kwargs.get("out", sys.stdout))
    return provision.run(args, settings(args, cfg), **kwargs)


# ---------------------------------------------------------------- list
def kind(identity: str) -> str:
    """What a tag is one of: ``onw/villager/3`` → ``onw/villager``; a card
    with no number is its own kind (``skb/witch``); the table's by their kind
    (``player``, ``lang``, ``game``, ``rules``)."""
    parts = identity.split("/")
    if parts[0] in ("player", "lang", "game", "rules"):
        return parts[0]
    return "/".join(parts[:2])


KIND_TITLES = {"game": "game card", "rules": "rule cards", "player": "player cards", "lang": "language cards"}


def groups(identities: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The identities by kind, in their order: (kind, its identities)."""
    out: dict[str, list[str]] = {}
    for identity in identities:
        out.setdefault(kind(identity), []).append(identity)
    return list(out.items())


def sections(name: str, extra_players: Iterable[str] = ()) -> list[tuple[str, list[str]]]:
    """What ``list``/``sheet`` show for ``name`` (a box, or ``all``): (the
    section's box or ``table``, its identities).  A box alone is all of it,
    its game card and the table's cards too; ``all`` is each box's own cards
    (a card two boxes share, in the first), then the table's once.  KeyError
    for an unknown name."""
    extra = tuple(extra_players)
    own = boxes(extra_players=extra)
    table = table_cards(extra)
    if name == "all":
        seen = set(table)
        parts = []
        for box, ids in own.items():
            parts.append((box, [i for i in ids if i not in seen]))
            seen |= set(ids)
        return [*parts, ("table", list(table))]
    return [(name, list(own[name]))]


def section_title(lines: catalogue.Lines, section: str) -> str:
    """A section's heading in both languages: the table's cards, a box's name."""
    named = catalogue.tag_label if section == "table" else catalogue.box_name
    return " · ".join(named(lines, section, lang) for lang in LANGUAGES)


def list_tags(name: str, extra_players: Iterable[str] = (), out: Any = None) -> int:
    out = out or sys.stdout
    try:
        parts = sections(name, extra_players)
    except KeyError:
        print(f"unknown box {name!r}: one of {', '.join([*boxes(), 'all'])}", file=out)
        return 2
    lines = catalogue.narrator().lines
    total = 0
    for section, identities in parts:
        print(f"{section_title(lines, section)} — {len(identities)} tags", file=out)
        for k, ids in groups(identities):
            print(f"  {KIND_TITLES.get(k, k)} ×{len(ids)}", file=out)
            for identity in ids:
                en, ja = (catalogue.tag_label(lines, identity, lang) for lang in LANGUAGES)
                print(f"    {identity:<22} {en:<30} {ja}", file=out)
        total += len(identities)
    if len(parts) > 1:
        print(f"{total} tags in all", file=out)
    return 0
