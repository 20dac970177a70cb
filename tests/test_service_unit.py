"""The systemd unit, udev rule and modprobe blacklist say what the Pi needs."""

from __future__ import annotations

import ipaddress
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

SYSTEMD = Path(__file__).resolve().parent.parent / "systemd"
UNIT = SYSTEMD / "companion.service"
MAX_EXPOSURE = 2.0


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
    # the current release (systemd/release.sh switches the link)
    assert last(unit, "Service", "ExecStart") == "/opt/companion/current/.venv/bin/companion run"
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
    # AF_NETLINK: libusb_init opens a udev monitor and fails without it; AF_INET/AF_INET6: the pages.
    assert families(unit) == ["AF_UNIX", "AF_NETLINK", "AF_INET", "AF_INET6"]
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


# ----------------------------------------------- the pages under the unit, reachable from the LAN only
def families(unit: dict[str, dict[str, list[str]]]) -> list[str]:
    """``RestrictAddressFamilies=`` as systemd reads it: each line adds, an
    empty one resets (a leading ``~``, a deny list, is not what we write)."""
    out: list[str] = []
    for value in unit["Service"].get("RestrictAddressFamilies", []):
        assert not value.startswith("~"), "the unit lists the families it allows"
        out = out + value.split() if value else []
    return out


# systemd.resource-control(5): the symbolic names IPAddressAllow=/Deny= take.
IP_NAMES = {"any": ["0.0.0.0/0", "::/0"], "localhost": ["127.0.0.0/8", "::1/128"],
            "link-local": ["169.254.0.0/16", "fe80::/64"], "multicast": ["224.0.0.0/4", "ff00::/8"]}


def ip_list(unit: dict[str, dict[str, list[str]]], key: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    nets: list[str] = []
    for value in unit["Service"].get(key, []):
        nets = nets + [n for word in value.split() for n in IP_NAMES.get(word, [word])] if value else []
    return [ipaddress.ip_network(n) for n in nets]


def ip_allowed(unit: dict[str, dict[str, list[str]]], address: str) -> bool:
    """systemd's rule: an address on the allow list passes, else one on the
    deny list is dropped, else it passes."""
    addr = ipaddress.ip_address(address)
    if any(addr in net for net in ip_list(unit, "IPAddressAllow") if net.version == addr.version):
        return True
    return not any(addr in net for net in ip_list(unit, "IPAddressDeny") if net.version == addr.version)


LAN = ["127.0.0.1", "::1", "192.168.1.23", "10.0.0.5", "172.20.1.1", "169.254.10.10", "fe80::1",
       "fd12:3456::1"]
NOT_LAN = ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.64.0.1", "192.169.0.1", "2606:4700::1111",
           "2001:db8::1", "ff02::fb", "224.0.0.251"]


def test_the_pages_are_reachable_from_the_lan_and_nothing_else(unit: dict[str, dict[str, list[str]]]) -> None:
    """The pages serve the venue's Wi-Fi; nothing on the
    internet reaches them, and the daemon reaches nothing outside the LAN."""
    assert unit["Service"].get("PrivateNetwork", ["no"])[-1] == "no"  # the phones are on the host's network
    assert "any" in " ".join(unit["Service"]["IPAddressDeny"]).split()
    assert [a for a in LAN if not ip_allowed(unit, a)] == []
    assert [a for a in NOT_LAN if ip_allowed(unit, a)] == []


def test_descriptors_for_the_pages_connections(unit: dict[str, dict[str, list[str]]]) -> None:
    # soft = hard: the pages' ~128 connections plus the journal, the voice and the devices,
    # with headroom, and nothing can raise it.
    assert 512 <= int(last(unit, "Service", "LimitNOFILE")) <= 4096


SANDBOX = Path(__file__).resolve().parent / "unit_sandbox.py"
ROOT = Path(__file__).resolve().parent.parent
OLD_FAMILIES = ["AF_UNIX", "AF_NETLINK"]  # the unit before the pages


