"""The mirror as installed: the service's sandbox (``ProtectSystem=strict``)
makes every path read-only but those the unit lists, so the docs' stick must
be among them — and ``companion doctor``, which runs outside the sandbox,
must judge the folder as the service sees it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "systemd" / "companion.service"
STICK = "/media/companion-mirror"  # where docs/build/service.md mounts the stick
MIRROR = f"{STICK}/companion"  # and the folder on it the config names

# The mirror's own code, as the service runs it: one input appended with the mirror attached.
WRITE_ONE = """
import sys
from pathlib import Path
from companion.core.events import Tap
from companion.runtime.journal import Journal
from companion.runtime.mirror import Mirror
j = Journal(Path(sys.argv[1]) / "journal.sqlite")
m = Mirror(Path(sys.argv[2]))
m.open(j.db, j.epoch)
j.mirror = m
j.append(Tap("lang/en"), 0.0, 1.0)
j.close()
print(m.problem or "written")
"""


def read_write_paths(unit_text: str) -> list[str]:
    """The unit's ReadWritePaths= entries as systemd adds them up (an empty one resets)."""
    paths: list[str] = []
    for raw in unit_text.splitlines():
        key, sep, value = raw.strip().partition("=")
        if sep and key.strip() == "ReadWritePaths":
            paths = paths + value.split() if value.strip() else []
    return paths


def under_the_sandbox(tmp_path: Path, rw_paths: list[str]) -> str:
    """Write one input to the mirror at MIRROR from a process in a mount
    namespace set up as ProtectSystem=strict and ``rw_paths`` set it up: the
    stick's mount read-only, then each listed path bound writable again
    (``-``: skipped when missing).  Only /media is remade (a tmpfs of this
    test's own, in its namespace): the host's is never touched."""
    stick = tmp_path / "the-stick"
    (stick / "companion").mkdir(parents=True)
    state = tmp_path / "state"
    binds = []
    for entry in rw_paths:
        path = entry.lstrip("-+")
        optional = entry.startswith("-")
        binds.append(f"if [ -e {path} ]; then mount --bind {path} {path} && mount -o remount,bind,rw {path}; "
                     f"else {'true' if optional else 'exit 9'}; fi")
    script = "\n".join([
        "set -e",
        "mount -t tmpfs tmpfs /media",
        f"mkdir -p {STICK}",
        f"mount --bind {stick} {STICK}",  # the stick, mounted as the docs' fstab line mounts it
        f"mount -o remount,bind,ro {STICK}",  # ProtectSystem=strict: every mount read-only …
        "mount -o remount,bind,ro /media",
        *binds,  # … but ReadWritePaths=
        f"exec {sys.executable} -c '{WRITE_ONE}' {state} {MIRROR}",
    ])
    got = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                         capture_output=True, text=True, timeout=60, check=False, cwd=ROOT)
    assert got.returncode == 0, got.stderr
    return got.stdout.strip()


def _can_unshare_mounts() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare is not installed (util-linux)"
    if not Path("/media").is_dir():
        return "no /media to mount over"
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "mount", "-t", "tmpfs", "tmpfs", "/media"],
                           capture_output=True, text=True, timeout=10, check=False)
    return None if probe.returncode == 0 else f"mount namespaces are not permitted here: {probe.stderr.strip()}"


def test_finding_the_mirror_can_be_written_as_installed(tmp_path: Path) -> None:
    """Under the unit's own ReadWritePaths (read from the file), the mirror
    the docs configure is written; the entry is optional (``-``), so a Pi
    without the stick's mount point still starts."""
    if (why := _can_unshare_mounts()) is not None:
        pytest.skip(why)
    paths = read_write_paths(UNIT.read_text(encoding="utf-8"))
    assert f"-{STICK}" in paths
    assert under_the_sandbox(tmp_path, paths) == "written"


def test_the_reproduction_bites_a_unit_without_the_sticks_path(tmp_path: Path) -> None:
    """The same run under the unit before: the stick is read-only to the service."""
    if (why := _can_unshare_mounts()) is not None:
        pytest.skip(why)
    got = under_the_sandbox(tmp_path, [])
    assert "Read-only file system" in got, got


def test_finding_doctor_judges_the_mirror_as_the_service_sees_it(tmp_path: Path) -> None:
    """Doctor runs outside the sandbox, where the folder is writable: it
    reads the installed unit and its drop-ins and fails a mirror the
    service could not write, saying how to allow it."""
    from companion.app import doctor

    folder = tmp_path / "stick"
    folder.mkdir()
    state = Path("/dev/shm") / "no-such-state"
    unit = UNIT.read_text(encoding="utf-8")
    cfg = {"journal": {"mirror": str(folder)}}
    refused = doctor.check_mirror(cfg, state, doctor.Env(service_unit=lambda: unit))
    assert refused.status == doctor.FAIL and "ProtectSystem=strict" in refused.detail, refused
    assert f"ReadWritePaths=-{folder}" in refused.fix and "systemctl edit companion" in refused.fix
    drop_in = f"{unit}\n[Service]\nReadWritePaths=-{folder}\n"
    allowed = doctor.check_mirror(cfg, state, doctor.Env(service_unit=lambda: drop_in))
    assert allowed.status != doctor.FAIL or "ProtectSystem" not in allowed.detail, allowed
    uninstalled = doctor.check_mirror(cfg, state, doctor.Env(service_unit=lambda: None))
    assert "ProtectSystem" not in uninstalled.detail
