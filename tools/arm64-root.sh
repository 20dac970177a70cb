# Sourced by tools/pi-arm64-check.sh and tools/pi-update-check.sh: a Debian
# bookworm arm64 root in $ROOT that runs under qemu-user (debootstrap from the
# mirror apt already uses, once), with the host's CA certificates, pip settings
# and resolver, and /proc, /sys, /dev bound in until the calling script exits.
# Needs root.  Sets pip_env: the host's PIP_* settings, to pass into the root.

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
