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
import threading
import time
import wave
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from companion.core.messages import TABLE, Command, Message, wants
from voice.base import Line
from voice.cache import Stats, WavCache, counted_fragments, fragments_of, split_template
from voice.engines import ENGINES
from voice.lines import LINES_DIR, Folders, line_keys
from voice.masking import masking_path
from voice.render import Renderer, RenderError, RenderSettings, SubprocessRenderer, espeak_available
from voice.tts_voice import TtsVoice, line_entries


def fixed_lines(lang: str, entries: Mapping[str, tuple[str, str]]) -> list[Line]:
    """The lines that are the same every time: no ``{field}``, and not a
    ``name.*``/``fmt.*`` piece (those are fragments of other lines) nor a
    ``step.*`` label (a game's step as the pages name it) nor a ``tag.*`` label (printed
    on a tag): those are never spoken."""
    out = []
    for key, (text, reading) in entries.items():
        if key.startswith(("name.", "fmt.", "step.", "tag.")):
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


FILL_NICE = 19  # the background fill's CPU priority: the lowest; the table loop comes first


class FillStopped(Exception):
    """The daemon is shutting down: the fill ends where it is."""


class FillGate:
    """What the background fill knows of the table: the loop's ``activity``
    command (``companion.runtime.loop``), received as a router sink.  While
    the table runs on the clock (``timed``: One Night's night, discussion and
    vote count) the fill holds off between two renders, so no cue wakes late
    behind its CPU or waits on the journal's fsync behind its file writes;
    ``game`` is the game being played, whose lines (its folder of them in
    ``game_lines``, by game: handed in by the app) the fill renders first."""

    wants = wants(TABLE, ("activity",))

    def __init__(self, game_lines: Mapping[str, Path] | None = None) -> None:
        self.game: str | None = None
        self.game_lines: Mapping[str, Path] = dict(game_lines or {})
        self.holds = 0  # how many times the fill waited for the table (tests, the bench)
        self._free = threading.Event()
        self._free.set()
        self._stopped = False

    def receive(self, message: Message) -> None:
        if isinstance(message, Command) and message.name == "activity":
            self.game = message.args.get("game")
            if message.args.get("timed"):
                self._free.clear()
            else:
                self._free.set()

    def wait(self) -> None:
        """Before each render: return once the table is off the clock."""
        if not self._free.is_set():
            self.holds += 1
            self._free.wait()
        if self._stopped:
            raise FillStopped

    def stop(self) -> None:
        self._stopped = True
        self._free.set()

    close = stop  # as a router device: the daemon closing ends the fill where it is


class _Held:
    """A renderer that asks the gate before every job."""

    def __init__(self, renderer: Renderer, gate: FillGate) -> None:
        self._renderer, self._gate = renderer, gate

    def render(self, text: str, lang: str, out: Path) -> None:
        self._gate.wait()
        self._renderer.render(text, lang, out)

    def __getattr__(self, name: str) -> Any:  # settings, voice_id, reads_written, engine_id …
        attr = getattr(self._renderer, name)
        if name != "render_fragment":
            return attr

        def held(text: str, lang: str, out: Path) -> None:
            self._gate.wait()
            attr(text, lang, out)
        return held


def game_first(table: Mapping[str, tuple[str, str]], folder: Path | None, lang: str
               ) -> Mapping[str, tuple[str, str]]:
    """The part of a language's lines that a game says (its ``folder`` of
    lines) and the names and formats they are assembled with; empty with no
    game, or a game without lines of its own."""
    keys = line_keys(folder, lang) if folder else frozenset()
    if not keys:
        return {}
    return {k: v for k, v in table.items() if k in keys or k.startswith(("name.", "fmt."))}


MakeCache = Callable[[Path, Any], WavCache]


