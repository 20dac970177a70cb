"""One direction of imports (README, "How it is built"):

    shell (hardware, voice) ──▶ core ◀── games ◀── runtime ◀── app
                                  ▲_________________________/

- ``companion.core`` imports nothing of the project outside itself;
- ``companion.games`` imports only the core (and each game only itself);
- ``companion.runtime`` imports the core, never a game, the app or the shell;
- the shell (``hardware``, ``voice``, ``web``, ``mqtt``) imports only the core;
- ``httpkit``, the HTTP kit under the pages and the venue, imports only the
  core: web and venue stand on it, it names neither;
- ``companion.app`` is the one place that wires everything.
Games and the core do no I/O and read no clock.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import code_files

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ("companion", "hardware", "voice", "web", "mqtt", "venue", "httpkit")


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def project_imports(folder: str) -> list[tuple[Path, str]]:
    return [(path, mod) for path in code_files(ROOT / folder)
            for mod in imports(path) if mod.split(".")[0] in PROJECT]


@pytest.mark.parametrize("folder, allowed", [
    ("companion/core", ("companion.core",)),
    ("companion/runtime", ("companion.core", "companion.runtime")),
    ("hardware", ("companion.core", "hardware")),
    ("voice", ("companion.core", "voice")),
    ("web", ("companion.core", "httpkit", "web")),
    ("httpkit", ("companion.core", "httpkit")),
    ("mqtt", ("companion.core", "mqtt")),
])
def test_imports_run_one_way(folder: str, allowed: tuple[str, ...]) -> None:
    wrong = [(p.relative_to(ROOT).as_posix(), m) for p, m in project_imports(folder)
             if not m.startswith(allowed)]
    assert not wrong, wrong


def test_the_venue_names_the_games_only_from_its_command_and_their_manifests() -> None:
    """The venue trusts no table: never the tables' MQTT builders (mqtt/) nor
    their runtime, only the core, the games' manifests (pure declarations:
    which events a table publishes and their fields — venue/schema.py checks
    by them, an arrow pointing down, as the app's does), and the HTTP kit
    the pages stand on too (httpkit: the door, the one SSE helper, uvicorn on
    its own thread), never the pages themselves; venue/cli.py, the command,
    reads the games' names from the app's catalogue, lazily."""
    found = project_imports("venue")
    wrong = [(p.name, m) for p, m in found
             if not m.startswith(("companion.core", "httpkit", "venue"))
             and not (p.name == "schema.py" and m == "companion.games")]
    assert wrong == [("cli.py", "companion.app.catalogue")], wrong
    assert not [m for _, m in found if m.startswith(("companion.runtime", "mqtt", "web"))]


def test_each_game_imports_only_the_core_and_itself() -> None:
    for game in sorted(p for p in (ROOT / "companion" / "games").iterdir() if p.is_dir() and p.name != "__pycache__"):
        own = f"companion.games.{game.name}"
        wrong = [(p.name, m) for p, m in project_imports(f"companion/games/{game.name}")
                 if not m.startswith(("companion.core", own))]
        assert not wrong, (game.name, wrong)


def test_games_and_the_core_do_no_io_and_read_no_clock() -> None:
    banned = {"time", "datetime", "os", "socket", "sqlite3", "subprocess", "pathlib", "io", "random", "secrets"}
    for folder in ("companion/games", "companion/core"):
        for path in code_files(ROOT / folder):
            mods = {m.split(".")[0] for m in imports(path)}
            extra = {"threading"} if path.name != "threads.py" else set()
            assert not mods & (banned | extra), (path.relative_to(ROOT).as_posix(), mods & banned)
            assert "open(" not in path.read_text(), path.name


def test_the_checker_sees_a_wrong_import(tmp_path: Path) -> None:
    bad = tmp_path / "x.py"
    bad.write_text("from companion.runtime.loop import TableLoop\n")
    assert imports(bad) == {"companion.runtime.loop"}


@pytest.mark.parametrize("command", ["daemon", "simulate", "scores", "cli"])
def test_commands_get_their_devices_from_the_wiring(command: str) -> None:
    """Only companion/app/wiring.py (and the commands that are the shell's own
    tools: tags, voice, doctor's probes) may reach into hardware/ and voice/."""
    path = ROOT / "companion" / "app" / f"{command}.py"
    assert not [m for m in imports(path) if m.split(".")[0] in ("hardware", "voice")], command
