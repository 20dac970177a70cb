"""companion doctor on a fake machine: each check's OK/FAIL and its fix."""

from __future__ import annotations

import argparse
import errno
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from companion.app import doctor
from companion.app.doctor import FAIL, OK, SKIP, Env, Result
from tests.mosquitto import PASSWORD, USER, needs_mosquitto_passwd, password_broker

WARN = "WARN"  # spelled out: the finding tests must fail (not fail to import) where doctor had no WARN

APLAY_L = """**** List of PLAYBACK Hardware Devices ****
card 0: Headphones [bcm2835 Headphones], device 0: bcm2835 Headphones [bcm2835 Headphones]
  Subdevices: 8/8
"""

CFG: dict[str, Any] = {
    "state_dir": None,
    "reader": {"backend": "nfc", "device": "usb"},
    "panel": {"backend": "gpio", "pins": {}},
    "voice": {"backend": "tts", "device": "default"},
}


def pi_env(**overrides: Any) -> Env:
    """A healthy, installed Pi; each test breaks one thing."""

    def run(cmd: Sequence[str]) -> tuple[int, str]:
        assert list(cmd) == ["aplay", "-l"], cmd
        return 0, APLAY_L

    parts: dict[str, Any] = {
        "run": run,
        "which": lambda name: f"/usr/bin/{name}",
        "find_library": lambda name: None,
        "open_reader": lambda path: "Sony RC-S380/P NFC Port-100 v1.11 at usb:001:004",
        "usb_readers": lambda: [],
        "service_active": lambda: False,
        "load_pin_factory": lambda: "LGPIOFactory",
        "user_groups": lambda user: {"companion", "gpio", "audio", "plugdev", "dialout"},
        "is_pi": lambda: True,
        "exists": lambda path: path in {"/dev/gpiochip0", "/var/lib/companion"},
        "access": lambda path, mode: True,
        "write_probe": lambda path: None,
        "disk_free": lambda path: 2_000 * 1024 * 1024,
        "environ": {"STATE_DIRECTORY": "/var/lib/companion"},
        "module_loaded": lambda name: False,
    }
    parts.update(overrides)
    return Env(**parts)


def no_reader(path: str) -> str:
    raise OSError(errno.ENODEV, os.strerror(errno.ENODEV))


def run_doctor(env: Env, cfg: dict[str, Any] | None = None, skip: Sequence[str] = ()) -> tuple[int, str]:
    ns = argparse.Namespace(config=None, skip=list(skip))
    out = io.StringIO()
    checks = doctor.default_checks(ns, loader=lambda: cfg or CFG, env=env)
    return doctor.run(ns, checks=checks, out=out), out.getvalue()


def line(output: str, name: str) -> str:
    return next(x for x in output.splitlines() if name in x and x[:4] in ("OK  ", "WARN", "FAIL", "SKIP"))


# ------------------------------------------------------------ the whole run
def test_a_healthy_pi_passes_everything() -> None:
    code, out = run_doctor(pi_env())
    assert code == 0, out
    assert not [x for x in out.splitlines() if x.startswith(("FAIL", "WARN"))]
    assert out.endswith(" 0 WARN, 3 SKIP, 0 FAIL.\n")  # no mqtt (the broker, its password file), no mirror
    assert line(out, "reader").startswith("OK")
    assert "RC-S380" in line(out, "reader")
    assert "LGPIOFactory" in line(out, "GPIO")


def test_any_failure_exits_1_and_prints_its_fix() -> None:
    code, out = run_doctor(pi_env(open_reader=no_reader))
    assert code == 1
    assert line(out, "reader").startswith("FAIL")
    assert "fix: plug in the reader" in out
    assert "udev rule" in out and "port100" in out


def test_injected_checks_decide_the_exit_code() -> None:
    out = io.StringIO()
    ns = argparse.Namespace()
    assert doctor.run(ns, checks=[lambda: Result("a", OK, "fine"), lambda: Result("b", SKIP, "n/a")], out=out) == 0
    assert doctor.run(ns, checks=[lambda: Result("a", OK, "fine"), lambda: Result("b", FAIL, "no", "do x")],
                      out=out) == 1
    assert "FAIL  b: no" in out.getvalue() and "fix: do x" in out.getvalue()


def test_a_crashing_check_is_a_failure_not_a_crash() -> None:
    def broken() -> Result:
        raise RuntimeError("boom")

    out = io.StringIO()
    assert doctor.run(argparse.Namespace(), checks=[broken, lambda: Result("next", OK, "ran")], out=out) == 1
    assert "boom" in out.getvalue() and "OK    next: ran" in out.getvalue()