def fill(voice: TtsVoice, langs: Iterable[str], make_cache: MakeCache = WavCache,
         gate: FillGate | None = None) -> Stats:
    """The daemon's background fill of the cache: language by language in
    the order given (the table's first), and in each the lines of the game
    being played (``gate.game``) before the rest.

    It never delays the table loop nor a live line: it runs on a render
    worker of its own (the live one keeps the cues to itself) at the lowest
    CPU priority and idle disk priority (``serve(nice=…)``), and holds off
    while the table runs on the clock (``FillGate``).  A language with
    another engine than the last gets a fresh worker, the last one closed, so
    the fill holds one engine at a time (Piper or Open JTalk, never both), and
    none once the cache is full."""
    total = Stats()
    gate = gate or FillGate()
    live = voice.cache.renderer
    renderer: Any = None
    engine = ""
    try:
        for lang in dict.fromkeys(langs):
            if not isinstance(live, SubprocessRenderer):
                renderer = live  # a stand-in engine (tests): no worker to own
            elif renderer is None or live.settings.engine_for(lang) != engine:
                if renderer is not None:
                    renderer.close()  # the last engine's memory goes with its worker
                engine = live.settings.engine_for(lang)
                renderer = SubprocessRenderer(live.settings, nice=FILL_NICE)
            cache = make_cache(voice.cache.root, _Held(renderer, gate))
            table = voice.entries(lang)
            folder = gate.game_lines.get(gate.game) if gate.game else None
            for part in (game_first(table, folder, lang), table):  # what is cached costs only a look
                if part:
                    for stats in warm(cache, part, lang):
                        total.add(stats)
    except FillStopped:
        pass
    finally:
        if renderer is not None and renderer is not live:
            renderer.close()
    return total


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
    r = sub.add_parser("render", help="render one line (a text, or a line key) to a WAV file")
    r.add_argument("text", metavar="TEXT_OR_KEY", help="what to say, or a key of the line file (undo.done)")
    r.add_argument("--lang", default="en", help="en or ja (default: en)")
    r.add_argument("--engine", choices=sorted(ENGINES), help="default: voice.engine.<lang> from the config")
    r.add_argument("-o", "--output", type=Path, required=True, help="the WAV file to write")
    r.add_argument("--rate", type=int, help="words per minute (default: voice.rate)")
    r.add_argument("--volume", type=float, help="0–1 (default: voice.volume)")
    r.add_argument("--lines-dir", type=Path, help="folder of <lang>.yaml line files (default: voice/lines)")
    sub.add_parser("engines", help="the speech engines: which are installed, which the config uses")


