"""Demagogos' Trap's own tests (pytest finds them through pyproject's testpaths)."""
