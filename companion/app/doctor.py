"""``companion doctor`` — check what a games night needs and say how to fix it.

Each check prints ``OK``, ``WARN`` (works, but short of what is configured or
advised: a fallback, a risky setting; with a fix), ``FAIL`` (with a fix in
plain words) or ``SKIP`` (does not apply here, e.g. GPIO off a Pi); the last
line counts each kind apart.  The exit code is 0 when nothing failed (a WARN
does not stop the table), 1 otherwise.  Run it as the service user to see what the service
sees: on an installed table ``companion doctor`` does that (the ``companion`` on
the PATH runs the table's commands as the service's user; install.sh runs it as
its last step).

Every check reads the machine through an ``Env`` whose parts tests replace.
"""

from __future__ import annotations

import argparse
import ctypes.util
import errno
import grp
import os
import pwd
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from companion.app.service_unit import installed_text, sandbox_refuses

SERVICE_USER = "companion"
SERVICE_GROUPS = ("gpio", "audio", "plugdev", "dialout")
MIN_FREE_MB = 50
PIPEWIRE_ALSA_DEFAULT = "/etc/alsa/conf.d/99-pipewire-default.conf"
READER_FIX = ("plug in the reader; run `sudo bash systemd/install.sh` for the udev rule; "
              "unload the kernel driver: `sudo modprobe -r port100 pn533_usb pn533`")

OK, WARN, SKIP, FAIL = "OK", "WARN", "SKIP", "FAIL"
STATUSES = (OK, WARN, SKIP, FAIL)  # the order the summary counts them in

# Every WARN and FAIL names the section of the troubleshooting page that explains it: the
# section's id is the check's name up to its first space or "(" (``reader (usb)`` → reader),
# except where one section serves several checks.
TROUBLESHOOTING = "docs/build/troubleshooting.md"
SECTIONS = {"state": "state-directory", "audio": "audio-output", "gpio": "gpio-panel", "user": "service-user"}


def troubleshooting(name: str) -> str:
    """Where the troubleshooting page explains the check called ``name``."""
    word = name.lower().replace("(", " ").split()[0]
    if name.lower().startswith("journal mirror"):
        word = "journal-mirror"
    return f"{TROUBLESHOOTING}#{SECTIONS.get(word, word)}"


@dataclass(frozen=True)
class Result:
    name: str
    status: str  # one of STATUSES
    detail: str
    fix: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:  # a check's own bug: run() reports it as a crashed check
            raise ValueError(f"doctor check {self.name!r}: status {self.status!r} is not one of {STATUSES}")


Check = Callable[[], Result]
Loader = Callable[[], Mapping[str, Any]]


# --------------------------------------------------------------- the machine
def _run(cmd: Sequence[str]) -> tuple[int, str]:
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=20, check=False)
    except FileNotFoundError:
        return 127, f"{cmd[0]}: not installed"
    except (OSError, subprocess.SubprocessError) as e:
        return 126, str(e)
    return proc.returncode, proc.stdout + proc.stderr


def _open_reader(path: str) -> str:
    """Open and close the reader with nfcpy; its description, or OSError."""
    import nfc

    clf = nfc.ContactlessFrontend(path)  # raises IOError (ENODEV, EACCES, EBUSY)
    try:
        return str(clf)
    finally:
        clf.close()


def _load_pin_factory() -> str:
    """gpiozero's own choice of pin factory (lgpio on Pi OS); its class name.
    Loads only the factory (opens /dev/gpiochip*) and claims no pin, so it
    is safe while the service runs."""
    import tempfile

    from gpiozero import Device

    # lgpio makes a FIFO in the current directory when imported, and doctor
    # may be started from one its user cannot write (sudo -u companion ...).
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="companion-doctor-") as scratch, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        os.chdir(scratch)
        try:
            factory = Device._default_pin_factory()
        finally:
            os.chdir(here)
    try:
        return type(factory).__name__
    finally:
        factory.close()


