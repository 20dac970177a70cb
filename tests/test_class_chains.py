"""No class towers: a class of the project's stands on at most one other of
the project's (a game on ``Engine``; the table on nothing of ours), so what
``self`` is can be read in two files at most."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

PACKAGES = ("companion", "hardware", "voice", "web", "httpkit", "mqtt", "venue")
DEEPEST = 2


def _modules() -> list[ModuleType]:
    found = []
    for name in PACKAGES:
        package = importlib.import_module(name)
        found.append(package)
        for info in pkgutil.walk_packages(package.__path__, f"{name}."):
            if ".tests" not in info.name and ".examples" not in info.name:
                found.append(importlib.import_module(info.name))
    return found


def _ours(cls: type) -> bool:
    return cls.__module__.split(".")[0] in PACKAGES


def test_no_class_of_ours_stands_on_more_than_one_of_ours() -> None:
    towers = {}
    for module in _modules():
        for cls in vars(module).values():
            if inspect.isclass(cls) and cls.__module__ == module.__name__:
                chain = [c.__name__ for c in cls.__mro__ if _ours(c)]
                if len(chain) > DEEPEST:
                    towers[f"{module.__name__}.{cls.__qualname__}"] = chain
    assert towers == {}
