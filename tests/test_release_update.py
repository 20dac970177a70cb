"""An update installs a release beside the running one, switches to it
atomically, and goes back by itself unless it becomes ready
(systemd/release.sh, as install.sh runs it).

Everything runs for real against a temporary prefix except what needs a Pi:
the venvs are made by a stand-in python whose pip installs a stand-in
``companion`` (it sends READY=1, exits, or hangs, as its release says), and
``systemctl`` is qa/fake_systemctl.py, which starts the unit's ExecStart= with
a notify socket and waits for READY=1 the way systemd does.  The emulated
arm64 run of the real thing is tools/pi-update-check.sh."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RELEASE_SH = ROOT / "systemd" / "release.sh"
FAKE_SYSTEMCTL = ROOT / "qa" / "fake_systemctl.py"
BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None or not sys.platform.startswith("linux"), reason="bash on Linux")

# The stand-in companion: `run` records which release ran, then does what its
# release's `behaviour` file says; `backup` records which release made it.
COMPANION = f"""#!{sys.executable}
import os, socket, sys, time
from pathlib import Path
release = "@RELEASE@"
state = Path(os.environ.get("STATE_DIRECTORY") or os.environ["FAKE_STATE"])
name = Path(release).name
if sys.argv[1:2] == ["backup"]:
    with open(state / "backups.log", "a") as f:
        f.write(name + "\\n")
    sys.exit(0)
if sys.argv[1:2] != ["run"]:
    sys.exit(0)
with open(state / "ran.log", "a") as f:
    f.write(name + "\\n")
behaviour = Path(release, "behaviour").read_text().strip()
if behaviour == "exit":
    sys.exit("a release that cannot start")
if behaviour == "ready":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b"READY=1", os.environ["NOTIFY_SOCKET"])
time.sleep(600)
"""

# The stand-in for `python3 -m venv --system-site-packages DIR`: its pip fails
# when FAKE_PIP_FAIL is set (no network at the venue), else installs the companion above.
PYTHON = """#!/bin/sh
[ "$1 $2 $3" = "-m venv --system-site-packages" ] || exit 2
mkdir -p "$4/bin"
cat > "$4/bin/pip" <<EOF
#!/bin/sh
if [ -n "\\$FAKE_PIP_FAIL" ]; then echo "ERROR: Could not find a version (network unreachable)" >&2; exit 1; fi
for a; do case "\\$a" in *"[pi]") rel="\\${a%\\[pi\\]}" ;; esac; done
[ -n "\\$rel" ] || exit 0
sed "s|@RELEASE@|\\$rel|" "\\$rel/fake-companion" > "$4/bin/companion"
chmod 0755 "$4/bin/companion"
EOF
chmod 0755 "$4/bin/pip"
"""

RUNUSER = """#!/bin/sh
while [ "$1" != "--" ]; do shift; done
shift
exec "$@"
"""


def _exe(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


class Pi:
    """A temporary prefix, state folder and unit folder, with the stand-ins on PATH."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.prefix, self.state, self.units = tmp / "opt", tmp / "companion", tmp / "units"
        self.state.mkdir()
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        _exe(bin_dir / "python3", PYTHON)
        _exe(bin_dir / "runuser", RUNUSER)
        _exe(bin_dir / "systemctl", f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_SYSTEMCTL}" "$@"\n')
        self.env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "COMPANION_PREFIX": str(self.prefix), "COMPANION_STATE": str(self.state),
            "COMPANION_UNIT_DIR": str(self.units), "COMPANION_PYTHON": str(bin_dir / "python3"),
            "COMPANION_SETTLE_S": "1", "FAKE_STATE": str(self.state),
            "FAKE_SYSTEMCTL_DIR": str(tmp / "run"), "FAKE_SYSTEMCTL_UNITS": str(self.units),
            "FAKE_SYSTEMCTL_START_TIMEOUT": "3", "FAKE_SYSTEMCTL_STATE_ROOT": str(tmp),
            "COMPANION_BIN_DIR": str(tmp / "usr-local-bin"),
        }

    def source(self, name: str, behaviour: str) -> Path:
        """A checkout whose companion behaves so (its wrapper says which release it came with)."""
        src = self.tmp / f"src-{name}"
        (src / "systemd").mkdir(parents=True)
        for f in ("companion.service", "release.sh", "companion-cli"):
            shutil.copy(ROOT / "systemd" / f, src / "systemd" / f)
        (src / "pyproject.toml").write_text('version = "9.9"\n')
        (src / "behaviour").write_text(behaviour)
        wrapper = src / "systemd" / "companion-cli"
        wrapper.write_text(wrapper.read_text().replace("\nPREFIX=", f"\n# the wrapper of {name}\nPREFIX=", 1))
        _exe(src / "fake-companion", COMPANION)
        return src

    def bash(self, script: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(BASH), "-c", f'source "{RELEASE_SH}"; {script}'], capture_output=True,
                              text=True, env={**self.env, **env}, timeout=120, check=False)

    def update(self, name: str, behaviour: str = "ready", **env: str) -> subprocess.CompletedProcess[str]:
        """What install.sh does with a checkout: build the release, then activate it."""
        src = self.source(name, behaviour)
        return self.bash(f'build_release "{src}" {name} 0 && activate {name}', **env)

    def wrapper(self) -> str | None:
        """Which release's `companion` is on the PATH, and that its paths are this Pi's."""
        path = Path(self.env["COMPANION_BIN_DIR"]) / "companion"
        if not path.exists():
            return None
        text = path.read_text()
        assert f"\nPREFIX={self.prefix}\n" in text and f"\nSTATE={self.state}\n" in text
        assert os.access(path, os.X_OK)
        return text.split("# the wrapper of ")[1].split()[0]

    def link(self, name: str) -> str | None:
        p = self.prefix / name
        return os.readlink(p).split("/")[-1] if p.is_symlink() else None

    def active(self) -> bool:
        proc = subprocess.run(["systemctl", "is-active", "companion.service"], capture_output=True, text=True,
                              env=self.env, timeout=30, check=False)
        return proc.stdout.strip() == "active"

    def ran(self) -> list[str]:
        log = self.state / "ran.log"
        return log.read_text().split() if log.exists() else []

    def releases(self) -> set[str]:
        return {p.name for p in (self.prefix / "releases").iterdir()}

    def stop(self) -> None:
        subprocess.run(["systemctl", "stop", "companion.service"], env=self.env, timeout=30, check=False)


