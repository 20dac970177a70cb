"""The corpus of bad files (``reliability/corpus/``) and what each must give:
a ``ConfigError`` naming the file and, where the problem sits on a line,
that line.  ``bug`` marks an entry the code gets wrong today (the tests
expect the right behaviour and are marked xfail with that reason).

Two kinds are made at run time rather than stored: a file over the size
limit (``huge``) and, for the daemon, configs that point at the bad tag maps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from companion.config import MAX_FILE_BYTES

CORPUS = Path(__file__).resolve().parent / "corpus"


@dataclass(frozen=True)
class Bad:
    name: str  # file name under corpus/<kind>/
    line: int | None  # the line the error names; None: the problem has no line
    bug: str = ""  # what is wrong today, if anything

    def path(self, kind: str) -> Path:
        return CORPUS / kind / self.name


BUG_RECURSION_COMPOSE = ("BUG: companion/config.py read_yaml catches only yaml errors; deeply nested flow "
                         "collections make yaml.compose raise RecursionError (a traceback, exit 1)")
BUG_UNHASHABLE_KEY = ("BUG: companion/config.py _merge does `key in seen` with the key as parsed; a list or "
                      "mapping used as a key raises TypeError: unhashable type (a traceback, exit 1)")
BUG_RECURSIVE_ALIAS = ("BUG: companion/config.py _plain follows YAML aliases without a limit; a recursive "
                       "alias (&a [*a]) raises RecursionError (a traceback, exit 1)")
BUG_ALIAS_BOMB = ("BUG: companion/config.py _plain expands aliases without a limit and the error quotes the "
                  "whole value: a 600-byte file gives a 5.8 MB message (one level more: 58 MB and 6 s)")
BUG_READER_ERROR = ("BUG: companion/config.py read_yaml turns yaml.reader.ReaderError (a NUL or other "
                    "control character) into a two-line message with no line number")

CONFIGS = [
    Bad("wrong-type-top.yaml", 3),
    Bad("wrong-type-nested.yaml", 4),
    Bad("wrong-type-bool.yaml", 5),
    Bad("wrong-type-list.yaml", 4),
    Bad("wrong-type-seed-bool.yaml", 3),
    Bad("out-of-range.yaml", 4),
    Bad("bad-choice.yaml", 4),
    Bad("bad-player-name.yaml", 4),
    Bad("bad-pin.yaml", 5),
    Bad("bad-tile-sets.yaml", 5),
    Bad("bad-jitter.yaml", 5),
    Bad("unknown-key-top.yaml", 3),
    Bad("unknown-key-nested.yaml", 4),
    Bad("unknown-game.yaml", 4),
    Bad("section-not-mapping.yaml", 3),
    Bad("root-is-a-list.yaml", 3),
    Bad("root-is-a-scalar.yaml", 3),
    Bad("broken-yaml-unclosed.yaml", 5),
    Bad("broken-yaml-indent.yaml", 5),
    Bad("broken-yaml-quote.yaml", 4),
    Bad("latin-1.yaml", 3),
    Bad("utf-16-bom.yaml", 1),
    Bad("utf-16-be-bom.yaml", 1),
    Bad("binary.yaml", 1),
    Bad("duplicate-key.yaml", 5),
    Bad("duplicate-nested-key.yaml", 6),
    Bad("tabs.yaml", 4),
    Bad("tab-after-key.yaml", 4),
    Bad("is-a-directory.yaml", None),
    Bad("nul-byte.yaml", 3, BUG_READER_ERROR),
    Bad("list-as-key.yaml", 3, BUG_UNHASHABLE_KEY),
    Bad("mapping-as-key.yaml", 3, BUG_UNHASHABLE_KEY),
    Bad("recursive-alias.yaml", 4, BUG_RECURSIVE_ALIAS),
    Bad("deep-nesting.yaml", 3, BUG_RECURSION_COMPOSE),
    Bad("alias-bomb.yaml", 4, BUG_ALIAS_BOMB),
]

# Valid although unusual: must load (an empty file or one of comments only
# changes nothing; every key is optional).  name → the language it sets.
CONFIGS_OK = {"empty.yaml": "en", "only-comments.yaml": "en", "ok-utf8-bom.yaml": "ja", "ok-crlf.yaml": "ja"}

TAGMAPS = [
    Bad("bad-uid.yaml", 3),
    Bad("short-uid.yaml", 2),
    Bad("unknown-identity.yaml", 2),
    Bad("identity-not-a-string.yaml", 2),
    Bad("uid-read-as-number.yaml", 3),
    Bad("duplicate-uid.yaml", 3),
    Bad("duplicate-key.yaml", 3),
    Bad("root-is-a-list.yaml", 2),
    Bad("list-as-key.yaml", 2),
    Bad("broken-yaml.yaml", 4),
    Bad("tabs.yaml", 2),
    Bad("latin-1.yaml", 2),
    Bad("utf-16-bom.yaml", 1),
    Bad("is-a-directory.yaml", None),
]

BUG_SCRIPT_CONFIG = ("BUG: companion/simulate.py run_script checks a script's `config:` as 'script config' "
                     "re-dumped to YAML, so the error names neither the script file nor its line")
BUG_SCRIPT_NO_LINE = ("BUG (minor): companion/simulate.py load_script refuses unknown top-level keys and a "
                      "non-list `steps:` without the line, though the key has one")

SCRIPTS = [
    Bad("unknown-step.yaml", 5),
    Bad("negative-wait.yaml", 4),
    Bad("wait-not-a-number.yaml", 4),
    Bad("bad-button.yaml", 4),
    Bad("tap-a-number.yaml", 4),
    Bad("two-keys-in-a-step.yaml", 4),
    Bad("duplicate-key.yaml", 5),
    Bad("empty.yaml", 1),
    Bad("latin-1.yaml", 1),
    Bad("bad-config.yaml", 2, BUG_SCRIPT_CONFIG),
    Bad("steps-not-a-list.yaml", 2, BUG_SCRIPT_NO_LINE),
    Bad("unknown-top-key.yaml", 2, BUG_SCRIPT_NO_LINE),
]


def make_huge(path: Path) -> Path:
    """A config just over the size limit: valid YAML (comments), refused unread."""
    line = "# " + "padding " * 12 + "\n"
    path.write_text("language: en\n" + line * (MAX_FILE_BYTES // len(line) + 2), encoding="utf-8")
    return path


def tag_map_config(tag_map: Path, path: Path) -> Path:
    """A good config whose ``reader.tag_map`` is ``tag_map``."""
    path.write_text(f"reader:\n  tag_map: {str(tag_map)!r}\n", encoding="utf-8")
    return path
