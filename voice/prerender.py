"""``companion voice prerender`` — fill the WAV cache before the table needs it.

Renders every fixed line of each language's narration file, then the
fragments dynamic lines are assembled from (numbers 0–99, ``name.*``
readings, template parts, list words) and the night's masking loop, and
prints how many files, how many bytes, how many seconds of audio and how long
it took.  Lines already cached cost nothing, so running it after every
install or settings change is cheap.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from voice.base import Line
from voice.cache import Stats, WavCache, counted_fragments, fragments_of, split_template
from voice.masking import masking_path
from voice.render import RenderError, RenderSettings, SubprocessRenderer, espeak_available
from voice.tts_voice import line_entries


def fixed_lines(lang: str, entries: Mapping[str, tuple[str, str]]) -> list[Line]:
    """The lines that are the same every time: no ``{field}``, and not a
    ``name.*``/``fmt.*`` piece (those are fragments of other lines)."""
    out = []
    for key, (text, reading) in entries.items():
        if key.startswith(("name.", "fmt.")):
            continue
        if any(field is not None for _, field in split_template(reading)):
            continue
        out.append(Line(key=key, text=text, lang=lang, reading=reading))
    return out


def warm(cache: WavCache, table: Mapping[str, tuple[str, str]], lang: str,
         fragments: bool = True) -> tuple[Stats, Stats]:
    """Render one language's fixed lines and (optionally) its fragments into
    the cache: (lines, fragments).  What is cached already costs nothing;
    a damaged file is rendered again (``Stats.evicted``)."""
    lines = cache.prerender(fixed_lines(lang, table))
    frags = Stats()
    if fragments:
        written = cache.reads_written(lang)
        frags = cache.prerender_fragments(
            lang, [*fragments_of(table, written, lang), *counted_fragments(table, lang, written)])
    return lines, frags


def configure_parser(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="voice_command", metavar="ACTION", required=True)
    p = sub.add_parser("prerender", help="render every fixed line and common fragment into the WAV cache")
    p.add_argument(
        "--lang", action="append", help="a language to render (repeatable; default: every line file)"
    )
    p.add_argument("--lines-dir", type=Path, help="folder of <lang>.yaml line files (default: voice/lines)")
    p.add_argument("--cache-dir", type=Path, help="default: voice.cache_dir, else <state_dir>/voice-cache")
    p.add_argument(
        "--state", type=Path, help="state directory (default: state_dir from the config, else ./state)"
    )
    p.add_argument("--rate", type=int, help="words per minute (default: voice.rate)")
    p.add_argument("--volume", type=float, help="0–1 (default: voice.volume)")
    p.add_argument("--no-fragments", action="store_true", help="fixed lines only")


def _config(args: argparse.Namespace) -> dict[str, Any]:
    """The daemon's settings, so the cache keys match what it will look up.
    ``args.voice_config`` (a dict) wins; else the companion's config loader."""
    given = getattr(args, "voice_config", None)
    if given is not None:
        return {"voice": dict(given)}
    try:
        from companion import config as configmod
    except ImportError:
        return {}
    return configmod.load(configmod.default_paths() + list(getattr(args, "config", None) or []))


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def run(args: argparse.Namespace) -> int:
    cfg = _config(args)
    voice_cfg = dict(cfg.get("voice") or {})
    if getattr(args, "rate", None):
        voice_cfg["rate"] = args.rate
    if getattr(args, "volume", None) is not None:
        voice_cfg["volume"] = args.volume
    state = getattr(args, "state", None) or cfg.get("state_dir") or "state"
    cache_dir = Path(
        getattr(args, "cache_dir", None) or voice_cfg.get("cache_dir") or Path(state) / "voice-cache"
    )
    lines_dir: Path | None = getattr(args, "lines_dir", None)
    if not espeak_available():
        print(
            "companion voice prerender: espeak-ng is not installed (apt install espeak-ng)", file=sys.stderr
        )
        return 2
    from voice.lines import LINES_DIR

    langs = getattr(args, "lang", None) or sorted(p.stem for p in (lines_dir or LINES_DIR).glob("*.yaml"))
    entries = line_entries(lines_dir)
    renderer = SubprocessRenderer(RenderSettings.from_config(voice_cfg))
    cache = WavCache(cache_dir, renderer)
    started = time.perf_counter()
    total = Stats()
    try:
        for lang in langs:
            table = entries(lang)
            if not table:
                print(f"{lang}: no line file in {lines_dir or LINES_DIR}", file=sys.stderr)
                return 1
            lines, frags = warm(cache, table, lang, fragments=not args.no_fragments)
            print(
                f"{lang}: {lines.count} lines + {frags.count} fragments "
                f"({lines.rendered + frags.rendered} rendered now), "
                f"{_mb(lines.bytes + frags.bytes)}, {lines.audio_seconds + frags.audio_seconds:.1f} s of audio"
            )
            total.add(lines)
            total.add(frags)
        masking_path(cache_dir)
    except RenderError as exc:
        print(f"companion voice prerender: {exc}", file=sys.stderr)
        return 1
    finally:
        renderer.close()
    took = time.perf_counter() - started
    per = f", {total.render_seconds / total.rendered * 1000:.0f} ms per file" if total.rendered else ""
    print(
        f"total: {total.count} files in {cache_dir}, {total.rendered} rendered, {_mb(total.bytes)}, "
        f"{total.audio_seconds:.1f} s of audio; took {took:.1f} s{per}"
    )
    return 0