def _can_unshare() -> str | None:
    if shutil.which("unshare") is None or shutil.which("nsenter") is None or shutil.which("ip") is None:
        return "unshare, nsenter or ip is not installed (util-linux, iproute2)"
    if platform.machine() not in ("x86_64", "aarch64"):
        return f"the seccomp filter in tests/unit_sandbox.py knows x86_64 and aarch64, not {platform.machine()}"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True, timeout=10, check=False)
    return None if probe.returncode == 0 else f"unshare -n is not permitted here: {probe.stderr.strip()}"


def _read_event(proc: subprocess.Popen, wanted: set[str], deadline: float) -> dict:
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("{") and (ev := json.loads(line))["event"] in wanted:
            return ev
    raise AssertionError(f"no {wanted} event from the daemon")


def run_the_pages_under(tmp_path: Path, names: list[str], nofile: str | None = None) -> dict[str, object]:
    """``companion run --simulate --web 0.0.0.0:8080`` (a Pi's default) in a
    fresh network namespace under the families' seccomp filter (and the
    descriptor limit, if given); a client in
    that namespace asks for the public page, then Demagogos' card is laid on
    the (terminal's) reader.  What the pages said, what the client got, and
    how the card was taken."""
    cmd = ["unshare", "-n", "--", sys.executable, str(SANDBOX), ",".join(names), *([nofile] if nofile else []), "--",
           sys.executable, "-m", "companion.app.cli", "run", "--simulate", "--json", "--voice", "silent",
           "--web", "0.0.0.0:8080", "--state", str(tmp_path / "state")]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=ROOT)
    result: dict[str, object] = {}
    watchdog = threading.Timer(60, proc.kill)  # a silent hang ends the readline below, and the test
    watchdog.start()
    try:
        deadline = time.monotonic() + 30
        said = _read_event(proc, {"say"}, deadline)
        while said["key"] == "table.ready":
            said = _read_event(proc, {"say"}, deadline)
        result["said"] = said["key"]
        client = ("import json, urllib.request; "
                  "print(json.load(urllib.request.urlopen('http://127.0.0.1:8080/api/table', timeout=5))['phase'])")
        got = subprocess.run(["nsenter", "-t", str(proc.pid), "-n", "--", sys.executable, "-c", client],
                             capture_output=True, text=True, timeout=20, check=False)
        result["page"] = got.stdout.strip() if got.returncode == 0 else "unreachable"
        assert proc.stdin is not None
        proc.stdin.write("game/demagogos\n")
        proc.stdin.flush()
        took = _read_event(proc, {"accepted", "rejected"}, deadline)
        assert took["input"] == "game/demagogos"
        result["card"] = took["event"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert proc.stderr is not None
        result["stderr"] = proc.stderr.read()
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    return result


def test_the_pages_answer_and_demagogos_is_taken_under_the_units_restrictions(
        unit: dict[str, dict[str, list[str]]], tmp_path: Path) -> None:
    """Installed as the docs say, the pages were once always
    off and Demagogos refused.  Under the unit's own address families and
    descriptor limit (read from the file) the pages listen on every address
    and answer on loopback, which its IP list allows, and Demagogos' card is
    taken."""
    if (why := _can_unshare()) is not None:
        pytest.skip(why)
    assert ip_allowed(unit, "127.0.0.1")  # the client's address, below
    got = run_the_pages_under(tmp_path, families(unit), last(unit, "Service", "LimitNOFILE"))
    assert (got["said"], got["page"], got["card"]) == ("web.address", "idle", "accepted"), got


def test_the_reproduction_bites_the_old_units_families_turn_the_pages_off(tmp_path: Path) -> None:
    """The same run under the families of the unit before the pages: the
    filter is real — the pages are off for the reason a Pi gave, and
    Demagogos is refused at its card."""
    if (why := _can_unshare()) is not None:
        pytest.skip(why)
    got = run_the_pages_under(tmp_path, OLD_FAMILIES)
    assert (got["said"], got["page"], got["card"]) == ("web.off", "unreachable", "rejected"), got
    assert "Address family not supported by protocol" in str(got["stderr"])
