#!/usr/bin/env bash
# Does the Pi install work on a Pi's architecture?  Not run in CI (it takes
# about 9 minutes the first time, 2 after, and needs root).
#
# Builds a Debian bookworm arm64 root under qemu-user (debootstrap from the
# mirror apt already uses), then inside it, under emulation, does what
# systemd/install.sh does for the software: the apt packages, a venv,
# `pip install .[pi]` (so every dependency's aarch64 wheel — or its build
# from source — is known to work), and plays a table script with the
# installed `companion`.  python3-lgpio exists only in Raspberry Pi OS's
# archive, so it is left out here; RPi.GPIO builds from source (needs gcc).
#
#   sudo bash tools/pi-arm64-check.sh [ROOT]     # default ROOT: /var/tmp/companion-arm64
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="${1:-/var/tmp/companion-arm64}"
[ "$(id -u)" = 0 ] || { echo "run as root (sudo): it mounts binfmt_misc and chroots" >&2; exit 2; }

# shellcheck source=tools/arm64-root.sh
source tools/arm64-root.sh

step "the project (git HEAD) into $ROOT/opt/companion-src"
rm -rf -- "$ROOT/opt/companion-src"
mkdir -p "$ROOT/opt/companion-src"
git archive HEAD | tar -x -C "$ROOT/opt/companion-src"

step "inside (uname -m: $(chroot "$ROOT" uname -m)): apt packages as install.sh, venv, pip install .[pi], a game"
chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "${pip_env[@]}" /bin/sh -eu -c '
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        espeak-ng alsa-utils libusb-1.0-0 sqlite3 >/dev/null
    cd /opt/companion-src
    python3 -m venv --system-site-packages /opt/companion/.venv
    /opt/companion/.venv/bin/pip install -q --upgrade pip
    /opt/companion/.venv/bin/pip install ".[pi]"
    # RPi.GPIO refuses to be imported off a real Pi (it reads /proc/cpuinfo): found, not imported.
    /opt/companion/.venv/bin/python -c "import importlib.util, platform, gpiozero, nfc, yaml, pyttsx3; assert importlib.util.find_spec(\"RPi.GPIO\") and importlib.util.find_spec(\"lgpio\"); print(\"imports ok on\", platform.machine())"
    /opt/companion/.venv/bin/companion simulate companion/games/seven_knights/examples/seven-knights.yaml > /tmp/game.jsonl
    grep -c "\"accepted\"" /tmp/game.jsonl | sed "s/^/accepted inputs: /"
    grep -q "\"game_over\"" /tmp/game.jsonl && echo "a whole game played on aarch64"
    /opt/companion/.venv/bin/companion doctor --skip reader --skip audio --skip gpio --skip user || true
'
step "done: the Pi install steps work on arm64"
