"""The benchmark suite: ``python bench/run.py [--quick] [--json]`` (see README.md)."""