def test_a_check_giving_no_known_status_is_a_crashed_check() -> None:
    out = io.StringIO()
    assert doctor.run(argparse.Namespace(), checks=[lambda: Result("odd", "MAYBE", "?")], out=out) == 1
    assert "the check itself crashed" in out.getvalue() and "'MAYBE'" in out.getvalue()
    assert out.getvalue().endswith("1 check: 0 OK, 0 WARN, 0 SKIP, 1 FAIL.\n")


def test_skip_leaves_a_check_out() -> None:
    code, out = run_doctor(pi_env(open_reader=no_reader), skip=["reader"])
    assert code == 0
    assert "reader" not in out


# ------------------------------------------------------------ config
def test_config_error_names_file_and_line() -> None:
    def bad() -> dict[str, Any]:
        raise ValueError("/etc/companion/companion.yaml:12: panel.pins.next must be a whole BCM pin number")

    ns = argparse.Namespace(config=None, skip=[])
    buf = io.StringIO()
    code = doctor.run(ns, checks=doctor.default_checks(ns, loader=bad, env=pi_env()), out=buf)
    out = buf.getvalue()
    assert code == 1
    assert "companion.yaml:12" in line(out, "config")
    assert "sudo nano /etc/companion/companion.yaml" in out


def test_missing_config_module_is_reported_clearly() -> None:
    def missing() -> dict[str, Any]:
        raise ModuleNotFoundError("No module named 'companion.app.config'")

    result, cfg = doctor.check_config(missing)
    assert result.status == FAIL and cfg is None
    assert "companion.app.config" in result.detail
    assert "install.sh" in result.fix


def test_the_default_loader_uses_companion_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("companion.app.config")
    monkeypatch.setenv("COMPANION_CONFIG", str(tmp_path / "none.yaml"))
    cfg = doctor.default_loader(argparse.Namespace(config=None))()
    assert "reader" in cfg and "panel" in cfg


# ------------------------------------------------------------ state dir
def test_state_dir_from_state_directory_env() -> None:
    assert doctor.state_path({"state_dir": None}, {"STATE_DIRECTORY": "/var/lib/companion:/x"}) == \
        Path("/var/lib/companion")
    assert doctor.state_path({"state_dir": "/srv/c"}, {"STATE_DIRECTORY": "/var/lib/companion"}) == Path("/srv/c")


def test_state_dir_not_writable() -> None:
    env = pi_env(access=lambda path, mode: path != "/var/lib/companion")
    r = doctor.check_state_dir(Path("/var/lib/companion"), env)
    assert r.status == FAIL and "not writable" in r.detail and "sudo -u companion" in r.fix


def test_state_dir_low_on_space() -> None:
    r = doctor.check_state_dir(Path("/var/lib/companion"), pi_env(disk_free=lambda p: 10 * 1024 * 1024))
    assert r.status == FAIL and "10 MB" in r.detail


def test_state_dir_on_a_read_only_card() -> None:
    def read_only(path: str) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    r = doctor.check_state_dir(Path("/var/lib/companion"), pi_env(write_probe=read_only))
    assert r.status == FAIL and "Read-only" in r.detail


def test_state_dir_really_written(tmp_path: Path) -> None:
    assert doctor.check_state_dir(tmp_path, Env()).status == OK
    assert doctor.check_state_dir(tmp_path / "new", Env()).status == OK  # the daemon creates it


# ------------------------------------------------------------ reader
def test_reader_taken_by_kernel_driver() -> None:
    env = pi_env(open_reader=no_reader, usb_readers=lambda: [
        {"id": "054c:06c3", "model": "rcs380", "node": "/dev/bus/usb/001/004", "driver": "port100"}])
    r = doctor.check_reader(CFG, env)
    assert r.status == FAIL and "port100" in r.detail and "modprobe -r port100" in r.fix


def test_reader_without_udev_rule() -> None:
    env = pi_env(open_reader=no_reader,
                 usb_readers=lambda: [{"id": "054c:06c3", "model": "rcs380", "node": "/dev/bus/usb/001/004",
                                       "driver": ""}],
                 access=lambda path, mode: not path.startswith("/dev/bus/usb"))
    r = doctor.check_reader(CFG, env)
    assert r.status == FAIL and "not accessible" in r.detail and "udev rule" in r.fix


def test_reader_held_by_the_running_service_is_ok() -> None:
    env = pi_env(open_reader=no_reader, service_active=lambda: True, usb_readers=lambda: [
        {"id": "054c:06c3", "model": "rcs380", "node": "/dev/bus/usb/001/004", "driver": ""}])
    r = doctor.check_reader(CFG, env)
    assert r.status == OK and "running companion service" in r.detail


