"""One direction of imports (README, "How it is built"):

    shell (hardware, voice) ──▶ core ◀── games ◀── runtime ◀── app
                                  ▲_________________________/

- ``companion.core`` imports nothing of the project outside itself;
- ``companion.games`` imports only the core (and each game only itself);
- ``companion.runtime`` imports the core, never a game, the app or the shell;
- the shell (``hardware``, ``voice``, ``web``, ``mqtt``) imports only the core
  and the thread registry;
- ``httpkit``, the HTTP kit under the pages and the venue, imports only the
  core and the thread registry: web and venue stand on it, it names neither;
- ``companion.app`` is the one place that wires everything, and nothing it
  wires imports it;
- the venue stands on the wire (companion.core.wire, venue/wire.json), never
  on the app or the games;
- one module owns threads (``companion.threads``), outside the core;
- no import runs in a circle.
Games and the core do no I/O, read no clock and start no thread.
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
            if node.module in PROJECT:  # ``from companion import threads``: companion.threads
                found.update(f"{node.module}.{a.name}" for a in node.names)
            else:
                found.add(node.module)
    return found


def project_imports(folder: str) -> list[tuple[Path, str]]:
    return [(path, mod) for path in code_files(ROOT / folder)
            for mod in imports(path) if mod.split(".")[0] in PROJECT]


@pytest.mark.parametrize("folder, allowed", [
    ("companion/core", ("companion.core",)),
    ("companion/runtime", ("companion.core", "companion.runtime", "companion.threads")),
    ("hardware", ("companion.core", "companion.threads", "hardware")),
    ("voice", ("companion.core", "companion.threads", "voice")),
    ("web", ("companion.core", "companion.threads", "httpkit", "web")),
    ("httpkit", ("companion.core", "companion.threads", "httpkit")),
    ("mqtt", ("companion.core", "companion.threads", "mqtt")),
])
def test_imports_run_one_way(folder: str, allowed: tuple[str, ...]) -> None:
    wrong = [(p.relative_to(ROOT).as_posix(), m) for p, m in project_imports(folder)
             if not m.startswith(allowed)]
    assert not wrong, wrong


def test_finding_the_venue_depends_on_the_wire_not_on_the_app_or_the_games() -> None:
    """The venue trusts no table and runs none: never the tables' MQTT
    builders (mqtt/), their runtime, their pages, their app or their games.
    It stands on the core's wire (companion.core.wire: the topics, the field
    kinds) and the wire the games publish as data (venue/wire.json, written
    from their manifests and lines, held equal to them by test_venue.py), the
    HTTP kit the pages stand on too (httpkit) and the one thread registry."""
    wrong = [(p.name, m) for p, m in project_imports("venue")
             if not m.startswith(("companion.core", "companion.threads", "httpkit", "venue"))]
    assert wrong == [], wrong


def test_finding_nothing_the_app_wires_imports_the_app() -> None:
    """The composition root stands above what it wires: no import runs back
    up into companion.app from the core, the games, the runtime, the shell,
    the HTTP kit or the venue."""
    below = ("companion/core", "companion/games", "companion/runtime", "hardware", "voice", "web", "mqtt",
             "httpkit", "venue")
    wrong = [(p.relative_to(ROOT).as_posix(), m) for folder in below for p, m in project_imports(folder)
             if m.startswith("companion.app")]
    assert wrong == [], wrong


def test_finding_no_thread_is_started_in_the_core_or_the_games() -> None:
    """The pure core and the games start no thread and hold no registry of
    them: one module owns threads (companion.threads), beside the core."""
    threaded = {"threading", "_thread", "concurrent", "multiprocessing", "asyncio"}
    for folder in ("companion/core", "companion/games"):
        for path in code_files(ROOT / folder):
            mods = imports(path)
            assert not {m.split(".")[0] for m in mods} & threaded, path.relative_to(ROOT).as_posix()
            assert "companion.threads" not in mods and "Thread(" not in path.read_text(), path.name


def module_graph() -> dict[str, set[str]]:
    """Every module of the project (its tests left out) and the modules of the
    project it imports, wherever in it (inside a function, for type checking
    only: a circle hidden in a function is a circle all the same).  ``from a
    import b`` is an edge to ``a.b`` where that is a module, else to ``a``."""
    files: dict[str, Path] = {}
    for top in PROJECT:
        for path in code_files(ROOT / top):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name in files)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                edges.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in files else node.module
                             for a in node.names if node.module in files or f"{node.module}.{a.name}" in files)
        graph[name] = edges - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each set of modules that reach one another (more
    than one), sorted (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


# Circles being taken apart on their owners' branches; the list only shrinks.
def test_finding_no_import_runs_in_a_circle() -> None:
    found = circles(module_graph())
    assert found == []


def test_the_circle_finder_sees_a_circle_and_only_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


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
            assert not mods & banned, (path.relative_to(ROOT).as_posix(), mods & banned)
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
