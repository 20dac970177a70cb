"""The test tooling the tests import: the benchmarks (``qa/bench``) and the
reliability campaigns (``qa/reliability``); kept apart so the top level reads as the product."""
