#!/usr/bin/env bash
# Install or update the table companion on Raspberry Pi OS (bookworm) as a service.
#
#   git clone <this repo> companion && cd companion
#   sudo bash systemd/install.sh            # install or update; safe to run again
#   bash systemd/install.sh --dry-run       # only print what it would do
#   sudo bash systemd/install.sh --no-voice # without the [voice] extra (Open JTalk, Piper)
#
# Steps: apt packages, the "companion" user and its groups, a new release in
# /opt/companion/releases/<version>-<commit> beside the running one (a copy of
# the repo and its own venv, --system-site-packages so Pi OS's python3-lgpio is
# visible), /etc/companion config (existing files are kept), the udev rule for
# USB readers, the kernel NFC driver blacklist, `companion` on the PATH, then
# the switch to the new release: the service restarted on it and, unless it
# becomes ready, back on the previous one (systemd/release.sh); then
# `companion doctor`.
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The paths are overridable for tests and unusual layouts only.
PREFIX="${COMPANION_PREFIX:-/opt/companion}"
ETC="${COMPANION_ETC:-/etc/companion}"
STATE="${COMPANION_STATE:-/var/lib/companion}"
UNIT_DIR="${COMPANION_UNIT_DIR:-/etc/systemd/system}"
UDEV_DIR="${COMPANION_UDEV_DIR:-/etc/udev/rules.d}"
MODPROBE_DIR="${COMPANION_MODPROBE_DIR:-/etc/modprobe.d}"
BIN_DIR="${COMPANION_BIN_DIR:-/usr/local/bin}"
SERVICE_USER=companion
GROUPS_NEEDED=(gpio audio plugdev dialout)
# sqlite3: the CLI whose .recover the journal guard uses on a damaged journal (companion/journal_guard.py)
# fonts-noto-cjk: `companion tags sheet` prints the Japanese names on the Pi, whose QR card then holds the Pi's address
APT_PACKAGES=(python3-venv espeak-ng alsa-utils libusb-1.0-0 sqlite3 fonts-noto-cjk python3-lgpio)

DRY_RUN=0
START=1
VOICE=1
usage() {
    cat <<EOF
usage: sudo bash systemd/install.sh [--dry-run] [--no-start] [--no-voice]
  --dry-run   print every step and command, change nothing (no root needed)
  --no-start  install and enable the service but do not (re)start it
  --no-voice  skip the [voice] extra (Open JTalk for Japanese, Piper for English,
              ~250 MB); the narrator then speaks with espeak-ng only
EOF
}
for arg in "$@"; do
    case "$arg" in
        --dry-run|-n) DRY_RUN=1 ;;
        --no-start) START=0 ;;
        --no-voice) VOICE=0 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option $arg" >&2; usage >&2; exit 2 ;;
    esac
done

