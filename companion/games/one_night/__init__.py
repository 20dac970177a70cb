"""One Night Werewolf (ワンナイト人狼): the engine (``engine``: the class and
its step table), its state (``state``), the steps' handlers (``steps``, and
``reveal`` for the count and the reveal), its read side (``views``), its
roles and editions (``roles``) and its rules (``rules``, ``night``,
``verdict``).

``add_role`` is how a role joins from a module of its own: one entry in the
registry, and the game's cards, tags, settings, manifest and lines know it —
each read from the registry when asked, no class set afterwards.
"""

from companion.games.one_night.engine import OneNight
from companion.games.one_night.roles import Role, register


def add_role(role: Role) -> Role:
    """Register ``role`` (``roles.register``): from then on the game's cards and
    config schema (``roles.Registered``) and its manifest have its tags."""
    return register(role)


__all__ = ["OneNight", "Role", "add_role"]