def test_pn532_on_a_disabled_uart() -> None:
    cfg = {**CFG, "reader": {"backend": "nfc", "device": "tty:AMA0:pn532"}}
    r = doctor.check_reader(cfg, pi_env(open_reader=no_reader, exists=lambda p: False))
    assert r.status == FAIL and "/dev/ttyAMA0" in r.detail and "raspi-config" in r.fix


def test_pn532_without_dialout() -> None:
    cfg = {**CFG, "reader": {"backend": "nfc", "device": "tty:S0:pn532"}}
    env = pi_env(open_reader=no_reader, exists=lambda p: True, access=lambda p, m: p != "/dev/ttyS0")
    r = doctor.check_reader(cfg, env)
    assert r.status == FAIL and "dialout" in r.fix


def test_pn532_is_not_probed_under_the_running_service() -> None:
    def must_not_open(path: str) -> str:
        raise AssertionError("opened the UART under the service")

    cfg = {**CFG, "reader": {"backend": "nfc", "device": "tty:AMA0:pn532"}}
    r = doctor.check_reader(cfg, pi_env(open_reader=must_not_open, service_active=lambda: True))
    assert r.status == SKIP and "systemctl stop companion" in r.detail


def test_simulated_reader_is_skipped() -> None:
    cfg = {**CFG, "reader": {"backend": "simulated"}}
    assert doctor.check_reader(cfg, pi_env(open_reader=no_reader)).status == SKIP


def test_usb_readers_read_from_sysfs(tmp_path: Path) -> None:
    dev = tmp_path / "1-1.3"
    (dev / "1-1.3:1.0").mkdir(parents=True)
    for name, value in {"idVendor": "054c", "idProduct": "06c3", "busnum": "1", "devnum": "4"}.items():
        (dev / name).write_text(value + "\n")
    (tmp_path / "drivers" / "port100").mkdir(parents=True)
    (dev / "1-1.3:1.0" / "driver").symlink_to(tmp_path / "drivers" / "port100")
    other = tmp_path / "1-1.1"
    other.mkdir()
    (other / "idVendor").write_text("0424\n")
    (other / "idProduct").write_text("ec00\n")
    found = doctor._usb_readers(tmp_path)
    assert found == [{"id": "054c:06c3", "model": "rcs380", "node": "/dev/bus/usb/001/004", "driver": "port100"}]


# ------------------------------------------------------------ audio, speech
def test_no_sound_card() -> None:
    env = pi_env(run=lambda cmd: (1, "aplay: device_list:274: no soundcards found...\n"))
    r = doctor.check_audio(CFG, env)
    assert r.status == FAIL and "no sound card" in r.detail
    # a PC with no sound: the fix says how to run without it
    assert "--voice console" in r.fix and "player: null" in r.fix


def test_aplay_missing() -> None:
    r = doctor.check_audio(CFG, pi_env(which=lambda n: None))
    assert r.status == FAIL and "alsa-utils" in r.fix and "--voice console" in r.fix


def test_sound_card_listed() -> None:
    r = doctor.check_audio(CFG, pi_env())
    assert r.status == OK and "Headphones" in r.detail


def test_pipewire_default_device_is_unreachable_for_a_service() -> None:
    env = pi_env(exists=lambda p: p == doctor.PIPEWIRE_ALSA_DEFAULT)
    r = doctor.check_audio(CFG, env)
    assert r.status == FAIL and "plughw:CARD=Headphones,DEV=0" in r.fix
    named = {**CFG, "voice": {"backend": "tts", "device": "plughw:CARD=Headphones,DEV=0"}}
    assert doctor.check_audio(named, env).status == OK


def test_espeak_missing() -> None:
    r = doctor.check_speech(CFG, pi_env(which=lambda n: None, find_library=lambda n: None))
    assert r.status == FAIL and "apt install espeak-ng" in r.fix
    silent = {**CFG, "voice": {"backend": "silent"}}
    assert doctor.check_speech(silent, pi_env(which=lambda n: None)).status == SKIP


