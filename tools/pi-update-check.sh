#!/usr/bin/env bash
# Does an update roll back on a Pi's architecture?  Not run in CI (about 20
# minutes under emulation, and it needs root); tests/test_release_update.py
# checks the same switch and roll-back in seconds with stand-ins.
#
# In the Debian bookworm arm64 root of tools/pi-arm64-check.sh (built here if
# missing), with qa/fake_systemctl.py as systemctl (systemd is not PID 1 in a
# chroot; it starts the unit's ExecStart with a notify socket and waits for
# READY=1 as systemd does), the real systemd/install.sh, four times:
#   1. the release before release folders, installed the old way (/opt/companion/.venv);
#   2. this release: the old one becomes 'legacy', the new one is built beside
#      it, switched to, and proved ready;
#   3. a newer release with no network (pip cannot reach its index): refused,
#      the running service untouched (same process);
#   4. a newer release that never sends READY=1: rolled back to the one before;
# then `companion update --rollback` by hand (to legacy and forward again), and
# the documented `companion doctor` / `scores` / `web qr` through the wrapper.
# (Without the narration's prerender: see undivert below.)
# Each step's time is printed; the last lines are the figures.
#
#   sudo bash tools/pi-update-check.sh [ROOT]    # default ROOT: /var/tmp/companion-arm64
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="${1:-/var/tmp/companion-arm64}"
[ "$(id -u)" = 0 ] || { echo "run as root (sudo): it mounts binfmt_misc and chroots" >&2; exit 2; }

# shellcheck source=tools/arm64-root.sh
source tools/arm64-root.sh

# The last commit before the release folders: what an existing table runs.
first="$(git log --diff-filter=A --format=%H -- systemd/release.sh | tail -1)"
OLD="${OLD:-$first^}"
step "the trees: the release before release folders ($(git rev-parse --short "$OLD")) and this one (HEAD)"
for d in src-old src-new; do rm -rf -- "${ROOT:?}/opt/$d"; mkdir -p "$ROOT/opt/$d"; done
git archive "$OLD" | tar -x -C "$ROOT/opt/src-old"
git archive HEAD | tar -x -C "$ROOT/opt/src-new"
install -m 0755 qa/fake_systemctl.py "$ROOT/usr/local/sbin/systemctl"
sed -i '1s|.*|#!/usr/bin/python3|' "$ROOT/usr/local/sbin/systemctl"

inside() {
    chroot "$ROOT" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LANG=C.UTF-8 "${pip_env[@]}" bash -euo pipefail -c "$1"
}
stop_service() { chroot "$ROOT" /usr/local/sbin/systemctl stop companion >/dev/null 2>&1 || true; }
# The narration's prerender is not what this checks, and under emulation it takes
# most of an hour: espeak-ng's command is moved aside for the run (install.sh then
# says "prerender failed" and goes on; the daemon still starts), and put back after.
undivert() { chroot "$ROOT" dpkg-divert --local --rename --remove /usr/bin/espeak-ng >/dev/null 2>&1 || true; }
trap 'stop_service; undivert; cleanup' EXIT

step "a clean table: no install, no state (uname -m: $(chroot "$ROOT" uname -m))"
stop_service
inside '
    rm -rf /opt/companion /etc/companion /var/lib/companion /usr/local/bin/companion \
        /etc/systemd/system/companion.service /run/fake-systemctl
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends sudo espeak-ng >/dev/null
    dpkg-divert --local --rename --add /usr/bin/espeak-ng
    id pi >/dev/null 2>&1 || useradd --create-home --shell /bin/bash pi
    chmod 0700 /home/pi
    # Two newer releases made from this one: one whose install finds no network,
    # one that never becomes ready (it hangs before READY=1).
    for v in nonet:0.1.901 hang:0.1.902; do
        rm -rf /opt/src-${v%%:*}; cp -a /opt/src-new /opt/src-${v%%:*}
        sed -i "s/^version = .*/version = \"${v#*:}\"/" /opt/src-${v%%:*}/pyproject.toml
    done
    printf "\nimport sys as _s, time as _t\nif _s.argv[1:2] == [\"run\"]:\n    _t.sleep(3600)\n" >> /opt/src-hang/companion/app/daemon.py
'