def _usb_readers(sys_root: Path = Path("/sys/bus/usb/devices")) -> list[dict[str, str]]:
    """USB devices nfcpy has a driver for: vid:pid, model, device node, and the
    kernel driver bound to interface 0, if any."""
    try:
        from nfc.clf.device import usb_device_map
        known = {(f"{v:04x}", f"{p:04x}"): name for (v, p), name in usb_device_map.items()}
    except ImportError:
        known = {("054c", "06c3"): "rcs380", ("054c", "06c1"): "rcs380", ("072f", "2200"): "acr122"}
    found = []
    for dev in sorted(sys_root.glob("*")):
        try:
            vid = (dev / "idVendor").read_text().strip()
            pid = (dev / "idProduct").read_text().strip()
        except OSError:
            continue
        if (vid, pid) not in known:
            continue
        entry = {"id": f"{vid}:{pid}", "model": known[(vid, pid)], "node": "", "driver": ""}
        try:
            bus = int((dev / "busnum").read_text())
            num = int((dev / "devnum").read_text())
            entry["node"] = f"/dev/bus/usb/{bus:03d}/{num:03d}"
        except (OSError, ValueError):
            pass
        driver = dev / f"{dev.name}:1.0" / "driver"
        if driver.exists():
            entry["driver"] = driver.resolve().name
        found.append(entry)
    return found


def _write_probe(directory: str) -> None:
    """Really create, fsync and delete a file (access() says yes to root even
    on a card the kernel has remounted read-only)."""
    import tempfile

    with tempfile.NamedTemporaryFile(dir=directory, prefix=".doctor-") as f:
        f.write(b"ok")
        f.flush()
        os.fsync(f.fileno())


def _service_active() -> bool:
    return _run(["systemctl", "is-active", "--quiet", "companion.service"])[0] == 0


def _user_groups(user: str) -> set[str] | None:
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        return None
    return {grp.getgrgid(g).gr_name for g in os.getgrouplist(user, pw.pw_gid)}


def _is_pi() -> bool:
    from hardware.panel import is_raspberry_pi

    return is_raspberry_pi()


@dataclass
class Env:
    """What the checks look at; tests swap the parts."""

    run: Callable[[Sequence[str]], tuple[int, str]] = _run
    which: Callable[[str], str | None] = shutil.which
    find_library: Callable[[str], str | None] = ctypes.util.find_library
    open_reader: Callable[[str], str] = _open_reader
    usb_readers: Callable[[], list[dict[str, str]]] = _usb_readers
    service_active: Callable[[], bool] = _service_active
    load_pin_factory: Callable[[], str] = _load_pin_factory
    user_groups: Callable[[str], set[str] | None] = _user_groups
    is_pi: Callable[[], bool] = _is_pi
    exists: Callable[[str], bool] = os.path.exists
    access: Callable[[str, int], bool] = os.access
    write_probe: Callable[[str], None] = _write_probe
    disk_free: Callable[[str], int] = field(default=lambda p: shutil.disk_usage(p).free)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    module_loaded: Callable[[str], bool] = field(default=lambda m: Path("/sys/module", m).exists())
    mqtt_connect: Callable[[Any], str | None] = field(default=lambda conf: _mqtt_connect(conf))
    service_unit: Callable[[], str | None] = installed_text  # the installed unit with its drop-ins


# --------------------------------------------------------------- checks
def check_config(loader: Loader) -> tuple[Result, Mapping[str, Any] | None]:
    try:
        cfg = loader()
    except ModuleNotFoundError as e:
        return Result("config", FAIL, f"cannot load the config: {e}",
                      "this install is incomplete: run `sudo bash systemd/install.sh` again"), None
    except Exception as e:  # noqa: BLE001 - ConfigError says file and line; anything else is a bug to show
        return Result("config", FAIL, str(e),
                      "edit the file and line named above (sudo nano /etc/companion/companion.yaml), "
                      "then `sudo systemctl restart companion`"), None
    return Result("config", OK, "loads"), cfg


