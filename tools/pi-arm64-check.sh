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

step() { printf '\n== %s\n' "$*"; }

step "host tools: qemu-user-static, binfmt-support, debootstrap"
missing=()
for pkg in qemu-user-static binfmt-support debootstrap; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

step "binfmt_misc: run aarch64 binaries through qemu"
if ! mountpoint -q /proc/sys/fs/binfmt_misc; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
update-binfmts --enable qemu-aarch64
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || { echo "qemu-aarch64 is not registered with binfmt_misc" >&2; exit 1; }

# The mirror apt already uses (deb822 .sources first, then sources.list).
MIRROR="$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -1)"
[ -n "$MIRROR" ] || MIRROR="$(grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' | grep -v security | head -1)"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

if [ ! -x "$ROOT/usr/bin/python3" ]; then
    step "debootstrap --arch=arm64 --variant=minbase bookworm $ROOT $MIRROR"
    rm -rf -- "$ROOT"
    debootstrap --arch=arm64 --variant=minbase \
        --include=python3,python3-venv,python3-dev,gcc,libc6-dev,ca-certificates \
        bookworm "$ROOT" "$MIRROR"
else
    step "reusing the arm64 root in $ROOT"
fi

step "host CA certificates and pip settings into the root"
mkdir -p "$ROOT/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$ROOT/etc/pip.conf"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true

step "the project (git HEAD) into $ROOT/opt/companion-src"
rm -rf -- "$ROOT/opt/companion-src"
mkdir -p "$ROOT/opt/companion-src"
git archive HEAD | tar -x -C "$ROOT/opt/companion-src"

mounted=()
cleanup() {
    for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT
for m in proc sys dev; do
    mountpoint -q "$ROOT/$m" || { mount --rbind "/$m" "$ROOT/$m"; mounted+=("$ROOT/$m"); }
done

# pip's settings from the host environment (an index, a cert) go in too.
pip_env=()
while IFS='=' read -r k v; do pip_env+=("$k=$v"); done < <(env | grep '^PIP_' | grep -v '^PIP_FIND_LINKS=' || true)

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
