"""Demagogos' Trap (デマゴーゴスの罠): the engine (``engine``) and its pure rules (``rules``)."""

from companion.games.demagogos.engine import Demagogos

__all__ = ["Demagogos"]