def state_path(cfg: Mapping[str, Any] | None, environ: Mapping[str, str]) -> Path:
    """Where the daemon keeps its journal (same rule as companion.app.wiring)."""
    configured = (cfg or {}).get("state_dir")
    return Path(configured or environ.get("STATE_DIRECTORY", "").split(":")[0] or "state")


def check_state_dir(path: Path, env: Env) -> Result:
    name = f"state directory {path}"
    if not env.exists(str(path)):
        parent = next((p for p in path.absolute().parents if env.exists(str(p))), Path("/"))
        if env.access(str(parent), os.W_OK | os.X_OK):
            return Result(name, OK, f"does not exist yet; the daemon will create it in {parent}")
        return Result(name, FAIL, "does not exist",
                      "run `sudo bash systemd/install.sh` (systemd creates /var/lib/companion for the service), "
                      "or set state_dir in the config")
    if not env.access(str(path), os.W_OK | os.X_OK):
        return Result(name, FAIL, "not writable by this user",
                      f"run doctor as the service user: sudo -u {SERVICE_USER} companion doctor; "
                      f"or `sudo chown -R {SERVICE_USER}: {path}`")
    try:
        env.write_probe(str(path))
    except OSError as e:
        return Result(name, FAIL, f"cannot write a file there ({e.strerror or e})",
                      "the SD card may be full or read-only after an error: `dmesg | tail`, then reboot")
    try:
        free_mb = env.disk_free(str(path)) // (1024 * 1024)
    except OSError as e:
        return Result(name, FAIL, f"cannot read free space: {e}", "check the SD card")
    if free_mb < MIN_FREE_MB:
        return Result(name, FAIL, f"only {free_mb} MB free",
                      "free some space on the SD card (e.g. `sudo apt clean`, `sudo journalctl --vacuum-size=50M`)")
    return Result(name, OK, f"writable, {free_mb} MB free")


def check_journal(path: Path) -> Result:
    """The journal's integrity (SQLite's integrity_check, and its WAL's
    checksums) and the backup a recovery would use; reads only."""
    from companion.runtime.backups import backup_problem, backups, newest_intact_backup
    from companion.runtime.journal_check import diagnose

    journal = path / "journal.sqlite"
    backup = newest_intact_backup(journal, look_only=True)
    using = f"backup it would use: {backup.name}" if backup else "no backup yet (one is made after each scored round and game)"
    damaged = [b.name for b in backups(journal) if backup_problem(b)]
    if not journal.exists() and not Path(str(journal) + "-wal").exists():
        return Result("journal", OK, f"none yet; {using}")
    problem = diagnose(journal, deep=True)
    if problem:
        return Result("journal", FAIL, f"{journal} is damaged: {problem}; {using}",
                      "restart the service (`sudo systemctl restart companion`): it keeps the damaged file "
                      "aside, recovers what it can and says so at the table")
    note = f"; damaged backups skipped: {', '.join(damaged)}" if damaged else ""
    return Result("journal", OK, f"intact; {using}{note}")


