"""What a person types at `companion run --simulate` and `companion web qr`:
a word that is no tag and no button is answered in the terminal and never
reaches the table; `uid:` takes hex; a QR card's address must be one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from companion.runtime.journal import Journal


def simulate(tmp_path: Path, typed: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "companion.app.cli", "run", "--simulate", "--voice", "console",
                           "--state", str(tmp_path / "state")],
                          input=typed + "quit\n", capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def journaled(tmp_path: Path) -> list[object]:
    journal = Journal(tmp_path / "state" / "journal.sqlite", readonly=True)
    try:
        return [e.input for e in journal.entries() if type(e.input).__name__ != "Housekeeping"]
    finally:
        journal.close()


def test_finding_a_typo_in_the_terminal_is_answered_there_and_never_reaches_the_table(tmp_path: Path) -> None:
    out = simulate(tmp_path, "nxt\nskb/knigth/3\n")
    assert "did you mean `next`?" in out
    assert "did you mean `skb/knight/3`?" in out
    assert "I don't know that tag" not in out  # no speech
    assert "unknown tag" not in out
    assert "error ●" not in out  # no error LED
    assert journaled(tmp_path) == []  # no journal


def test_finding_uid_takes_hex_only(tmp_path: Path) -> None:
    out = simulate(tmp_path, "uid:zz12\nuid:04a1b2c3\n")
    assert "uid: takes the tag's UID in hex" in out
    assert "ZZ12" not in out.replace("'zz12'", "")  # never laid on the reader
    assert "✗ uid:04A1B2C3 — unknown tag" in out  # the hex one was, and the table answered it


def test_finding_web_qr_checks_the_url(tmp_path: Path, capsys) -> None:
    from companion.app.cli import main

    card = tmp_path / "card.svg"
    for bad in ("table.local:8080", "ftp://table.local/", "http://", "not a url"):
        assert main(["web", "qr", "-o", str(card), "--url", bad]) == 2, bad
        assert "--url must be an http:// or https:// address with a host" in capsys.readouterr().err
        assert not card.exists()
    assert main(["web", "qr", "-o", str(card), "--url", "https://table.local:8080/"]) == 0
    assert card.exists()
