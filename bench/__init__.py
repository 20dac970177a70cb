"""The benchmark suite: ``python bench/run.py [--quick] [--json]`` (see bench/README.md)."""
