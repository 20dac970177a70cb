"""The companion says how to reach its pages at start (docs/reference/pages.md): the
host's ``.local`` name and the port, in English as written and in Japanese
spelled letter by letter in katakana — never while a game's eyes are closed
(a restart in the middle of the One Night night stays silent)."""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path
from typing import Any

import pytest

from companion.app import config
from companion.app.simulate import Simulation, load_script
from companion.app.web_app import spoken_address, start_web
from conftest import example_script
from voice.ja import kana_numbers, spelled
from voice.lines import load_lines

ROOT = Path(__file__).resolve().parent.parent


def run(state: Path, steps: list[tuple[int, str, Any]], overrides: dict[str, Any]) -> list[dict[str, Any]]:
    """Start (replaying ``state``), serve the pages, play ``steps``; the log."""
    log: list[dict[str, Any]] = []
    cfg = config.load([ROOT / "config" / "companion.yaml"], overrides)
    sim = Simulation(cfg, state, log.append)
    web = start_web(sim.app, cfg, "127.0.0.1", 0)
    try:
        sim.loop.pump()
        for _, kind, value in steps:
            sim.step(kind, value)
    finally:
        web.stop()
        sim.close()
    return log


def said(log: list[dict[str, Any]], key: str = "web.address") -> list[dict[str, Any]]:
    return [e for e in log if e["event"] == "say" and e["key"] == key]


def test_the_address_is_said_at_start_with_the_port(tmp_path: Path) -> None:
    log = run(tmp_path, [], {})
    (line,) = said(log)
    port = int(line["text"].split("port ")[1].split(".")[0])
    assert line["text"] == f"The table's pages are at 127 dot 0 dot 0 dot 1, port {port}. Or scan the QR card."
    assert port > 0


def test_on_every_address_it_is_the_hosts_local_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "table-2")
    assert spoken_address("0.0.0.0", 8080) == {
        "en": {"host": "table-2 dot local", "port": 8080},
        "ja": {"host": "ティー・エー・ビー・エル・イー・ハイフン・ニ・ドット・ローカル", "port": 8080}}


def test_in_japanese_the_name_is_spelled_in_katakana(tmp_path: Path) -> None:
    (line,) = said(run(tmp_path, [], {"language": "ja"}))
    assert "イチ・ニ・ナナ・ドット・ゼロ・ドット・ゼロ・ドット・イチ" in line["text"]
    assert line["text"].startswith("得点表はアドレス") and "番で見られます" in line["text"]


def test_spelled_letters_are_read_by_open_jtalk_as_written() -> None:
    """The spelling is the reading: what Open JTalk says for it must be it."""
    pyopenjtalk = pytest.importorskip("pyopenjtalk", reason="Open JTalk (the [voice] extra) is not installed")
    from test_voice_readings import fold

    from voice.engines import OPENJTALK_OPTIONS, load_user_dict

    with tempfile.TemporaryDirectory() as tmp:
        load_user_dict(pyopenjtalk, tmp)
        say = lambda text: fold(pyopenjtalk.g2p(text, kana=True, **OPENJTALK_OPTIONS))  # noqa: E731
        for name in ("abcdefghijklm", "nopqrstuvwxyz", "pi-4_0123456789"):
            assert say(spelled(name)) == fold(spelled(name)), name
        # and the whole line, filled as at a table: its text sounds as its kana reading says
        text, reading = load_lines("ja")["web.address"]
        params = {"host": spelled("companion") + "・ドット・ローカル", "port": 8080}
        assert say(text.format(**params)) == say(kana_numbers(reading.format(**params)))


def test_a_restart_in_the_night_does_not_say_it(tmp_path: Path) -> None:
    script = load_script(example_script("one-night.yaml"))
    night = next(i for i, (_, kind, _v) in enumerate(script.steps) if kind == "wait")  # night has fallen
    first = run(tmp_path, script.steps[:night + 1], script.overrides)
    assert len(said(first)) == 1  # before the game: said
    again = run(tmp_path, [], script.overrides)  # the daemon restarts in the middle of the night
    assert [e for e in again if e["event"] == "say"] and not said(again)
    assert any(e["event"] == "say" and e["key"].startswith("onw.") for e in again)  # the night goes on
