"""Seven Knights' own tests (pytest finds them through pyproject's testpaths)."""