def check_mirror(cfg: Mapping[str, Any] | None, state: Path, env: Env) -> Result:
    """The journal's mirror (``journal: mirror: DIR``): there, writable (as
    the installed service sees it, in its sandbox), on another device than
    the journal, and how far its file goes; reads only."""
    from companion.runtime import mirror_file
    from companion.runtime.journal import epoch_at
    from companion.runtime.journal_identity import identity_at

    folder = ((cfg or {}).get("journal") or {}).get("mirror")
    if not folder:
        return Result("journal mirror", SKIP, "journal.mirror is not set (a second copy of every input on a USB "
                      "stick: nothing is lost if the SD card fails)")
    name = f"journal mirror {folder}"
    if not os.path.isdir(folder):
        return Result(name, FAIL, "is not there: the table runs on the journal alone",
                      f"plug in and mount the stick, then make the folder once: mkdir -p {folder} && "
                      f"sudo chown {SERVICE_USER}: {folder}; restart the service")
    try:
        env.write_probe(folder)
    except OSError as e:
        return Result(name, FAIL, f"cannot write a file there ({e.strerror or e})",
                      f"`sudo chown {SERVICE_USER}: {folder}`, or check the stick (`dmesg | tail`)")
    unit = env.service_unit()
    if unit is not None and (why := sandbox_refuses(unit, folder)) is not None:
        return Result(name, FAIL, why,
                      f"`sudo systemctl edit companion`, add the two lines [Service] and "
                      f"ReadWritePaths=-{folder}, then `sudo systemctl restart companion`")
    try:
        if os.stat(folder).st_dev == os.stat(state if state.exists() else state.absolute().parent).st_dev:
            return Result(name, FAIL, f"is on the same device as the journal ({state}): it would fail with it",
                          "point journal.mirror at a folder on a USB stick or a second card")
    except OSError:
        pass
    journal = state / "journal.sqlite"
    ident = identity_at(journal) if journal.exists() else None
    found = mirror_file.found(Path(folder), ident, epoch_at(journal)) if ident is not None else None
    if found is None:
        return Result(name, OK, "writable, on its own device; no mirror file of this journal yet (made at the next start)")
    try:
        last = mirror_file.last_record(found)
    except OSError as e:
        return Result(name, FAIL, f"{found.name} cannot be read ({e.strerror or e})", "check the stick (`dmesg | tail`)")
    held = f"{found.name} holds inputs up to {last['seq']}" if last else f"{found.name} holds no input yet"
    return Result(name, OK, f"writable, on its own device; {held}")


def check_reader(cfg: Mapping[str, Any] | None, env: Env) -> Result:
    reader = dict((cfg or {}).get("reader") or {})
    if reader.get("backend") == "simulated":
        return Result("reader", SKIP, "reader.backend is simulated")
    path = str(reader.get("device") or "usb")
    name = f"reader ({path})"
    if path.startswith("tty") and env.service_active():
        # A serial port is not opened exclusively: probing it now would talk
        # over the service's own conversation with the PN532.
        return Result(name, SKIP, "the running companion service owns the serial port; "
                      "to test it: sudo systemctl stop companion, run doctor, sudo systemctl start companion")
    try:
        description = env.open_reader(path)
        return Result(name, OK, f"opened and closed {description}")
    except ImportError as e:
        return Result(name, FAIL, f"nfcpy is not installed ({e})", "run `sudo bash systemd/install.sh` again")
    except OSError as e:
        failure = e
    if path.startswith("tty"):
        port = "/dev/tty" + (path.split(":") + [""])[1]
        if not env.exists(port):
            return Result(name, FAIL, f"{port} does not exist",
                          "enable the serial port: sudo raspi-config → Interface Options → Serial Port: "
                          "login shell No, hardware Yes; then reboot")
        if not env.access(port, os.R_OK | os.W_OK):
            return Result(name, FAIL, f"no permission to open {port}",
                          f"sudo usermod -aG dialout {SERVICE_USER} (install.sh does it)")
        return Result(name, FAIL, f"no PN532 answered on {port} ({failure})",
                      "check the wiring (TX↔RX crossed, 3V3, GND) and the board's UART/HSU mode switches")
    present = env.usb_readers()
    if not present:
        return Result(name, FAIL, "no supported USB reader is plugged in", READER_FIX)
    r = present[0]
    what = f"{r['model']} {r['id']}"
    if r.get("driver"):
        return Result(name, FAIL, f"{what} is taken by the kernel driver {r['driver']}",
                      f"sudo modprobe -r {r['driver']} (install.sh blacklists port100 and pn533 for good)")
    if r.get("node") and not env.access(r["node"], os.R_OK | os.W_OK):
        return Result(name, FAIL, f"{what} is plugged in but {r['node']} is not accessible",
                      "run `sudo bash systemd/install.sh` for the udev rule, then unplug and replug the reader")
    if env.service_active():
        return Result(name, OK, f"{what} is plugged in and in use by the running companion service")
    if any(env.module_loaded(m) for m in ("port100", "pn533_usb")):
        return Result(name, FAIL, f"{what} is plugged in but could not be opened ({failure})", READER_FIX)
    busy = getattr(failure, "errno", None) == errno.EBUSY
    return Result(name, FAIL, f"{what} is plugged in but could not be opened ({failure})",
                  "another program has it (stop it)" if busy else READER_FIX)


