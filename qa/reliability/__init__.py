"""The reliability campaign: random table scripts, a harness that drives the
real daemon (``companion run --simulate --json``) and kills it, the in-process
reference runs, and a corpus of bad files.

``python qa/reliability/run.py`` runs the long campaign; the test suite runs
short versions of each part (``tests/test_crash_resume.py`` and friends).
"""
