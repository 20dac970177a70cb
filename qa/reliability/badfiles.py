"""The corpus of bad files (``qa/reliability/corpus/``) and what each must give:
a ``ConfigError`` naming the file and, where the problem sits on a line,
that line.  ``bug`` marks an entry the code gets wrong (the tests expect
the right behaviour and are marked xfail with that reason); none is left:
the corpus found seven, all fixed in f95b2d9 (recursion, unhashable keys,
aliases, control characters, script config lines).

Two kinds are made at run time rather than stored: a file over the size
limit (``huge``) and, for the daemon, configs that point at the bad tag maps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from companion.app.config import MAX_FILE_BYTES

CORPUS = Path(__file__).resolve().parent / "corpus"


@dataclass(frozen=True)
class Bad:
    name: str  # file name under corpus/<kind>/
    line: int | None  # the line the error names; None: the problem has no line
    bug: str = ""  # what is wrong today, if anything

    def path(self, kind: str) -> Path:
        return CORPUS / kind / self.name


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
    Bad("nul-byte.yaml", 3),
    Bad("list-as-key.yaml", 3),
    Bad("mapping-as-key.yaml", 3),
    Bad("recursive-alias.yaml", 4),
    Bad("deep-nesting.yaml", 3),
    Bad("alias-bomb.yaml", 4),
    # YAML tags, NUL characters, numbers without sane bounds
    Bad("yaml-tag-int-twelve.yaml", 2),
    Bad("yaml-tag-python-name.yaml", 2),
    Bad("yaml-tag-set.yaml", 3),
    Bad("nul-in-state-dir.yaml", 2),
    Bad("deck-huge.yaml", 4),
    Bad("deck-no-centre.yaml", 4),
    Bad("deck-player-count.yaml", 4),
    Bad("warnings-inf.yaml", 4),
    Bad("seed-too-big.yaml", 2),
]

# Valid although unusual: must load (an empty file or one of comments only
# changes nothing; every key is optional).  name → the language it sets.
CONFIGS_OK = {"empty.yaml": "en", "only-comments.yaml": "en", "ok-utf8-bom.yaml": "ja", "ok-crlf.yaml": "ja"}

TAGMAPS = [
    Bad("bad-uid.yaml", 3),
    Bad("short-uid.yaml", 2),
    Bad("unknown-identity.yaml", 2),
    Bad("identity-not-a-string.yaml", 2),
    Bad("number-not-hex.yaml", 3),  # named as written, not as the number YAML reads
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

# Hand-written and valid: must load, UIDs as written.  name → the map.
TAGMAPS_OK = {"ok-digit-only-uids.yaml": {"04123456": "player/red", "12345678": "skb/knight/2",
                                          "04112233445566": "skb/knight/1"}}

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
    Bad("bad-config.yaml", 2),
    Bad("steps-not-a-list.yaml", 2),
    Bad("unknown-top-key.yaml", 2),
    # numbers without sane bounds, empty UIDs, YAML tags
    Bad("wait-inf.yaml", 4),
    Bad("wait-nan.yaml", 4),
    Bad("uid-empty.yaml", 4),
    Bad("yaml-tag-in-step.yaml", 4),
    Bad("yaml-tag-seed.yaml", 2),
    # a list where a UID goes
    Bad("uid-a-list.yaml", 4),
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