# No sound on this machine (a PC, a container) need not stop anyone trying the companion.
NO_SOUND_HINT = ("; or, without sound: `companion run --simulate --voice console`, "
                 "or `voice: {player: null}` in the config")


def check_audio(cfg: Mapping[str, Any] | None, env: Env) -> Result:
    if env.which("aplay") is None:
        return Result("audio output", FAIL, "aplay is missing", "sudo apt install alsa-utils" + NO_SOUND_HINT)
    code, out = env.run(["aplay", "-l"])
    cards = [line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("card ")]
    if code != 0 or not cards:
        return Result("audio output", FAIL, "aplay -l lists no sound card",
                      f"plug in a USB speaker or sound card, or an I2S amp with its dtoverlay; "
                      f"and `sudo usermod -aG audio {SERVICE_USER}`" + NO_SOUND_HINT)
    device = str(((cfg or {}).get("voice") or {}).get("device") or "default")
    if device == "default" and env.exists(PIPEWIRE_ALSA_DEFAULT):
        # Pi OS desktop routes ALSA's "default" to the desktop user's PipeWire,
        # which a system service cannot reach: the narrator would be silent.
        short = cards[0].split("[", 1)[0].strip()
        return Result("audio output", FAIL, "ALSA device 'default' goes through the desktop's PipeWire",
                      f"set voice.device: plughw:CARD={short},DEV=0 in /etc/companion/companion.yaml "
                      "(`aplay -L` lists the names), then `sudo systemctl restart companion`")
    return Result("audio output", OK, f"{len(cards)} card(s): {cards[0]}; ALSA device {device!r}")


def check_speech(cfg: Mapping[str, Any] | None, env: Env) -> Result:
    backend = ((cfg or {}).get("voice") or {}).get("backend", "tts")
    if backend != "tts":
        return Result("speech (espeak-ng)", SKIP, f"voice.backend is {backend}")
    if env.which("espeak-ng") is None and env.find_library("espeak-ng") is None:
        return Result("speech (espeak-ng)", FAIL, "espeak-ng is not installed", "sudo apt install espeak-ng")
    return Result("speech (espeak-ng)", OK, "installed")


VOICE_FIX = ("install what is named above into the service's venv: `sudo /opt/companion/current/.venv/bin/pip install "
             "'/opt/companion/current[voice]'` (install.sh does it unless --no-voice), or correct voice.engine in "
             "the config; then `sudo systemctl restart companion`")


def check_speech_engines(cfg: Mapping[str, Any] | None) -> Result:
    """Which engine speaks each language; a configured one that is missing is
    a WARN naming it and how to get it (the table still hears espeak-ng, so
    not a failure, but not the voice configured)."""
    voice_cfg = (cfg or {}).get("voice") or {}
    if voice_cfg.get("backend", "tts") != "tts":
        return Result("speech engines", SKIP, f"voice.backend is {voice_cfg.get('backend')}")
    from voice.render import RenderSettings

    settings = RenderSettings.from_config(voice_cfg)
    langs = sorted({*(voice_cfg.get("engine") or {}), "en", "ja"})
    detail = ", ".join(f"{lang}: {settings.engine_for(lang)}" for lang in langs)
    if settings.fallbacks:
        return Result("speech engines", WARN, detail + " — " + "; ".join(settings.fallbacks), VOICE_FIX)
    return Result("speech engines", OK, detail)