step() { printf '\n==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
# run CMD ARGS...: print it; run it unless --dry-run.
run() {
    printf '    $ %s\n' "$*"
    if [ "$DRY_RUN" -eq 0 ]; then "$@"; fi
}
has() { command -v "$1" >/dev/null 2>&1; }
# The release folders, the switch and the roll-back.
# shellcheck source=systemd/release.sh
source "$SRC/systemd/release.sh"
OLD_RELEASE="$(link_target current)"

if [ "$DRY_RUN" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: run me with sudo (or try --dry-run to see the steps)" >&2
    exit 1
fi
if [ -r /etc/os-release ] && ! grep -q '^VERSION_CODENAME=bookworm' /etc/os-release; then
    note "warning: this script is written for Raspberry Pi OS bookworm; carrying on."
fi
[ "$DRY_RUN" -eq 1 ] && note "dry run: nothing will be changed."

# ---------------------------------------------------------------- 1
step "1/9 apt packages: ${APT_PACKAGES[*]}"
packages=()
for p in "${APT_PACKAGES[@]}"; do
    if [ "$p" = python3-lgpio ] && [ "$DRY_RUN" -eq 0 ] && ! apt-cache show python3-lgpio >/dev/null 2>&1; then
        note "python3-lgpio is not in this system's archive (not Raspberry Pi OS?): skipped;"
        note "on a Pi, gpiozero then falls back to RPi.GPIO from the [pi] extra."
        continue
    fi
    packages+=("$p")
done
run apt-get update
run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}"

# ---------------------------------------------------------------- 2
step "2/9 user '$SERVICE_USER' in groups ${GROUPS_NEEDED[*]}"
for g in "${GROUPS_NEEDED[@]}"; do
    if ! getent group "$g" >/dev/null; then
        run groupadd --system "$g"
    fi
done
group_list="$(IFS=,; echo "${GROUPS_NEEDED[*]}")"
if id "$SERVICE_USER" >/dev/null 2>&1; then
    run usermod --append --groups "$group_list" "$SERVICE_USER"
else
    run useradd --system --user-group --home-dir "$STATE" --no-create-home \
        --shell /usr/sbin/nologin --comment table-companion --groups "$group_list" "$SERVICE_USER"
fi

# ---------------------------------------------------------------- 3
RELEASE="$(release_id "$SRC")"
step "3/9 release $RELEASE in $PREFIX/releases: a copy of $SRC and its venv, ${RELEASE}[pi]"
note "built beside the running release, which goes on until the new one is proved."
if [ "$(realpath -m "$SRC")" = "$(realpath -m "$PREFIX")" ]; then
    echo "install.sh: $PREFIX holds the releases; clone the repository elsewhere (e.g. ~/companion)" >&2
    exit 1
fi
run install -d -m 0755 "$PREFIX"
migrate_legacy
if ! build_release "$SRC" "$RELEASE" "$VOICE"; then
    echo "install.sh: release $RELEASE could not be installed; the table runs ${OLD_RELEASE:-nothing} as before." >&2
    exit 1
fi

# ---------------------------------------------------------------- 4
step "4/9 config in $ETC (existing files are kept)"
run install -d -m 0755 "$ETC"
for f in companion.yaml tags.yaml; do
    if [ -e "$ETC/$f" ]; then
        note "$ETC/$f exists: kept (the shipped one is $PREFIX/config/$f)."
    elif [ -e "$SRC/config/$f" ]; then
        run install -m 0644 "$SRC/config/$f" "$ETC/$f"
        if [ "$f" = companion.yaml ]; then
            # Commands run by hand (doctor, scores, voice prerender) must find the
            # service's journal and voice cache, not ./state.
            run sed -i "s|^state_dir: null.*|state_dir: /var/lib/companion   # set by install.sh|" "$ETC/$f"
        fi
    else
        note "no config/$f in the repo: skipped."
    fi
done

# ---------------------------------------------------------------- 5
step "5/9 udev rule for USB NFC readers"
run install -D -m 0644 "$SRC/systemd/99-companion-reader.rules" "$UDEV_DIR/99-companion-reader.rules"
if has udevadm || [ "$DRY_RUN" -eq 1 ]; then
    run udevadm control --reload-rules
    run udevadm trigger --subsystem-match=usb --action=change
fi

# ---------------------------------------------------------------- 6
step "6/9 keep the kernel NFC drivers (port100, pn533) off the reader"
run install -D -m 0644 "$SRC/systemd/blacklist-nfc.conf" "$MODPROBE_DIR/blacklist-companion-nfc.conf"
for m in port100 pn533_usb pn533; do
    if [ "$DRY_RUN" -eq 1 ] || grep -q "^$m " /proc/modules 2>/dev/null; then
        run modprobe -r "$m"
    fi
done

# ---------------------------------------------------------------- 7
step "7/9 \`companion\` on the PATH: $BIN_DIR/companion"
# The docs' `companion …` as typed by the pi user: the table's commands run as the
# service's user in its state folder (systemd/companion-cli says which).  Written here
# from the checkout, and again from the current release at every switch (install_wrapper).
write_wrapper "$SRC/systemd/companion-cli"

# ---------------------------------------------------------------- 8
step "8/9 prerender the narration, then the service on release $RELEASE (back to the previous one unless it becomes ready)"
# The first game after an install must hear no live synthesis: fill the voice
# cache now, with the new release, as the service user and with its state directory.
run install -d -o "$SERVICE_USER" -g "$SERVICE_USER" -m 0750 "$STATE"
prerender=(runuser -u "$SERVICE_USER" -- env STATE_DIRECTORY="$STATE" "$RELEASES/$RELEASE/.venv/bin/companion" voice prerender)
printf '    $ cd %s && %s\n' "$STATE" "${prerender[*]}"
if [ "$DRY_RUN" -eq 0 ] && ! (cd "$STATE" && "${prerender[@]}"); then
    note "prerender failed (see above): the service renders what it needs in the background."
fi
ACTIVATED=1
if ! activate "$RELEASE" "$START"; then
    ACTIVATED=0
fi
run systemctl enable "$SERVICE"

# ---------------------------------------------------------------- 9
step "9/9 companion doctor (as the service user)"
# Same user, groups, working directory and state directory as the service.
doctor=(runuser -u "$SERVICE_USER" -- env STATE_DIRECTORY="$STATE" "$PREFIX/current/.venv/bin/companion" doctor)
printf '    $ cd %s && %s\n' "$STATE" "${doctor[*]}"
if [ "$DRY_RUN" -eq 0 ]; then
    install -d -o "$SERVICE_USER" -g "$SERVICE_USER" -m 0750 "$STATE"
    if (cd "$STATE" && "${doctor[@]}"); then
        note "nothing failed (a WARN above names what falls short)."
    else
        note "doctor found something to fix (see above); the service keeps retrying meanwhile."
    fi
fi

if [ "$ACTIVATED" -eq 0 ]; then
    echo "install.sh: release $RELEASE did not become ready; the table runs $(link_target current || true) (see above)." >&2
    exit 1
fi
cat <<EOF

Done: release $RELEASE.  Useful next commands:
  systemctl status companion          is it running?
  journalctl -u companion -f          its log, live
  companion doctor                    (as the service's user, like every companion command)
  sudo nano $ETC/companion.yaml && sudo systemctl restart companion
  sudo companion update --rollback    back to the previous release
EOF