@pytest.fixture
def pi(tmp_path: Path):
    box = Pi(tmp_path)
    yield box
    box.stop()


def test_finding_an_update_is_installed_beside_the_running_release_and_switched_to_once_ready(pi: Pi) -> None:
    assert pi.update("r1").returncode == 0
    assert (pi.link("current"), pi.ran()) == ("r1", ["r1"])
    got = pi.update("r2")
    assert got.returncode == 0, got.stdout + got.stderr
    assert (pi.link("current"), pi.link("previous")) == ("r2", "r1")
    assert pi.active() and pi.ran() == ["r1", "r2"]
    assert pi.releases() == {"r1", "r2"}  # the previous release is kept whole, for a roll-back
    unit = (pi.units / "companion.service").read_text()
    assert f"ExecStart={pi.prefix}/current/.venv/bin/companion run" in unit


def test_finding_a_failed_install_leaves_the_running_release_running(pi: Pi) -> None:
    """No network at the venue: pip fails; the table goes on with what it had, untouched."""
    pi.update("r1")
    got = pi.update("r2", FAKE_PIP_FAIL="1")
    assert got.returncode != 0
    assert "The running release is unchanged" in got.stdout
    assert (pi.link("current"), pi.releases()) == ("r1", {"r1"})
    assert pi.active() and pi.ran() == ["r1"]  # not even restarted


@pytest.mark.parametrize("behaviour", ["exit", "hang"])
def test_finding_a_release_that_never_becomes_ready_is_rolled_back(pi: Pi, behaviour: str) -> None:
    """Exits before READY=1, or never sends it (the start times out): the
    previous release is switched back and started again."""
    pi.update("r1")
    got = pi.update("r2", behaviour)
    assert got.returncode != 0
    assert "did not become ready: back to r1" in got.stdout
    assert (pi.link("current"), pi.link("previous")) == ("r1", None)
    assert pi.active() and pi.ran() == ["r1", "r2", "r1"]
    assert pi.releases() == {"r1"}
    assert f"{pi.prefix}/current/.venv/bin/companion run" in (pi.units / "companion.service").read_text()


def test_finding_a_crash_right_after_ready_is_rolled_back_too(pi: Pi) -> None:
    """Ready, then gone within the settling time: not proved."""
    pi.update("r1")
    src = pi.source("r2", "ready")
    (src / "fake-companion").write_text(COMPANION.replace("time.sleep(600)", "time.sleep(0.2)"))
    got = pi.bash(f'build_release "{src}" r2 0 && activate r2')
    assert got.returncode != 0 and pi.link("current") == "r1" and pi.active()