def check_gpio(cfg: Mapping[str, Any] | None, env: Env) -> Result:
    panel = dict((cfg or {}).get("panel") or {})
    if panel.get("backend") == "mock":
        return Result("GPIO panel", SKIP, "panel.backend is mock (simulated)")
    if not env.is_pi():
        return Result("GPIO panel", SKIP, "not a Pi: panel will be simulated (companion run --simulate)")
    chips = [c for c in ("/dev/gpiochip0", "/dev/gpiochip4") if env.exists(c)]
    if not chips:
        return Result("GPIO panel", FAIL, "no /dev/gpiochip0", "update Raspberry Pi OS (bookworm) and reboot")
    denied = [c for c in chips if not env.access(c, os.R_OK | os.W_OK)]
    if denied:
        return Result("GPIO panel", FAIL, f"no permission to open {', '.join(denied)}",
                      f"sudo usermod -aG gpio {SERVICE_USER} (install.sh does it), then restart the service")
    try:
        factory = env.load_pin_factory()
    except Exception as e:  # noqa: BLE001 - gpiozero raises BadPinFactory and friends
        return Result("GPIO panel", FAIL, f"gpiozero found no pin factory ({e})",
                      "sudo apt install python3-lgpio, and keep the venv's --system-site-packages "
                      "(install.sh does both)")
    detail = f"gpiozero uses {factory}"
    try:
        from hardware.panel import SETTINGS, PanelConfig, pin_clashes

        # the device's own part of the section (the backend is the wiring's)
        clashes = pin_clashes(PanelConfig.from_dict({k: v for k, v in panel.items() if k in SETTINGS}).pins)
    except ValueError as e:
        return Result("GPIO panel", FAIL, str(e), "fix panel.pins in the config")
    if clashes:  # works, unless that function is wanted too
        return Result("GPIO panel", WARN, f"{detail}; " + "; ".join(clashes),
                      "move the pin elsewhere in panel.pins unless nothing uses that function (docs/build/wiring.md, default pins)")
    return Result("GPIO panel", OK, detail)


def check_user(env: Env) -> Result:
    name = f"user {SERVICE_USER}"
    groups = env.user_groups(SERVICE_USER)
    if groups is None:
        if not env.is_pi():
            return Result(name, SKIP, "no service user here (not installed as a service)")
        return Result(name, FAIL, "does not exist", "run `sudo bash systemd/install.sh`")
    missing = [g for g in SERVICE_GROUPS if g not in groups]
    if missing:
        return Result(name, FAIL, f"not in group(s) {', '.join(missing)}",
                      f"sudo usermod -aG {','.join(missing)} {SERVICE_USER} && sudo systemctl restart companion")
    return Result(name, OK, f"in groups {', '.join(SERVICE_GROUPS)}")


MQTT_TIMEOUT_S = 5.0
BROKER_FIX = ("start the broker (`sudo systemctl start mosquitto` where it runs) or correct mqtt.broker "
              "(host[:port]; 1883, 8883 with tls); the table plays on without it meanwhile")


def _mqtt_connect(conf: Any, timeout_s: float = MQTT_TIMEOUT_S) -> str | None:
    """Connect to the broker as the daemon's link would (its client factory,
    MQTT 5, another client id, no last will), and leave at once.  None when the
    broker said yes; its refusal (the CONNACK's reason) otherwise.  OSError:
    no TCP (or TLS) connection; TimeoutError: no CONNACK within ``timeout_s``."""
    import time

    from mqtt.link import paho_client

    client = paho_client(conf, 5, role="doctor")  # OSError/ValueError: a TLS file
    client.connect_timeout = timeout_s
    answer: list[Any] = []
    client.on_connect = lambda _c, _u, _f, reason, _p: answer.append(reason)
    deadline = time.monotonic() + timeout_s
    client.connect(conf.host, conf.port, keepalive=max(5, int(timeout_s) * 2))
    try:
        while not answer and time.monotonic() < deadline:
            if client.loop(timeout=0.1) != 0:  # the broker hung up before answering
                break
    finally:
        client.disconnect()
    if not answer:
        raise TimeoutError(f"no answer to CONNECT within {timeout_s:g} s")
    return str(answer[0]) if answer[0].is_failure else None


