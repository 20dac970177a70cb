"""A game is composed, not stacked: one class on ``Engine`` (its steps'
handlers are functions, or that class's methods), its state a dataclass,
and one read function (``view``) that its board, pages and headline come
from.  The measures here are read from the code itself (its classes, and
the syntax of its modules), so a tower of classes, a method that only
forwards to a module, a view that reads an engine's privates or arms a
timer, or an import circle among a game's modules fails here by name."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from pathlib import Path

import pytest

from companion.core.engine import Engine
from companion.games import GAMES
from conftest import code_files

COMPOSED: tuple[type[Engine], ...] = tuple(GAMES)  # every game (a fifth one too, once it is added)
MOST_METHODS = 40  # a game's own methods, over all its classes
READS = ("public_view", "board", "private_view", "page")  # derived from ``view``: a game writes none


def folder(game: type[Engine]) -> Path:
    return Path(inspect.getfile(game)).parent


def modules(game: type[Engine]) -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(), str(p)) for p in code_files(folder(game))}


def own_methods(cls: type) -> list[str]:
    return [name for name, v in vars(cls).items()
            if inspect.isfunction(v) or isinstance(v, property | classmethod | staticmethod)]


def game_classes(game: type[Engine]) -> list[type]:
    """The game's own classes in its chain (those of its package)."""
    package = game.__module__.rsplit(".", 1)[0]
    return [c for c in game.__mro__ if c.__module__.startswith(package + ".")]


@pytest.mark.parametrize("game", COMPOSED, ids=lambda g: g.game)
def test_a_game_is_one_class_on_the_engine(game: type[Engine]) -> None:
    assert game.__bases__ == (Engine,), f"{game.__name__} stands on {game.__bases__}, not on Engine alone"
    assert game_classes(game) == [game]


@pytest.mark.parametrize("game", COMPOSED, ids=lambda g: g.game)
def test_a_game_has_at_most_forty_methods_of_its_own(game: type[Engine]) -> None:
    methods = [m for c in game_classes(game) for m in own_methods(c)]
    assert len(methods) <= MOST_METHODS, f"{game.__name__}: {len(methods)} methods: {methods}"


@pytest.mark.parametrize("game", COMPOSED, ids=lambda g: g.game)
def test_a_games_state_is_a_dataclass(game: type[Engine]) -> None:
    state = typing.get_type_hints(game)["state"]
    assert dataclasses.is_dataclass(state), f"{game.__name__}.state is {state}, no dataclass"


def forwards(fn: ast.FunctionDef) -> bool:
    """Is the body of ``fn`` (past its docstring) only ``return module.f(self, …)``?"""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Call):
        return False
    call = body[0].value
    return (isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
            and call.func.value.id != "self" and bool(call.args)
            and isinstance(call.args[0], ast.Name) and call.args[0].id == "self")


@pytest.mark.parametrize("game", COMPOSED, ids=lambda g: g.game)
def test_no_method_of_a_game_only_forwards_to_a_module(game: type[Engine]) -> None:
    stubs = [f"{name}.py:{fn.lineno} {fn.name}" for name, tree in modules(game).items()
             for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef)
             for fn in cls.body if isinstance(fn, ast.FunctionDef) and forwards(fn)]
    assert not stubs, f"methods whose body is return views.x(self, …): {stubs}"


@pytest.mark.parametrize("game", COMPOSED, ids=lambda g: g.game)
def test_a_game_reads_in_one_function_and_derives_the_rest(game: type[Engine]) -> None:
    written = [r for r in READS for c in game_classes(game) if r in vars(c)]
    assert not written, f"{game.__name__} writes {written} beside view: they are derived from it"


@pytest.mark.parametrize("game", COMPOSED, ids=lambda g: g.game)
def test_views_read_no_engine_privates_change_nothing_and_arm_nothing(game: type[Engine]) -> None:
    tree = modules(game)["views"]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            found.append(f"views.py:{node.lineno} reads .{node.attr}")
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [f"views.py:{node.lineno} writes {ast.unparse(t)}" for t in targets
                      if isinstance(t, ast.Attribute) or isinstance(t, ast.Subscript) and not isinstance(t.value, ast.Name)]
        if isinstance(node, ast.Name) and node.id in ("SetTimer", "CancelTimer", "Draw"):
            found.append(f"views.py:{node.lineno} arms ({node.id})")
    assert not found, found


def imports(tree: ast.Module, package: str, names: set[str]) -> set[str]:
    """The modules of ``package`` that ``tree`` imports (``if TYPE_CHECKING`` ones too: a
    circle for the type checker is a circle for the reader)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            parts = node.module.split(".")
            if node.module == package:
                found |= {a.name for a in node.names if a.name in names}
            elif node.module.startswith(package + ".") and parts[-1] in names:
                found.add(parts[-1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[-1] for a in node.names
                      if a.name.startswith(package + ".") and a.name.split(".")[-1] in names}
    return found


@pytest.mark.parametrize("game", COMPOSED, ids=lambda g: g.game)
def test_no_import_circle_among_a_games_modules(game: type[Engine]) -> None:
    package = game.__module__.rsplit(".", 1)[0]
    trees = modules(game)
    edges = {name: imports(tree, package, set(trees)) - {name} for name, tree in trees.items()}

    def reaches(start: str, goal: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in edges[start])

    circles = sorted(f"{a} → {b} → … → {a}" for a, out in edges.items() for b in out if reaches(b, a))
    assert not circles, circles
