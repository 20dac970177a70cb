#!/usr/bin/env bash
# Quick start 1: play a whole simulated game of Seven Knights Bewitched.
# Sets itself up on first use (a venv in .venv); later runs start at once.
#   bash demo.sh                       # the default game, readable narration
#   bash demo.sh [SCRIPT] [--lang ja] [--json] [--state DIR]   # flags in any order, with or without a script
set -euo pipefail
cd "$(dirname "$0")"
source tools/setup-venv.sh
script="" args=() pretty=--pretty
while [ $# -gt 0 ]; do
  case "$1" in
    --json) pretty= ;;
    --lang|--state|--config) args+=("$1" "${2:?$1 needs a value}"); shift ;;  # flags that take a value
    -*) args+=("$1") ;;
    *) if [ -z "$script" ]; then script="$1"; else args+=("$1"); fi ;;
  esac
  shift
done
[ -n "$pretty" ] && args+=("$pretty")
exec .venv/bin/companion simulate "${script:-companion/games/seven_knights/examples/seven-knights.yaml}" "${args[@]}"
