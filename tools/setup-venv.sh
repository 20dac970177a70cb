# Sourced by demo.sh and test.sh: make .venv with the project installed
# (editable), once; reinstall when pyproject.toml changes.
set -euo pipefail
EXTRAS="${EXTRAS:-}"
stamp=".venv/.installed-${EXTRAS:-base}"
if [ ! -x .venv/bin/python ]; then
  echo "setting up .venv (first run only) …" >&2
  python3 -m venv .venv
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "installing the project into .venv …" >&2
  if ! { .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip &&
         .venv/bin/python -m pip install -q --disable-pip-version-check -e ".${EXTRAS:+[$EXTRAS]}"; } \
       >.venv/install.log 2>&1; then
    cat .venv/install.log >&2
    echo "installing failed; the log is above (and in .venv/install.log)" >&2
    exit 1
  fi
  touch "$stamp"
fi
