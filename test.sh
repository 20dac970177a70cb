#!/usr/bin/env bash
# Quick start 2: run the whole test suite (lint, types, tests).
# Sets itself up: a venv in .venv, and — as root on Debian — espeak-ng, sox and
# alsa-utils for the real-speech tests (without them those tests skip).
set -euo pipefail
cd "$(dirname "$0")"
# espeak-ng + sox + aplay: real-speech tests; systemd-analyze: the unit's security score;
# chromium + Noto CJK: the pages' browser tests and their Japanese screenshots (Playwright's
# own browser download cannot work here, so it drives Debian's chromium); mosquitto: the real
# broker the MQTT tests start on a free loopback port (never as a service); poppler-utils:
# pdftotext reads back the printed tag sheet's text (and Noto CJK is its font).
missing=0
for cmd in espeak-ng soxi aplay systemd-analyze chromium pdftotext; do command -v "$cmd" >/dev/null || missing=1; done
[ -x /usr/sbin/mosquitto ] || missing=1
[ -d /usr/share/fonts/opentype/noto ] || missing=1
if [ "$missing" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing espeak-ng, sox, alsa-utils, libusb-1.0-0, systemd, chromium, fonts-noto-cjk, mosquitto, poppler-utils …" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    espeak-ng sox alsa-utils libusb-1.0-0 systemd chromium fonts-noto-cjk mosquitto poppler-utils >/dev/null
fi
# The [voice] extra too (Open JTalk, Piper), so the engine tests run; the espeak-ng-only path
# is covered by tests that force the fallback (tests/test_voice_engines.py).
EXTRAS=test,voice,reliability,docs source tools/setup-venv.sh
.venv/bin/ruff check companion hardware voice httpkit web mqtt venue tests qa conftest.py
.venv/bin/mypy companion httpkit web mqtt venue
# A crash in C code (an extension's thread, the interpreter's shutdown) prints every thread's
# Python stack instead of a bare "Segmentation fault" (pytest's own handler ends with the session).
# pytest-xdist's workers (-n auto: two more than cores, conftest.py says why), each test file
# whole on one worker (--dist loadfile): a file's module-scoped browser is launched once, and
# files share nothing else — every broker, daemon and page server a test starts picks a free
# loopback port, and writes under its tmp_path.
# TEST_WORKERS=0 runs every test in this one process (e.g. for --pdb); TEST_WORKERS=N, N workers.
# `bash test.sh --quick`: the loop to run while working (conftest.py: rules, engines, core, runtime).
PYTHONFAULTHANDLER=1 exec .venv/bin/python -m pytest -n "${TEST_WORKERS:-auto}" --dist loadfile "$@"
