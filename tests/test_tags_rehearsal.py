"""`companion tags … --rehearse`: the whole making of a game's tags with no
reader — nfcpy's reader path on the package's emulated reader — as a person
runs it: write, Ctrl-C, check says what is missing, write goes on, check is whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from companion.games import tag_sets

ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def tags(config: Path, *argv: str, interrupt_after: int | None = None) -> tuple[int, str]:
    """Run `companion tags …`; with ``interrupt_after``, Ctrl-C once that many tags are verified."""
    proc = subprocess.Popen([sys.executable, "-m", "companion.app.cli", "tags", "--config", str(config), *argv,
                             "--rehearse", "--timeout", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV)
    assert proc.stdout is not None
    out, verified = [], 0
    try:
        for line in proc.stdout:
            out.append(line)
            verified += "written and verified" in line
            if verified == interrupt_after:
                proc.send_signal(signal.SIGINT)
                interrupt_after = None
        return proc.wait(60), "".join(out)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_games_tags_are_made_interrupted_checked_and_finished_on_the_emulated_reader(tmp_path: Path) -> None:
    box = tag_sets()["demagogos"]
    config = tmp_path / "companion.yaml"
    config.write_text(f"state_dir: {tmp_path / 'state'}\n", encoding="utf-8")

    code, out = tags(config, "write", "demagogos", interrupt_after=5)
    assert code == 130, out
    assert "interrupted: what was written is kept in" in out
    assert "Traceback" not in out
    assert f"[1/{len(box)}] tap the sticker for Demagogos' Trap (game/demagogos)" in out
    record = yaml.safe_load((tmp_path / "state" / "tags-rehearsal" / "written.yaml").read_text(encoding="utf-8"))
    n = len(record)  # 5, or 6 if the next tag was made before the Ctrl-C arrived
    assert n in (5, 6) and list(record) == list(box[:n])

    code, out = tags(config, "check", "demagogos")
    assert code == 1, out
    assert f"demagogos: {n} of {len(box)} pieces" in out
    assert f"missing ({len(box) - n}): {', '.join(box[n:])}" in out

    code, out = tags(config, "write", "demagogos")
    assert code == 0, out
    assert f"{n} of {len(box)} written already" in out
    assert f"[{n}/{len(box)}]" not in out
    assert f"[{n + 1}/{len(box)}] tap the sticker for Box {n} (dt/box/{n})" in out

    code, out = tags(config, "check", "demagogos")
    assert (code, out.splitlines()[-1]) == (0, "all present"), out
    stickers = yaml.safe_load((tmp_path / "state" / "tags-rehearsal" / "stickers.yaml").read_text(encoding="utf-8"))
    assert sorted(stickers.values()) == sorted(box)  # one sticker per tag, none spoilt, none twice
    assert not (tmp_path / "state" / "tags-written.yaml").exists()  # the real walk's record is untouched