def _config(args: argparse.Namespace) -> dict[str, Any]:
    """The daemon's settings, so the cache keys match what it will look up:
    ``args.voice_config`` (a dict: the voice section) wins; else
    ``args.settings``, the whole config the app loaded (``companion voice``)."""
    given = getattr(args, "voice_config", None)
    if given is not None:
        return {"voice": dict(given)}
    return dict(getattr(args, "settings", None) or {})


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _voice_config(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the whole config, its voice section with --rate/--volume applied)."""
    cfg = _config(args)
    voice_cfg = dict(cfg.get("voice") or {})
    if getattr(args, "rate", None):
        voice_cfg["rate"] = args.rate
    if getattr(args, "volume", None) is not None:
        voice_cfg["volume"] = args.volume
    return cfg, voice_cfg


def engines_report(voice_cfg: Mapping[str, Any]) -> list[str]:
    """One line per engine (installed or why not, languages, in use for), then
    the fallbacks the config leads to: for ``voice engines`` and ``doctor``."""
    settings = RenderSettings.from_config(voice_cfg)
    wanted = dict(voice_cfg.get("engine") or {})
    out = []
    for name, eng in ENGINES.items():
        problem = eng.missing()
        used = [lang for lang in sorted({*wanted, "en", "ja"}) if settings.engine_for(lang) == name]
        state = "installed" if problem is None else f"not installed: {problem}"
        langs = ", ".join(eng.languages) or "any language"
        use = f"in use for {', '.join(used)}" if used else "not in use"
        out.append(f"{name:<10} {eng.label} ({langs}): {state}; {use}")
    out.extend(settings.fallbacks)
    return out


def run(args: argparse.Namespace) -> int:
    command = getattr(args, "voice_command", "prerender")
    if command == "engines":
        print("\n".join(engines_report(_voice_config(args)[1])))
        return 0
    if command == "render":
        return render_one(args)
    cfg, voice_cfg = _voice_config(args)
    for note in RenderSettings.from_config(voice_cfg).fallbacks:
        print(f"companion voice prerender: {note}", file=sys.stderr)
    state = getattr(args, "state", None) or cfg.get("state_dir") or "state"
    cache_dir = Path(
        getattr(args, "cache_dir", None) or voice_cfg.get("cache_dir") or Path(state) / "voice-cache"
    )
    lines_dir: Path | None = getattr(args, "lines_dir", None)
    # --lines-dir: that folder alone; else the folders the app hands in (the shared and every game's)
    folders: Folders = lines_dir or getattr(args, "line_folders", None) or LINES_DIR
    if not espeak_available():
        print(
            "companion voice prerender: espeak-ng is not installed (apt install espeak-ng)", file=sys.stderr
        )
        return 2
    first = folders if isinstance(folders, Path) else folders[0]
    langs = getattr(args, "lang", None) or sorted(p.stem for p in first.glob("*.yaml"))
    entries = line_entries(folders)
    renderer = SubprocessRenderer(RenderSettings.from_config(voice_cfg))
    cache = WavCache(cache_dir, renderer)
    cleaned = cache.clean()
    if cleaned:
        print(f"removed {cleaned} temporary files of renders that never finished")
    started = time.perf_counter()
    total = Stats()
    try:
        for lang in langs:
            table = entries(lang)
            if not table:
                print(f"{lang}: no line file in {first}", file=sys.stderr)
                return 1
            lines, frags = warm(cache, table, lang, fragments=not args.no_fragments)
            evicted = lines.evicted + frags.evicted
            print(
                f"{lang}: {lines.count} lines + {frags.count} fragments "
                f"({lines.rendered + frags.rendered} rendered now"
                f"{f', {evicted} damaged files rendered again' if evicted else ''}), "
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


def render_one(args: argparse.Namespace) -> int:
    """``companion voice render``: one line to a file, through the same worker
    and finishing as the cache — for people to listen, and for checks."""
    _cfg, voice_cfg = _voice_config(args)
    lang = args.lang
    settings = RenderSettings.from_config(voice_cfg)
    if args.engine:
        problem = ENGINES[args.engine].missing() or (
            None if ENGINES[args.engine].speaks(lang) else f"it does not speak {lang!r}")
        if problem:
            print(f"companion voice render: {args.engine}: {problem}", file=sys.stderr)
            return 2
        settings = settings.with_engine(lang, args.engine)
    else:
        for note in settings.fallbacks:
            print(f"companion voice render: {note}", file=sys.stderr)
    entry = line_entries(getattr(args, "lines_dir", None) or getattr(args, "line_folders", None))(lang).get(args.text)
    if entry is not None and "{" in entry[1]:
        print(f"companion voice render: {args.text} needs parameters ({entry[1]}); give the text instead",
              file=sys.stderr)
        return 2
    text = (entry[0] if settings.reads_written(lang) else entry[1]) if entry else args.text
    renderer = SubprocessRenderer(settings)
    try:
        renderer.render(text, lang, args.output)
    except RenderError as exc:
        print(f"companion voice render: {exc}", file=sys.stderr)
        return 1
    finally:
        renderer.close()
    with wave.open(str(args.output), "rb") as w:
        seconds = w.getnframes() / w.getframerate()
    print(f"{args.output}: {seconds:.2f} s, {settings.engine_for(lang)} ({settings.voice_for(lang)}): {text}")
    return 0
