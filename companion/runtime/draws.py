"""Secret draws: where the dice, shuffles and jitters the engines ask for come from.

An engine asks with a ``Draw`` output; the loop asks a ``Drawer`` for the
value and journals it as a ``Drawn`` input before anything follows from it,
so a replay sees the same value and nothing stored beforehand predicts it.

At a real table the source is the operating system's (``SystemRandom``,
i.e. ``os.urandom``): no seed is kept anywhere.  A table script's ``seed:``
(or a config ``seed``, for tests) makes every draw reproducible instead —
keyed by the game's number and the draw's name, so one draw never shifts
another — and its ``draws:`` fixes named draws outright.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from companion.core.events import Draw


class DrawError(ValueError):
    """A fixed draw (``draws:`` in a script) that the engine's request cannot take."""


class Drawer:
    def __init__(self, seed: int | None = None, fixed: Mapping[str, Any] | None = None) -> None:
        self.seed = seed
        self.fixed = dict(fixed or {})
        self._system = random.SystemRandom()

    def draw(self, request: Draw, game_no: int = 0) -> Any:
        """A value for ``request``: fixed, seeded, or from the system's source."""
        if request.name in self.fixed:
            value = self.fixed[request.name]
            if not request.accepts(value):
                raise DrawError(f"draws: {request.name} = {value!r} is not a possible value "
                                f"({_describe(request)})")
            return value
        rng: random.Random = (random.Random(f"{self.seed}:{game_no}:{request.name}")
                              if self.seed is not None else self._system)
        values = [rng.randint(request.low, request.high) for _ in range(max(1, request.count))]
        return values if request.count else values[0]


def _describe(request: Draw) -> str:
    one = f"a whole number from {request.low} to {request.high}"
    return f"a list of {request.count}, each {one}" if request.count else one
