"""Madness Hour's own tests (pytest finds them through pyproject's testpaths)."""
