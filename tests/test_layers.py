"""One direction of imports: games know nothing but events; the core never
imports the shell (hardware, voice); only the composition root wires them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The composition root and commands that run hardware/voice for the user.
WIRING = {"app", "daemon", "simulate", "cli", "cli_simulate", "doctor", "scores"}


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_games_import_only_events_and_games() -> None:
    for path in (ROOT / "companion" / "games").glob("*.py"):
        for mod in imports(path):
            if mod.startswith(("companion", "hardware", "voice")):
                assert mod.startswith(("companion.events", "companion.games")), (path.name, mod)


def test_games_do_no_io_and_read_no_clock() -> None:
    banned = {"time", "datetime", "os", "socket", "sqlite3", "threading", "subprocess", "pathlib", "io"}
    for path in (ROOT / "companion" / "games").glob("*.py"):
        assert not imports(path) & banned, path.name
        assert "open(" not in path.read_text(), path.name


def test_core_never_imports_the_shell() -> None:
    for path in (ROOT / "companion").glob("*.py"):
        if path.stem in WIRING:
            continue
        for mod in imports(path):
            assert not mod.startswith(("hardware", "voice")), (path.name, mod)


def test_shell_imports_only_core_values() -> None:
    """hardware/ and voice/ may use the core's values (events, tags), never the
    session, the loop or the journal."""
    for pkg in ("hardware", "voice"):
        for path in (ROOT / pkg).glob("*.py"):
            for mod in imports(path):
                if mod.startswith("companion"):
                    assert mod in ("companion", "companion.events", "companion.tags", "companion.config",
                                   "companion.clock", "companion.threads"), (path, mod)
