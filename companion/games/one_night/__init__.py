"""One Night Werewolf (ワンナイト人狼): the engine (``engine``: the class and
its step table), its state (``state``), the steps' handlers (``steps``, and
``reveal`` for the count and the reveal), its read side (``views``), its
roles and editions (``roles``) and its rules (``rules``, ``night``,
``verdict``).

``add_role`` is how a role joins from a module of its own: one entry, and the
game's cards, tags and lines know it.
"""

from companion.games.one_night.engine import OneNight
from companion.games.one_night.roles import Role, every_card, register
from companion.games.one_night.rules import settings_for


def add_role(role: Role) -> Role:
    """Register ``role`` (``roles.register``) and let the engine's cards and
    config schema know its tags."""
    register(role)
    OneNight.components = every_card()
    OneNight.settings = settings_for(OneNight.components)
    return role


__all__ = ["OneNight", "Role", "add_role"]
