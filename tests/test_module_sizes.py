"""Modules that fit in a head: each module of the pure core, the runtime and the games
(their own tests aside) holds at most 400 lines, and the loop — the one place every input
passes — at most 300, so a job that grows there moves to a part of its own
(docs/develop/architecture.md states these figures; this test holds them)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted(p for folder in ("companion/core", "companion/runtime", "companion/games")
                 for p in (ROOT / folder).rglob("*.py") if "tests" not in p.parts)
MOST = {"companion/runtime/loop.py": 300}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_fits_in_a_head(path: Path) -> None:
    name = str(path.relative_to(ROOT))
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MOST.get(name, 400), f"{name}: {lines} lines"


def test_the_modules_are_found() -> None:
    assert len(MODULES) > 60 and any(str(p).endswith("runtime/loop.py") for p in MODULES)
