#!/usr/bin/env bash
# The docs site (mkdocs.yml, docs/ and each game's guide/):
#   bash tools/docs.sh          # serve it at http://127.0.0.1:8000, rebuilt as you edit
#   bash tools/docs.sh build    # build it into site/ with --strict, as CI does
# Sets up .venv with the docs extra on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=docs source tools/setup-venv.sh
export NO_MKDOCS_2_WARNING=1
if [ "${1:-serve}" = build ]; then
  exec .venv/bin/mkdocs build --strict
fi
exec .venv/bin/mkdocs serve --dev-addr 127.0.0.1:8000
