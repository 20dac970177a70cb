"""Shared fixtures: a simulated table on a virtual clock, recording its log;
and where the example scripts are.  At the top of the tree so they reach both
tests/ and each game's own tests (companion/games/<game>/tests/)."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.app import config
from companion.app.simulate import Simulation

ROOT = Path(__file__).resolve().parent
# The tests' shared helpers (privacy, venue_kit, the browser fixture in test_web_browser, …) are
# imported by their module name, as pytest's default import mode puts tests/ on the path once it
# imports a test there; put it there first, so a game's own tests reach them run alone too.
sys.path.insert(0, str(ROOT / "tests"))

# Each game's example scripts live in its folder, under the names they had in the old top-level
# examples/ folder: companion/games/seven_knights/examples/seven-knights.yaml, …/demagogos/6p.yaml.
EXAMPLE_DIRS = sorted(ROOT.glob("companion/games/*/examples"))


# ``pytest --quick`` (``bash test.sh --quick``): the loop to run while working — the rules, the
# engines, core and runtime.  Left out: what starts a browser, a broker, a daemon process (a file
# of them by its name, one test by ``@pytest.mark.daemon``), a render worker, a docs build or the
# installed layout's scripts, and the long campaigns (power cuts, crash kills, fuzzing, the benchmarks);
# the whole suite (CI's) runs them all.
QUICK_LEAVES_OUT = re.compile(
    r"_browser\.py$|/test_(web|venue|mqtt|mosquitto|voice|docs|bench|page_walk|display_names|fifth_game"
    r"|crash_resume|daemon|install_script|service_unit|power_and_damage|reader_faults|fuzz_scripts"
    r"|journal_guard|damaged_journal|doctor|provision|tags_|tag_words|layers|supervisor"
    r"|release_update|cli_wrapper)")  # the installed layout's scripts, as install_script's
QUICK_LEAVES_OUT_FIXTURES = {"browser", "broker", "readable"}
# Every test's tmp_path is in memory (tmpfs), where there is one with room: a journal's commit there
# costs no disk fsync (2 ms each on this machine's disk; a resume test commits thousands, and the
# whole suite spent more of its time waiting on the disk than on anything it checks).  No test is
# about what a disk keeps through a power cut: the campaigns model that themselves (qa/reliability),
# and a test that needs a second device takes the disk's temporary folder beside this one.  A passed
# test's folder is removed as it ends (pyproject's tmp_path_retention_policy), so the memory holds the
# tests running now, not every test so far.  The scratch folders the code makes for itself (a
# script's journal, `companion simulate` without --state) are in memory too: TMPDIR, beside it.
# COMPANION_TEST_TMP=disk keeps them all on the disk.
MEMORY_TMP = Path("/dev/shm")
MEMORY_TMP_ROOM = 2 * 2**30  # the folders of the tests running at once, with a wide margin
_memory_tmp: list[Path] = []  # made by this process (the controller, with xdist): removed at its end


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (test.sh, the quick-loop benchmark): two workers more than cores.  Much of the
    suite waits (browsers, brokers, real clocks, daemons starting): on two cores three workers kept
    1.15 cores busy, and four took 684–808 s where two took 862 s (docs/develop/benchmarks.md)."""
    return len(os.sched_getaffinity(0)) + 2


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--quick", action="store_true",
                     help="the loop to run while working: rules, engines, core and runtime "
                          "(no browser, no broker, no daemon, no long campaign)")


def memory_has_room(folder: Path = MEMORY_TMP) -> bool:
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        return False
    room = os.statvfs(folder)
    return room.f_bavail * room.f_frsize >= MEMORY_TMP_ROOM


