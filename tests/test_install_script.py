"""systemd/install.sh: valid bash, and --dry-run shows every step and does nothing."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "systemd" / "install.sh"
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(BASH is None, reason="bash not installed")

# Commands that change the system: in a dry run none of them may run.
GUARDED = ["apt-get", "apt-cache", "groupadd", "useradd", "usermod", "install", "rm", "chown", "tar",
           "python3", "pip", "udevadm", "modprobe", "systemctl", "runuser", "find", "ln", "mv", "sync",
           "touch", "timeout", "chmod"]


def test_bash_syntax() -> None:
    subprocess.run([str(BASH), "-n", str(SCRIPT)], check=True, timeout=30)


def test_strict_mode() -> None:
    assert "set -euo pipefail" in SCRIPT.read_text(encoding="utf-8")


def dry_run(tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run --dry-run with every system-changing command replaced by a stub
    that records that it was called."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    called = tmp_path / "called"
    for name in GUARDED:
        stub = bin_dir / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "{called}"\nexit 97\n')
        stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    env = {
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "COMPANION_PREFIX": str(tmp_path / "opt"),
        "COMPANION_ETC": str(tmp_path / "etc"),
        "COMPANION_STATE": str(tmp_path / "state"),
        "COMPANION_UNIT_DIR": str(tmp_path / "unit"),
        "COMPANION_UDEV_DIR": str(tmp_path / "udev"),
        "COMPANION_MODPROBE_DIR": str(tmp_path / "modprobe"),
        "COMPANION_BIN_DIR": str(tmp_path / "bin-installed"),
        "HOME": str(tmp_path),
    }
    proc = subprocess.run([str(BASH), str(SCRIPT), "--dry-run", *extra], capture_output=True, text=True,
                          env=env, timeout=60, check=False, stdin=subprocess.DEVNULL)
    return proc, called


def test_dry_run_prints_every_step(tmp_path: Path) -> None:
    proc, _ = dry_run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for n in range(1, 10):
        assert f"==> {n}/9 " in out, f"step {n} missing:\n{out}"
    for words in [
        "apt-get update",
        "apt-get install -y --no-install-recommends python3-venv espeak-ng alsa-utils libusb-1.0-0 sqlite3 fonts-noto-cjk "
        "python3-lgpio",
        "python3 -m venv --system-site-packages",
        "/opt/releases/0.1.0-",  # a release folder per version, beside the running one
        "/.venv/bin/pip install",
        "[pi]",
        "/opt/.current.new",  # the switch: a new link renamed over `current`
        "bin/companion",  # `companion` on the PATH
        "udev/99-companion-reader.rules",
        "udevadm control --reload-rules",
        "modprobe/blacklist-companion-nfc.conf",
        "modprobe -r port100",
        "unit/companion.service",
        "systemctl daemon-reload",
        "systemctl enable companion.service",
        "systemctl restart companion.service",
        "companion doctor",
    ]:
        assert words in out, f"{words!r} not in the dry run:\n{out}"
    assert ("useradd --system" in out) or ("usermod --append --groups gpio,audio,plugdev,dialout" in out)


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    proc, called = dry_run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not called.exists(), f"a dry run ran: {called.read_text()}"
    for d in ("opt", "etc", "state", "unit", "udev", "modprobe", "bin-installed"):
        assert not (tmp_path / d).exists(), f"a dry run created {d}"


def test_no_start_leaves_the_service_stopped(tmp_path: Path) -> None:
    proc, _ = dry_run(tmp_path, "--no-start")
    assert proc.returncode == 0, proc.stderr
    assert "systemctl enable companion.service" in proc.stdout
    assert "$ systemctl restart" not in proc.stdout


def test_the_voice_extra_is_offered_and_the_narration_prerendered_before_the_service_starts(tmp_path: Path) -> None:
    proc, _ = dry_run(tmp_path)
    out = proc.stdout
    assert "[voice]" in out and "--no-voice" in out
    prerender = out.index("companion voice prerender")
    assert "runuser -u companion" in out[out.rindex("\n", 0, prerender):prerender]  # the service's user
    assert prerender < out.index("systemctl restart companion.service")  # the first game hears the cache


def test_no_voice_installs_without_the_voice_extra(tmp_path: Path) -> None:
    proc, _ = dry_run(tmp_path, "--no-voice")
    assert proc.returncode == 0, proc.stderr
    assert "[pi]" in proc.stdout and "[voice]" not in proc.stdout
    assert "companion voice prerender" in proc.stdout  # espeak-ng lines are worth caching too


def test_unknown_option_is_refused(tmp_path: Path) -> None:
    proc, called = dry_run(tmp_path, "--frobnicate")
    assert proc.returncode == 2
    assert "unknown option" in proc.stderr
    assert not called.exists()


def test_config_is_never_overwritten() -> None:
    text = SCRIPT.read_text(encoding="utf-8")
    assert 'if [ -e "$ETC/$f" ]' in text  # the guard before copying each config file