figures=()
timed() {  # timed LABEL EXPECTED-STATUS SCRIPT
    local label="$1" want="$2" t0 t1 status=0
    step "$label"
    t0=$(date +%s)
    inside "$3" || status=$?
    t1=$(date +%s)
    figures+=("$(printf '%-58s %4ss  exit %s' "$label" "$((t1 - t0))" "$status")")
    if [ "$want" = ok ] && [ "$status" -ne 0 ]; then echo "FAILED: $label (exit $status)" >&2; exit 1; fi
    if [ "$want" = fail ] && [ "$status" -eq 0 ]; then echo "FAILED: $label should have failed" >&2; exit 1; fi
}
check() {  # check WHAT SCRIPT: the script must succeed
    if inside "$2"; then echo "  ok: $1"; figures+=("  ok: $1"); else echo "FAILED: $1" >&2; exit 1; fi
}
current() { echo 'basename "$(readlink /opt/companion/current)"'; }

timed "1. the old way: /opt/companion/.venv, in place" ok \
    'cd /opt/src-old && bash systemd/install.sh --no-voice'
check "the old layout runs" '[ -x /opt/companion/.venv/bin/companion ] && [ "$(systemctl is-active companion)" = active ]'

timed "2. this release: legacy kept, new one built, switched, ready" ok \
    'cd /opt/src-new && bash systemd/install.sh --no-voice'
check "current is the new release, previous is legacy, the service is active" "
    [ \"\$($(current))\" != legacy ] && [ \"\$(basename \"\$(readlink /opt/companion/previous)\")\" = legacy ] &&
    [ \"\$(systemctl is-active companion)\" = active ] && cat /opt/companion/releases/*/.complete >/dev/null &&
    ls /opt/companion/releases"
inside "$(current) > /root/good-release; cat /run/fake-systemctl/companion.service.pid > /root/good-pid"

timed "3. a newer release, no network: refused, table untouched" fail \
    'cd /opt/src-nonet && PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_RETRIES=0 PIP_TIMEOUT=3 bash systemd/install.sh --no-voice'
check "still the same release, the same process, active" "
    [ \"\$($(current))\" = \"\$(cat /root/good-release)\" ] &&
    [ \"\$(cat /run/fake-systemctl/companion.service.pid)\" = \"\$(cat /root/good-pid)\" ] &&
    [ \"\$(systemctl is-active companion)\" = active ] && ! ls -d /opt/companion/releases/0.1.901-* 2>/dev/null"

timed "4. a newer release that never becomes ready: rolled back" fail \
    'cd /opt/src-hang && bash systemd/install.sh --no-voice'
check "back on the release before, active, the failed one removed" "
    [ \"\$($(current))\" = \"\$(cat /root/good-release)\" ] && [ \"\$(systemctl is-active companion)\" = active ] &&
    ! ls -d /opt/companion/releases/0.1.902-* 2>/dev/null"

timed "5. companion update --rollback (as root): to legacy" ok 'companion update --rollback'
check "legacy runs again from /opt/companion/.venv" "
    [ \"\$($(current))\" = legacy ] && [ \"\$(systemctl is-active companion)\" = active ]"
timed "6. companion update --rollback again: forward to this release" ok 'companion update --rollback'
check "this release runs again" "[ \"\$($(current))\" = \"\$(cat /root/good-release)\" ]"

step "7. the documented commands through the companion on the PATH"
# sudo is setuid, which qemu-user runs only with binfmt's C flag (not registered
# so here): the pi user's path through sudo is tested in tests/test_cli_wrapper.py;
# here root's (runuser, the same user switch) and the person's own (no switch).
check "root: companion doctor runs as companion, in its state folder, which it can write" '
    cd /root && out="$(companion doctor --skip reader --skip audio --skip gpio --skip speech || true)"
    echo "$out"; echo "$out" | grep -q "^companion doctor (as companion)" && echo "$out" | grep -q "^OK    state directory"'
check "root: companion scores reads the service's journal" 'cd /root && companion scores'
check "pi: companion web qr -o card.svg writes in its own folder, as pi" '
    cd /home/pi && runuser -u pi -- companion web qr -o card.svg --url http://companion.local:8080/ &&
    [ "$(stat -c %U /home/pi/card.svg)" = pi ]'

step "figures (seconds, under qemu-user on $(nproc) cores)"
printf '%s\n' "${figures[@]}"