def pytest_configure(config: pytest.Config) -> None:
    if (config.option.basetemp is None and os.environ.get("COMPANION_TEST_TMP") != "disk"
            and not hasattr(config, "workerinput") and memory_has_room()):
        # xdist's workers are handed this option (each its own folder under it) as they start
        _memory_tmp.append(Path(tempfile.mkdtemp(prefix="pytest-companion-", dir=MEMORY_TMP)))
        config.option.basetemp = str(_memory_tmp[0])
        # and TMPDIR, which the workers inherit, beside the basetemp (pytest empties that); others may
        # enter it (a broker dropped to its own user reads the files a test puts in a folder of it)
        scratch = Path(tempfile.mkdtemp(prefix="pytest-companion-tmpdir-", dir=MEMORY_TMP))
        scratch.chmod(0o755)
        _memory_tmp.append(scratch)
        os.environ["TMPDIR"] = tempfile.tempdir = str(scratch)


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _memory_tmp:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("quick"):
        return
    keep, left = [], []
    for item in items:
        slow = (QUICK_LEAVES_OUT.search(item.path.as_posix()) is not None
                or item.get_closest_marker("daemon") is not None
                or not QUICK_LEAVES_OUT_FIXTURES.isdisjoint(getattr(item, "fixturenames", ())))
        (left if slow else keep).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = keep


def code_files(folder: Path) -> list[Path]:
    """The Python files of ``folder``'s code: a game's own tests (its tests/ folder) drive the
    whole table through the app, so the checks on the games' code (layers, no I/O, no hand-set
    step) leave them out."""
    return sorted(p for p in folder.rglob("*.py") if "tests" not in p.relative_to(folder).parts)


def example_script(name: str) -> Path:
    """The example script ``name`` ("one-night.yaml", "demagogos/6p.yaml") in its game's folder."""
    found = [folder / name for folder in EXAMPLE_DIRS if (folder / name).is_file()]
    assert len(found) == 1, f"no one example script {name}: {found}"
    return found[0]


def example_scripts(pattern: str = "**/*.yaml") -> list[Path]:
    """Every example script matching ``pattern`` (relative to the games' examples folders)."""
    return sorted((p for folder in EXAMPLE_DIRS for p in folder.glob(pattern)), key=example_name)


def example_name(path: Path) -> str:
    """A script's name relative to its examples folder ("seven-knights/basic-4p.yaml")."""
    return next(path.relative_to(folder).as_posix() for folder in EXAMPLE_DIRS if path.is_relative_to(folder))


class Table:
    """A Simulation plus its event log, with small helpers for tests."""

    def __init__(self, state: Path, *, voice: Any = None, draws: dict[str, Any] | None = None,
                 **overrides: Any) -> None:
        self.state = state
        self.events: list[dict[str, Any]] = []
        cfg = config.load([ROOT / "config" / "companion.yaml"], overrides or None)
        self.sim = Simulation(cfg, state, self.events.append, voice=voice, draws=draws)

    def tap(self, *identities: str) -> None:
        for i in identities:
            self.sim.step("tap", i)

    def press(self, *buttons: str) -> None:
        for b in buttons:
            self.sim.step("press", b)

    def do(self, kind: str, value: Any) -> None:
        self.sim.step(kind, value)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == kind]

    def keys(self) -> list[str]:
        return [e["key"] for e in self.of("say")]

    def last(self, kind: str) -> dict[str, Any]:
        return self.of(kind)[-1]

    def mark(self) -> int:
        return len(self.events)

    def since(self, mark: int, kind: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.events[mark:] if kind is None or e["event"] == kind]

    def close(self) -> None:
        self.sim.close()


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path)
    yield t
    t.close()


@pytest.fixture
def make_table(tmp_path: Path) -> Iterator[Any]:
    made: list[Table] = []

    def make(**overrides: Any) -> Table:
        t = Table(tmp_path, **overrides)
        made.append(t)
        return t
    yield make
    for t in made:
        t.close()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Any]:
    """A real mosquitto on a free loopback port, anonymous, for this test only
    (tests/mosquitto.py; skips saying why where mosquitto is absent)."""
    from tests.mosquitto import Broker

    b = Broker(tmp_path / "broker").start()
    yield b
    b.stop()


@pytest.fixture
def readable() -> Iterator[Path]:
    """A folder the broker can read files from: run as root, mosquitto drops
    to its own user, which cannot enter pytest's private tmp_path."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="companion-mqtt-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)
