"""The benchmark suite: ``python qa/bench/run.py [--quick] [--json]`` (see qa/bench/README.md)."""