def test_finding_a_speech_engine_fallback_is_a_warn_naming_what_is_missing_and_how_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Both configured engines missing, espeak-ng stands in: the table hears
    a voice (not a failure) but not the one configured, and doctor says so."""
    from voice import engines

    real = engines.importlib.util.find_spec
    monkeypatch.setattr(engines.importlib.util, "find_spec",
                        lambda n: None if n in ("pyopenjtalk", "piper") else real(n))
    cfg = {**CFG, "voice": {"backend": "tts", "device": "default", "engine": {"ja": "openjtalk", "en": "piper"}}}
    r = doctor.check_speech_engines(cfg)
    assert r.status == WARN
    assert "piper for en is not available: the Python module piper is not installed" in r.detail
    assert "openjtalk for ja is not available: the Python module pyopenjtalk is not installed" in r.detail
    assert "[voice]" in r.fix and "/opt/companion/current/.venv/bin/pip install" in r.fix
    code, out = run_doctor(pi_env(), cfg)
    assert code == 0, out  # nothing failed
    assert line(out, "speech engines").startswith("WARN  speech engines: en: espeak, ja: espeak")
    assert "fix: " in out.split("speech engines", 1)[1]


def test_speech_engines_that_are_there_are_ok() -> None:
    r = doctor.check_speech_engines({**CFG, "voice": {"backend": "tts", "engine": {"ja": "espeak"}}})
    assert (r.status, r.detail, r.fix) == (OK, "en: espeak, ja: espeak", "")


def test_finding_the_summary_counts_ok_warn_skip_and_fail_apart() -> None:
    """A SKIP is not a pass, nor a WARN: the last line counts each kind."""
    ns = argparse.Namespace()
    kinds = [(OK, "a"), (WARN, "b"), (SKIP, "c"), (SKIP, "d"), (FAIL, "e")]
    out = io.StringIO()
    checks = [lambda status=status, name=name: Result(name, status, "x", "do y") for status, name in kinds]
    assert doctor.run(ns, checks=checks, out=out) == 1
    assert out.getvalue().splitlines()[-1] == "5 checks: 1 OK, 1 WARN, 2 SKIP, 1 FAIL."
    out = io.StringIO()
    assert doctor.run(ns, checks=checks[:3], out=out) == 0  # a WARN does not fail the run
    assert out.getvalue().splitlines()[-1] == "3 checks: 1 OK, 1 WARN, 1 SKIP, 0 FAIL."
    code, out_text = run_doctor(pi_env())  # a healthy Pi without mqtt: configured
    assert code == 0 and "All checks passed" not in out_text
    assert out_text.splitlines()[-1] == "12 checks: 9 OK, 0 WARN, 3 SKIP, 0 FAIL."


# ------------------------------------------------------------ GPIO, user
def test_not_a_pi_says_the_panel_will_be_simulated() -> None:
    r = doctor.check_gpio(CFG, pi_env(is_pi=lambda: False))
    assert r.status == SKIP and "not a Pi: panel will be simulated" in r.detail


def test_gpiochip_without_permission() -> None:
    r = doctor.check_gpio(CFG, pi_env(access=lambda p, m: p != "/dev/gpiochip0"))
    assert r.status == FAIL and "usermod -aG gpio" in r.fix


def test_no_pin_factory() -> None:
    def broken() -> str:
        raise RuntimeError("Unable to load any default pin factory!")

    r = doctor.check_gpio(CFG, pi_env(load_pin_factory=broken))
    assert r.status == FAIL and "python3-lgpio" in r.fix


def test_finding_a_panel_pin_on_a_reserved_function_is_a_warn() -> None:
    """The README says doctor warns: a pin on the I2S amp's line is no OK."""
    cfg = {**CFG, "panel": {"backend": "gpio", "pins": {"buzzer": 19}}}
    r = doctor.check_gpio(cfg, pi_env())
    assert r.status == WARN and "buzzer is on GPIO19, which is I2S LRCLK" in r.detail
    assert "panel.pins" in r.fix
    assert doctor.check_gpio(CFG, pi_env()).status == OK


def test_user_missing_groups() -> None:
    r = doctor.check_user(pi_env(user_groups=lambda u: {"companion", "audio"}))
    assert r.status == FAIL and "gpio" in r.detail and "usermod -aG gpio,plugdev,dialout companion" in r.fix


def test_user_missing_on_a_pi() -> None:
    assert doctor.check_user(pi_env(user_groups=lambda u: None)).status == FAIL
    assert doctor.check_user(pi_env(user_groups=lambda u: None, is_pi=lambda: False)).status == SKIP


def test_parser_accepts_skip() -> None:
    p = argparse.ArgumentParser()
    doctor.configure_parser(p)
    assert p.parse_args(["--skip", "reader", "--skip", "gpio"]).skip == ["reader", "gpio"]


# ------------------------------------------------------------ mqtt (a real mosquitto)
def mqtt_cfg(**mqtt: Any) -> dict[str, Any]:
    from companion.app import config

    return config.load([], {"mqtt": mqtt})


