#!/usr/bin/env bash
# Quick start 1: play a whole simulated game of Seven Knights Bewitched.
# Sets itself up on first use (a venv in .venv); later runs start at once.
#   bash demo.sh                 # the default game, readable narration
#   bash demo.sh SCRIPT [--lang ja] [--json]
set -euo pipefail
cd "$(dirname "$0")"
source tools/setup-venv.sh
script="${1:-examples/seven-knights.yaml}"
[ $# -gt 0 ] && shift
args=() pretty=--pretty
for a in "$@"; do if [ "$a" = --json ]; then pretty=; else args+=("$a"); fi; done
[ -n "$pretty" ] && args+=("$pretty")
exec .venv/bin/companion simulate "$script" "${args[@]}"
