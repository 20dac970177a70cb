"""The reference pages say what is true: they are checked against the code they describe.

- every command and every flag `--help` shows is named in docs/reference/commands.md;
- every setting of the one config schema is in the shipped config/companion.yaml with its
  default, and in docs/reference/configuration.md's table, which is rendered from the schema.
"""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pytest
import yaml

from companion.app import cli, config, config_doc

ROOT = Path(__file__).resolve().parent.parent
COMMANDS_MD = (ROOT / "docs/reference/commands.md").read_text(encoding="utf-8")


def _parser(name: str) -> argparse.ArgumentParser:
    module, _ = cli.COMMANDS[name]
    p = argparse.ArgumentParser(prog=f"companion {name}")
    p.add_argument("--config", action="append")
    importlib.import_module(module).configure_parser(p)
    return p


def _walk(p: argparse.ArgumentParser, path: tuple[str, ...]):
    """(command path, option string) for every flag, and (command path, None) for each command."""
    yield path, None
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subp in action.choices.items():
                yield from _walk(subp, (*path, sub))
        elif action.help != argparse.SUPPRESS:  # a flag --help hides is for tests, not people
            for opt in action.option_strings:
                if opt.startswith("--") and opt not in ("--help", "--config"):
                    yield path, opt


def _every_flag():
    for name in cli.COMMANDS:
        yield from _walk(_parser(name), (name,))


def _documented_rows() -> dict[tuple[str, ...], str]:
    """The commands page's rows: the words of each row's first cell, and the whole row."""
    rows = {}
    for line in COMMANDS_MD.splitlines():
        m = re.match(r"\| `(?:sudo )?companion ([^`]*)`", line)
        if m:
            rows[tuple(m.group(1).split())] = line
    return rows


@pytest.mark.parametrize(("path", "flag"), sorted(_every_flag(), key=lambda x: (x[0], x[1] or "")),
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else str(v))
def test_the_commands_page_names_every_command_and_flag(path, flag):
    rows = [line for words, line in _documented_rows().items()
            if words[:len(path)] == path or words[0] == path[0] and _alternatives(words, path)]
    assert rows, f"docs/reference/commands.md has no row for `companion {' '.join(path)}`"
    if flag is not None:
        assert any(re.search(rf"{re.escape(flag)}\b", line) for line in rows), (
            f"docs/reference/commands.md does not name `companion {' '.join(path)} {flag}`")


def _alternatives(words: tuple[str, ...], path: tuple[str, ...]) -> bool:
    """A row may name several sub-commands at once: `tags list|sheet|write`."""
    return len(words) >= len(path) and all(
        p in w.split("|") for p, w in zip(path, words, strict=False))


def test_restore_has_its_own_help():
    text = _parser("restore").format_help()
    assert "what to restore" in text.lower() or "backup to restore" in text.lower()
    assert "where to write" not in text, "restore --help describes backup's FILE"


def _lookup(data, path: str):
    for key in path.split("."):
        if not isinstance(data, dict) or key not in data:
            raise KeyError(path)
        data = data[key]
    return data


SHIPPED = yaml.safe_load((ROOT / "config/companion.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", [p for p, _ in config_doc.leaves(config.SCHEMA)])
def test_the_shipped_config_lists_every_setting_with_its_default(path):
    field = dict(config_doc.leaves(config.SCHEMA))[path]
    try:
        value = _lookup(SHIPPED, path)
    except KeyError:
        pytest.fail(f"config/companion.yaml does not list {path}")
    assert value == field.default or (field.read and field.read(value) == field.read(field.default))


@pytest.mark.parametrize("path", [p for p, _ in config_doc.leaves(config.SCHEMA)])
def test_every_setting_says_what_it_does(path):
    assert dict(config_doc.leaves(config.SCHEMA))[path].doc, f"{path} has no doc: the configuration page would be blank"


def test_the_configuration_page_is_the_schema_rendered():
    page = (ROOT / "docs/reference/configuration.md").read_text(encoding="utf-8")
    table = config_doc.table()
    assert table in page, ("docs/reference/configuration.md's table is not the schema's; "
                           "regenerate it: python -m companion.app.config_doc --write")