def test_doctor_says_mqtt_is_off_when_no_broker_is_named() -> None:
    r = doctor.check_mqtt(mqtt_cfg(), pi_env())
    assert (r.status, r.detail) == (SKIP, "off (mqtt.broker is null); the table is on no broker")
    assert doctor.check_mqtt(CFG, pi_env()).status == SKIP  # a config without mqtt: at all
    code, out = run_doctor(pi_env())
    assert code == 0 and "SKIP  mqtt: off" in out


def test_doctor_reaches_a_broker_that_is_up(broker: Any) -> None:
    r = doctor.check_mqtt(mqtt_cfg(broker=broker.address, table_id="t-1"), Env())
    assert (r.status, r.detail) == (OK, f"the broker at {broker.address} lets table t-1 in")


def test_doctor_says_the_broker_is_down_and_how_to_fix_it() -> None:
    from tests.mosquitto import free_port

    address = f"127.0.0.1:{free_port()}"  # nobody listens there
    r = doctor.check_mqtt(mqtt_cfg(broker=address), Env())
    assert r.status == FAIL and r.detail.startswith(f"cannot reach the broker at {address}: ")
    assert r.fix == doctor.BROKER_FIX


@needs_mosquitto_passwd
def test_doctor_says_the_broker_refuses_our_credentials(tmp_path: Path, readable: Path) -> None:
    b = password_broker(tmp_path, readable)
    try:
        (tmp_path / "pw").write_text(PASSWORD + "\n", encoding="utf-8")
        (tmp_path / "wrong").write_text("nope\n", encoding="utf-8")
        anonymous = doctor.check_mqtt(mqtt_cfg(broker=b.address), Env())
        wrong = doctor.check_mqtt(mqtt_cfg(broker=b.address, username=USER, password_file=str(tmp_path / "wrong")),
                                  Env())
        right = doctor.check_mqtt(mqtt_cfg(broker=b.address, username=USER, password_file=str(tmp_path / "pw")),
                                  Env())
    finally:
        b.stop()
    assert anonymous.status == FAIL and f"the broker at {b.address} refused us (anonymously): " in anonymous.detail
    assert wrong.status == FAIL and f"refused us (as {USER}): " in wrong.detail
    assert "mqtt.username" in wrong.fix and "mosquitto_passwd" in wrong.fix
    assert right.status == OK and right.detail.endswith(f"in as {USER}")


def test_doctor_says_a_password_or_tls_file_is_unreadable(tmp_path: Path) -> None:
    never = Env(mqtt_connect=lambda conf: pytest.fail("connected although a file cannot be read"))
    missing = str(tmp_path / "missing")
    r = doctor.check_mqtt(mqtt_cfg(broker="127.0.0.1", username=USER, password_file=missing), never)
    assert r.status == FAIL and r.detail.startswith(f"cannot read password_file {missing}: ")
    assert f"chmod 640 {missing}" in r.fix
    r = doctor.check_mqtt(mqtt_cfg(broker="127.0.0.1", tls={"ca_file": missing}), never)
    assert (r.status, r.detail) == (FAIL, f"cannot read mqtt.tls.ca_file {missing}")
    assert "mqtt.tls.ca_file" in r.fix


def test_every_warn_and_fail_names_its_section_of_the_troubleshooting_page() -> None:
    """Each check's name leads to a section that exists on docs/build/troubleshooting.md (and its
    Japanese twin), and a WARN or FAIL prints it."""
    import re

    root = Path(__file__).resolve().parent.parent
    names = set(re.findall(r'(?:Result\(|name = f?)"([^"{]+)', (root / "companion/app/doctor.py").read_text()))
    assert {"config", "journal", "GPIO panel", "mqtt", "speech engines", "audio output"} <= names
    for page in ("troubleshooting.md", "troubleshooting.ja.md"):
        ids = set(re.findall(r"\{#([\w-]+)\}", (root / "docs/build" / page).read_text(encoding="utf-8")))
        for name in names | {"reader (usb)", "state directory /var/lib/companion", "user companion", "journal mirror"}:
            assert doctor.troubleshooting(name).split("#")[1] in ids, (page, name)
    out = io.StringIO()
    checks = [lambda: doctor.Result("reader (usb)", doctor.FAIL, "no supported USB reader is plugged in", "plug it in")]
    doctor.run(argparse.Namespace(skip=[]), checks=checks, out=out)
    assert "      see: docs/build/troubleshooting.md#reader" in out.getvalue().splitlines()
