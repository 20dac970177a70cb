"""The systemd unit, udev rule and modprobe blacklist say what the Pi needs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

SYSTEMD = Path(__file__).resolve().parent.parent / "systemd"
UNIT = SYSTEMD / "companion.service"
MAX_EXPOSURE = 3.5


def parse_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """systemd's ini dialect: keys may repeat (each adds), ``#``/``;`` start
    comments, a trailing backslash continues a line."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = pending + raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"{path.name}: {line!r} is outside any section"
        key, sep, value = line.partition("=")
        assert sep, f"{path.name}: {line!r} is not Key=value"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


@pytest.fixture(scope="module")
def unit() -> dict[str, dict[str, list[str]]]:
    return parse_unit(UNIT)


def last(unit: dict[str, dict[str, list[str]]], section: str, key: str) -> str:
    values = unit[section].get(key)
    assert values, f"[{section}] {key}= is missing"
    return values[-1]


def test_sections(unit: dict[str, dict[str, list[str]]]) -> None:
    assert set(unit) == {"Unit", "Service", "Install"}
    assert last(unit, "Install", "WantedBy") == "multi-user.target"


def test_readiness_watchdog_and_restarts(unit: dict[str, dict[str, list[str]]]) -> None:
    assert last(unit, "Service", "Type") == "notify"
    assert int(last(unit, "Service", "WatchdogSec")) >= 10  # the loop pings about every second
    assert last(unit, "Service", "Restart") == "on-failure"
    assert int(last(unit, "Unit", "StartLimitBurst")) >= 3
    assert int(last(unit, "Unit", "StartLimitIntervalSec")) > 0
    assert last(unit, "Service", "TimeoutStopSec") == "5"


def test_runs_the_venv_as_the_companion_user(unit: dict[str, dict[str, list[str]]]) -> None:
    assert last(unit, "Service", "ExecStart") == "/opt/companion/.venv/bin/companion run"
    assert last(unit, "Service", "User") == "companion"
    assert "DynamicUser" not in unit["Service"]
    groups = set(last(unit, "Service", "SupplementaryGroups").split())
    assert {"gpio", "audio", "plugdev", "dialout"} <= groups
    assert last(unit, "Service", "StateDirectory") == "companion"
    # lgpio makes its FIFO in the working directory, which must be writable.
    assert last(unit, "Service", "WorkingDirectory") == "/var/lib/companion"


def test_logs_go_to_the_journal(unit: dict[str, dict[str, list[str]]]) -> None:
    assert last(unit, "Service", "StandardOutput") == "journal"
    assert "PYTHONUNBUFFERED=1" in " ".join(unit["Service"]["Environment"])


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("NoNewPrivileges", "yes"),
        ("PrivateTmp", "yes"),
        ("PrivateNetwork", "yes"),
        ("DevicePolicy", "closed"),
        ("CapabilityBoundingSet", ""),
        ("RestrictNamespaces", "yes"),
        ("LockPersonality", "yes"),
        ("MemoryDenyWriteExecute", "yes"),
        ("ProtectKernelTunables", "yes"),
        ("ProtectKernelModules", "yes"),
        ("ProtectKernelLogs", "yes"),
        ("ProtectControlGroups", "yes"),
        ("SystemCallArchitectures", "native"),
    ],
)
def test_sandbox_setting(unit: dict[str, dict[str, list[str]]], key: str, value: str) -> None:
    assert last(unit, "Service", key) == value


def test_only_the_devices_the_table_uses(unit: dict[str, dict[str, list[str]]]) -> None:
    allowed = {v.split()[0] for v in unit["Service"]["DeviceAllow"]}
    assert allowed == {"char-usb_device", "char-gpiochip", "char-ttyAMA", "char-ttyS", "char-alsa"}


def test_socket_families_and_syscalls(unit: dict[str, dict[str, list[str]]]) -> None:
    # AF_NETLINK: libusb_init opens a udev monitor and fails without it.
    assert set(last(unit, "Service", "RestrictAddressFamilies").split()) == {"AF_UNIX", "AF_NETLINK"}
    filters = unit["Service"]["SystemCallFilter"]
    assert "@system-service" in filters


def test_header_quotes_the_exposure_score() -> None:
    head = UNIT.read_text(encoding="utf-8").split("[Unit]")[0]
    m = re.search(r"Overall exposure level for companion\.service: (\d+\.\d+)", head)
    assert m, "the unit's header comment should quote systemd-analyze's score"
    assert float(m.group(1)) <= MAX_EXPOSURE


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="systemd-analyze not installed (apt-get install systemd)")
def test_systemd_analyze_security_offline_score() -> None:
    proc = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", "--no-pager", str(UNIT)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    out = proc.stdout + proc.stderr
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", out)
    if m is None and "offline" in out.lower() and "unrecognized" in out.lower():
        pytest.skip("this systemd-analyze has no --offline (needs systemd >= 250)")
    assert m, f"no score in systemd-analyze output:\n{out[-2000:]}"
    assert float(m.group(1)) <= MAX_EXPOSURE, out[-3000:]


def test_udev_rule_covers_nfcpy_usb_readers() -> None:
    rules = (SYSTEMD / "99-companion-reader.rules").read_text(encoding="utf-8")
    ids = set(re.findall(r'ATTRS\{idVendor\}=="([0-9a-f]{4})", ATTRS\{idProduct\}=="([0-9a-f]{4})"', rules))
    assert {("054c", "06c3"), ("054c", "06c1"), ("072f", "2200")} <= ids
    for line in rules.splitlines():
        if "idVendor" in line and not line.lstrip().startswith("#"):
            assert 'GROUP="plugdev"' in line and 'MODE="0660"' in line, line


def test_udev_rule_matches_nfcpys_own_device_list() -> None:
    device = pytest.importorskip("nfc.clf.device")
    rules = (SYSTEMD / "99-companion-reader.rules").read_text(encoding="utf-8")
    ids = set(re.findall(r'ATTRS\{idVendor\}=="([0-9a-f]{4})", ATTRS\{idProduct\}=="([0-9a-f]{4})"', rules))
    nfcpy_ids = {(f"{vid:04x}", f"{pid:04x}") for vid, pid in device.usb_device_map}
    assert nfcpy_ids == ids


def test_kernel_nfc_drivers_are_blacklisted() -> None:
    text = (SYSTEMD / "blacklist-nfc.conf").read_text(encoding="utf-8")
    listed = {line.split()[1] for line in text.splitlines() if line.startswith("blacklist ")}
    assert listed == {"port100", "pn533_usb", "pn533"}


def test_the_voice_fill_may_lower_its_own_priority(unit: dict[str, dict[str, list[str]]]) -> None:
    # @resources (denied) holds setpriority and ioprio_set; the background fill's worker needs
    # them to go to nice 19 and to the idle I/O class.
    filters = unit["Service"]["SystemCallFilter"]
    assert filters.index("setpriority ioprio_set") > filters.index("~@privileged @resources")