def check_mqtt(cfg: Mapping[str, Any] | None, env: Env) -> Result:
    """``mqtt:`` names a broker: can the table reach it and log in?"""
    name = "mqtt"
    if cfg is None:
        return Result(name, SKIP, "the config did not load")
    from mqtt import settings as mqtt_settings

    if not mqtt_settings.enabled(cfg):
        return Result(name, SKIP, "off (mqtt.broker is null); the table is on no broker")
    from mqtt.link import LinkConfig, TlsFileError

    conf, problem = LinkConfig.from_cfg(cfg)
    where = f"{conf.host}:{conf.port}"
    if problem is not None:
        file = cfg["mqtt"]["password_file"]
        return Result(name, FAIL, problem.removeprefix("mqtt: "),
                      f"make {file} readable by the service user ({SERVICE_USER}), e.g. "
                      f"`sudo chgrp {SERVICE_USER} {file} && sudo chmod 640 {file}`, or correct mqtt.password_file")
    for key in mqtt_settings.TLS_KEYS:
        path = (conf.tls or {}).get(key)
        if path and not env.access(path, os.R_OK):
            return Result(name, FAIL, f"cannot read mqtt.tls.{key} {path}",
                          f"make {path} readable by the service user ({SERVICE_USER}), or correct mqtt.tls.{key}")
    try:
        refused = env.mqtt_connect(conf)
    except ModuleNotFoundError as e:
        return Result(name, FAIL, f"paho-mqtt is not installed ({e})", "run `sudo bash systemd/install.sh` again")
    except TimeoutError as e:
        return Result(name, FAIL, f"the broker at {where} did not answer: {e}",
                      "check mqtt.broker's address and port, a firewall between, and whether the broker "
                      "expects TLS (mqtt.tls)")
    except TlsFileError as e:  # readable, and yet not what TLS needs (junk, an empty file)
        return Result(name, FAIL, str(e), "give mqtt.tls the CA certificate (PEM) that signed the broker's, "
                                          "or correct the path")
    except (OSError, ValueError) as e:  # refused, unreachable, no such host, TLS
        import ssl

        if isinstance(e, ssl.SSLError):
            return Result(name, FAIL, f"TLS with the broker at {where} failed: {e}",
                          "check that mqtt.tls.ca_file vouches for the broker's certificate and that the "
                          "broker's port speaks TLS")
        return Result(name, FAIL, f"cannot reach the broker at {where}: {getattr(e, 'strerror', None) or e}",
                      BROKER_FIX)
    if refused is not None:
        who = f"as {conf.username}" if conf.username else "anonymously"
        return Result(name, FAIL, f"the broker at {where} refused us ({who}): {refused}",
                      "check mqtt.username and the password in mqtt.password_file against the broker's "
                      "password file (mosquitto_passwd), and its ACL (docs/mqtt/acl)")
    return Result(name, OK, f"the broker at {where} lets table {conf.table_id} in"
                            + (f" as {conf.username}" if conf.username else "") + (" over TLS" if conf.tls else ""))


def check_mqtt_password_file(cfg: Mapping[str, Any] | None, env: Env) -> Result:
    """``mqtt.password_file``: may everyone on the machine read it?"""
    name = "mqtt password_file"
    path = ((cfg or {}).get("mqtt") or {}).get("password_file")
    if cfg is None or not path:
        return Result(name, SKIP, "no password file (mqtt.password_file is null)")
    from mqtt import settings as mqtt_settings

    exposed = mqtt_settings.password_file_exposed(cfg)
    if exposed is not None:
        return Result(name, WARN, exposed, f"`sudo chgrp {SERVICE_USER} {path} && sudo chmod 640 {path}`")
    return Result(name, OK, f"{path} is not readable by everyone")


