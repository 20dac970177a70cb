"""The daemon as a process: readiness over the systemd notify socket, taps
from the terminal, and a graceful SIGTERM within 2 s with the journal intact."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from companion.runtime.journal import Journal


def start(tmp_path: Path) -> tuple[subprocess.Popen, socket.socket]:
    sock_path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(sock_path))
    sock.settimeout(10)
    env = {**os.environ, "NOTIFY_SOCKET": str(sock_path), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "companion.app.cli", "run", "--simulate", "--json",
                             "--state", str(tmp_path / "state")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    return proc, sock


def read_until(proc: subprocess.Popen, event: str, deadline: float) -> dict:
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("{"):
            ev = json.loads(line)
            if ev["event"] == event:
                return ev
    raise AssertionError(f"no {event} event")


def test_ready_taps_and_graceful_sigterm(tmp_path: Path) -> None:
    proc, sock = start(tmp_path)
    try:
        assert sock.recv(4096).startswith(b"READY=1")
        assert proc.stdin is not None
        for cmd in ("game/seven-knights", "player/red", "player/blue", "player/green"):
            proc.stdin.write(cmd + "\n")
            proc.stdin.flush()
            assert read_until(proc, "accepted", time.monotonic() + 10)["input"] == cmd
        t = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
        assert time.monotonic() - t < 2.0
        assert sock.recv(4096).startswith(b"STOPPING=1")
    finally:
        if proc.poll() is None:
            proc.kill()
        sock.close()
    journal = Journal(tmp_path / "state" / "journal.sqlite", readonly=True)
    assert [e.input.label for e in journal.entries() if not e.input.label.startswith("table/")] == [
        "game/seven-knights", "player/red", "player/blue", "player/green"]


def test_bad_config_stops_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("voice:\n  rate: fast\n")
    proc = subprocess.run([sys.executable, "-m", "companion.app.cli", "--config", str(bad), "run", "--simulate",
                           "--state", str(tmp_path)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"companion: {bad}:2: voice.rate must be a number, not 'fast'"


def _readable_run(tmp_path: Path, voice: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "companion.app.cli", "run", "--simulate", "--voice", voice,
                           "--state", str(tmp_path / voice)],
                          input="game/seven-knights\nplayer/red\nquit\n", capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_simulated_terminal_shows_every_line_said_once_with_its_time_stamp(tmp_path: Path) -> None:
    """With --voice tts the terminal once showed no narration.  Whatever
    the backend, each line said is shown once, stamped like the events."""
    import re
    import shutil

    voices = ["console", "silent"] + (["tts"] if shutil.which("espeak-ng") else [])
    for voice in voices:
        out = _readable_run(tmp_path, voice)
        said = [line for line in out.splitlines() if "🔊" in line]
        assert said.count(next(s for s in said if s.endswith("🔊 Red, seat 1."))) == 1, (voice, out)
        assert all(re.match(r"^ *\d+\.\ds  🔊 ", s) for s in said), (voice, said)
        accepted = [line for line in out.splitlines() if "✓ player/red" in line]
        assert accepted and re.match(r"^ *\d+\.\ds  ✓", accepted[0])


def test_a_line_arriving_while_typing_is_printed_above_the_prompt_and_the_typing_kept() -> None:
    import io

    from companion.app.daemon import PROMPT, Screen

    out = io.StringIO()
    screen = Screen(out, typed=lambda: "skb/kni")
    screen.print("  12.0s  🔊 One minute left.")
    assert out.getvalue() == "  12.0s  🔊 One minute left.\n"
    screen.prompting = True
    screen.print("  13.0s  🔊 Ten seconds left.")
    assert out.getvalue().endswith(f"\r\033[K  13.0s  🔊 Ten seconds left.\n{PROMPT}skb/kni")


def test_run_help_says_what_lang_and_state_do_and_the_state_default() -> None:
    out = subprocess.run([sys.executable, "-m", "companion.app.cli", "run", "--help"], capture_output=True,
                         text=True, timeout=30).stdout
    flat = " ".join(out.split())
    assert "narration language" in flat and "./state" in flat and "STATE_DIRECTORY" in flat


def run_with_web(tmp_path: Path, port: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "companion.app.cli", "run", "--simulate", "--json",
                             "--web", f"127.0.0.1:{port}", "--state", str(tmp_path / "state")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def said_after_greeting(proc: subprocess.Popen, deadline: float) -> dict:
    """The first line said after "ready": what the pages' start had to say."""
    said = read_until(proc, "say", deadline)
    while said["key"] == "table.ready":
        said = read_until(proc, "say", deadline)
    return said


def test_pages_that_cannot_listen_are_off_and_a_game_needing_phones_is_refused_at_its_card(tmp_path: Path) -> None:
    """The web configured on but its port taken.  The pairing gate
    would wait for phones that can never pair: the daemon plays on with the
    pages off, says and prints why, and Demagogos is refused at its card."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    proc = run_with_web(tmp_path, port)
    try:
        deadline = time.monotonic() + 20
        said = said_after_greeting(proc, deadline)
        assert said["key"] == "web.off" and str(port) in said["text"]
        assert proc.stdin is not None
        proc.stdin.write("game/demagogos\n")
        proc.stdin.flush()
        refused = read_until(proc, "rejected", deadline)
        assert refused["input"] == "game/demagogos" and "phones" in refused["reason"]
        assert read_until(proc, "say", deadline)["key"] == "pairing.refuse.no_pages"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert proc.stderr is not None
        assert f"the table's pages are off: they could not listen on 127.0.0.1:{port}" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        taken.close()


def test_pages_on_a_free_port_are_served_from_the_socket_bound_first(tmp_path: Path) -> None:
    import httpx

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # free again: the daemon binds it before building the table
    proc = run_with_web(tmp_path, port)
    try:
        deadline = time.monotonic() + 20
        said = said_after_greeting(proc, deadline)
        assert said["key"] == "web.address"
        table = httpx.get(f"http://127.0.0.1:{port}/api/table", timeout=5).json()
        assert table["phase"] == "idle" and table["board"] == []
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_signal_while_the_loop_holds_its_inbox_lock_still_stops_it() -> None:
    """SIGTERM landed while the main thread was inside the inbox's get, its
    lock held; the handler then put the loop's stop on that queue and waited
    forever for its own lock (found by 60 start/SIGTERM cycles: a daemon that
    hung until killed).  Now the handler only sets an event."""
    import threading

    from companion.app.daemon import stop_on_signal

    inbox_lock = threading.Lock()  # as queue.Queue's mutex, which the interrupted get holds
    stopped = threading.Event()

    def loop_stop() -> None:
        with inbox_lock:
            stopped.set()

    stopping = threading.Event()
    on_signal = stop_on_signal(loop_stop, stopping, lambda: None)
    handled = threading.Event()

    def main_thread() -> None:
        with inbox_lock:  # the signal arrives here, on the thread that holds the lock
            on_signal(signal.SIGTERM, None)
            handled.set()

    threading.Thread(target=main_thread, daemon=True).start()
    assert handled.wait(2), "the handler waited for a lock its own thread holds"
    assert stopped.wait(2) and stopping.is_set()