def test_rollback_by_hand_goes_to_the_previous_release_and_back(pi: Pi) -> None:
    pi.update("r1")
    pi.update("r2")
    back = subprocess.run([str(BASH), str(RELEASE_SH), "rollback"], capture_output=True, text=True,
                          env=pi.env, timeout=120, check=False)
    assert back.returncode == 0, back.stdout + back.stderr
    assert (pi.link("current"), pi.link("previous")) == ("r1", "r2")
    assert pi.active() and pi.ran()[-1] == "r1"
    pi.bash("rollback")
    assert (pi.link("current"), pi.ran()[-1]) == ("r2", "r2")


def test_rollback_with_nothing_before_says_so_and_changes_nothing(pi: Pi) -> None:
    pi.update("r1")
    got = pi.bash("rollback")
    assert got.returncode != 0 and "no previous release" in got.stderr
    assert pi.link("current") == "r1" and pi.ran() == ["r1"]


def test_the_running_release_backs_the_journal_up_before_another_opens_it(pi: Pi) -> None:
    """A newer release may upgrade the journal's format, which the older one
    then refuses (the format guard): the backup is what the older one restores."""
    pi.update("r1")
    (pi.state / "journal.sqlite").write_bytes(b"")
    pi.update("r2")
    assert (pi.state / "backups.log").read_text().split() == ["r1"]


def test_an_installation_from_before_the_release_folders_becomes_the_first_release(pi: Pi) -> None:
    """The old layout: the code in the prefix, its venv in prefix/.venv, the
    unit running prefix/.venv/bin/companion."""
    old = pi.source("old", "ready")
    pi.prefix.mkdir()
    for entry in ("systemd", "pyproject.toml", "behaviour"):
        shutil.move(str(old / entry), str(pi.prefix / entry))
    (pi.prefix / "README.md").write_text("the old release\n")
    venv_bin = pi.prefix / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    _exe(venv_bin / "companion", COMPANION.replace("@RELEASE@", str(pi.prefix / "releases" / "legacy")))
    src = pi.source("r2", "ready")
    got = pi.bash(f'migrate_legacy && build_release "{src}" r2 0 && activate r2')
    assert got.returncode == 0, got.stdout + got.stderr
    assert (pi.link("current"), pi.link("previous")) == ("r2", "legacy")
    assert (pi.prefix / "releases" / "legacy" / "README.md").read_text() == "the old release\n"
    assert sorted(p.name for p in pi.prefix.iterdir()) == [".venv", "current", "previous", "releases"]
    assert pi.bash("rollback").returncode == 0
    assert pi.ran()[-1] == "legacy" and pi.active()  # its scripts still find prefix/.venv


def test_only_the_current_and_previous_releases_are_kept(pi: Pi) -> None:
    for name in ("r1", "r2", "r3"):
        pi.update(name)
    assert pi.releases() == {"r2", "r3"}


def test_a_build_cut_short_is_built_again_never_used(pi: Pi) -> None:
    """A power cut in the middle of a build leaves a folder without .complete;
    the next run starts it over rather than trusting it."""
    pi.update("r1")
    half = pi.prefix / "releases" / "r2"
    half.mkdir()
    (half / "stale").write_text("from the cut\n")
    assert pi.update("r2").returncode == 0
    assert not (half / "stale").exists() and (half / ".complete").exists()
    assert pi.link("current") == "r2"


def test_the_switch_is_one_rename(pi: Pi) -> None:
    """`current` is replaced by renaming a new link over it: at no moment is
    there no `current` (the dry run shows the commands)."""
    got = pi.bash("set_link current r9", DRY_RUN="1")
    lines = [line.strip() for line in got.stdout.splitlines()]
    assert lines == [f"$ ln -sfn releases/r9 {pi.prefix}/.current.new",
                     f"$ mv -T {pi.prefix}/.current.new {pi.prefix}/current"]


def test_finding_the_companion_on_the_path_is_the_current_release_s_after_every_switch(pi: Pi) -> None:
    """`companion` on the PATH is systemd/companion-cli filled in; a release that changes it
    (which commands run as whom) must bring its own, and a roll-back the older one back —
    install.sh alone wrote it, from the checkout, before the switch."""
    pi.update("r1")
    assert pi.wrapper() == "r1"
    pi.update("r2")
    assert pi.wrapper() == "r2"
    assert pi.bash("rollback").returncode == 0
    assert (pi.link("current"), pi.wrapper()) == ("r1", "r1")
    assert pi.bash("rollback").returncode == 0
    assert pi.wrapper() == "r2"
    got = pi.update("r3", "exit")  # never ready: back to r2, and to its wrapper
    assert got.returncode != 0 and (pi.link("current"), pi.wrapper()) == ("r2", "r2")