# --------------------------------------------------------------- command
CHECK_NAMES = ("config", "state", "journal", "mirror", "reader", "audio", "speech", "gpio", "user", "mqtt")


def configure_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--skip", action="append", choices=CHECK_NAMES, default=[],
                        help="leave a check out (may be repeated)")


def default_loader(args: argparse.Namespace) -> Loader:
    """Loads the config the way the daemon does; a missing companion.app.config
    module is reported as such, not as a crash."""

    def load() -> Mapping[str, Any]:
        from companion.app import config  # lazily: doctor must work even if it is broken

        paths = list(config.default_paths()) + list(getattr(args, "config", None) or [])
        return config.load(paths)

    return load


def default_checks(args: argparse.Namespace, *, loader: Loader | None = None,
                   env: Env | None = None) -> list[Check]:
    env = env or Env()
    skip = set(getattr(args, "skip", None) or ())
    box: dict[str, Mapping[str, Any] | None] = {"cfg": None}

    def config_check() -> Result:
        result, box["cfg"] = check_config(loader or default_loader(args))
        return result

    table: list[tuple[str, Check]] = [
        ("config", config_check),
        ("state", lambda: check_state_dir(state_path(box["cfg"], env.environ), env)),
        ("journal", lambda: check_journal(state_path(box["cfg"], env.environ))),
        ("mirror", lambda: check_mirror(box["cfg"], state_path(box["cfg"], env.environ), env)),
        ("reader", lambda: check_reader(box["cfg"], env)),
        ("audio", lambda: check_audio(box["cfg"], env)),
        ("speech", lambda: check_speech(box["cfg"], env)),
        ("speech engines", lambda: check_speech_engines(box["cfg"])),
        ("gpio", lambda: check_gpio(box["cfg"], env)),
        ("user", lambda: check_user(env)),
        ("mqtt", lambda: check_mqtt(box["cfg"], env)),
        ("mqtt", lambda: check_mqtt_password_file(box["cfg"], env)),  # --skip mqtt skips both
    ]
    return [check for name, check in table if name not in skip]


def run(args: argparse.Namespace, *, checks: Sequence[Check] | None = None, out: TextIO = sys.stdout) -> int:
    """Run each check, print it, and return 0 if none failed, else 1."""
    if checks is None:
        checks = default_checks(args)
    try:
        me = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        me = str(os.getuid())
    print(f"companion doctor (as {me})", file=out)
    if me != SERVICE_USER:
        print(f"  the service runs as {SERVICE_USER}; to see what it sees: `companion doctor` where it is installed "
              f"(it runs as {SERVICE_USER}), or sudo -u {SERVICE_USER} /opt/companion/current/.venv/bin/companion doctor",
              file=out)
    counts = dict.fromkeys(STATUSES, 0)
    for check in checks:
        try:
            result = check()
        except Exception as e:  # noqa: BLE001 - a broken check must not hide the others
            result = Result(getattr(check, "__name__", "check"), FAIL, f"the check itself crashed: {e!r}",
                            "report this as a bug")
        counts[result.status] += 1
        print(f"{result.status:<5} {result.name}: {result.detail}", file=out)
        if result.fix:
            print(f"      fix: {result.fix}", file=out)
        if result.status in (WARN, FAIL):
            print(f"      see: {troubleshooting(result.name)}", file=out)
    total = f"{len(checks)} check{'' if len(checks) == 1 else 's'}"
    print(f"{total}: " + ", ".join(f"{n} {status}" for status, n in counts.items()) + ".", file=out)
    return 1 if counts[FAIL] else 0
