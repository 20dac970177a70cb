"""Seven Knights Bewitched (ミュルマミウスの虜): the engine (``engine``) and its pure rules (``rules``)."""

from companion.games.seven_knights.engine import SevenKnights

__all__ = ["SevenKnights"]
