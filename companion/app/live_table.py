"""A live table, as the pages' tests and benchmark drive it: the real wiring
on a real clock, the loop on its own thread, simulated reader and panel, and
the pages on a loopback port of the system's choosing (``simulate.py`` is the
same on virtual time).  Also ``Feed``, an SSE reader over plain HTTP (httpx,
of the ``test`` extra: imported only where a feed is read)."""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any

from companion import threads
from companion.app import config
from companion.app.web_app import start_web
from companion.app.wiring import build, make_reader, make_voice, simulated
from companion.core.table import PAGES_ON
from companion.runtime.clock import RealClock
from web.live import WatchedReadSide


class LiveTable:
    def __init__(self, state: Path, games: dict[str, Any] | None = None, virtual: bool = True,
                 draws: dict[str, Any] | None = None, game_settings: dict[str, Any] | None = None,
                 **overrides: Any) -> None:
        # ``game_settings``: the config's ``games:`` section (``games`` names the game classes)
        cfg = config.load([config.SHIPPED], {"panel": {"backend": "mock"}, "seed": 3, **overrides,
                                             **({"games": game_settings} if game_settings else {})})
        self.events: list[dict[str, Any]] = []
        voice = make_voice({**cfg, "voice": {**cfg["voice"], "backend": "silent"}}, True, sys.stderr, print)
        self.app = build(cfg, clock=RealClock(), log=self.events.append, voice=voice,
                         reader=make_reader(cfg, simulate=True),
                         journal_path=state / "journal.sqlite", read_side=WatchedReadSide(), games=games,
                         draws=draws, pages=PAGES_ON)  # the web is on: a game that needs pages waits for them
        self.reader, _panel = simulated(self.app)
        self.loop = self.app.loop
        self.loop.start()
        self.reader.start(self.loop.inbox)
        self.thread = threads.spawn("test-loop", self.loop.run, stop=self.loop.stop)
        self.web = start_web(self.app, cfg, "127.0.0.1", 0, virtual=self.reader if virtual else None)
        self.url = self.web.address.rstrip("/")

    def tap(self, *identities: str) -> None:
        """Lay each on the reader and wait until the loop has handled it."""
        for identity in identities:
            self.reader.present(text=identity)
            self.settle()

    def press(self, *buttons: str) -> None:
        for b in buttons:
            from companion.core.events import ButtonPressed

            self.loop.submit(ButtonPressed(b))
            self.settle()

    def await_pairing(self, seat: str, timeout: float = 5.0) -> None:
        """Wait until the table holds a phone waiting for ``seat``'s card.  A page
        says "tap your card" as it sends its request, before the table has heard
        it: a tap in between would be the game's tap, not the pairing's."""
        deadline = time.monotonic() + timeout
        while not self.on_loop(lambda: self.loop.desk.waiting(seat)):
            assert time.monotonic() < deadline, f"no phone is waiting for {seat}'s card"
            time.sleep(0.02)

    def on_loop(self, read: Any, timeout: float = 5.0) -> Any:
        """``read()`` run on the loop's thread (the table's state is the loop's
        alone); what it raises is raised here."""
        answer: list[Any] = []
        done = threading.Event()

        def run() -> None:
            try:
                answer.append(read())
            except BaseException as e:  # handed back to the caller's thread
                answer.append(e)
            done.set()

        self.loop.submit(run)
        assert done.wait(timeout), "the loop did not answer"
        if isinstance(answer[0], BaseException):
            raise answer[0]
        return answer[0]

    def settle(self) -> None:
        """Wait until the loop has handled everything submitted so far."""
        self.on_loop(lambda: None)

    def close(self) -> None:
        self.web.stop()
        self.loop.stop()
        self.thread.join(5)
        self.app.close()
        threads.shutdown(only=lambda w: w.name in ("web", "test-loop"))


class Feed:
    """An SSE stream read on a thread: (event, data) pairs into a queue."""

    def __init__(self, url: str, cookies: Any = None) -> None:
        self.items: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.got: list[tuple[str, Any]] = []  # everything taken from the queue, in order
        self.status: int | None = None
        self.cut = False  # the server ended the stream mid-body
        self._stop = False
        self._open = threading.Event()
        self.thread = threading.Thread(target=self._read, args=(url, cookies), daemon=True)
        self.thread.start()
        assert self._open.wait(5)

    def _read(self, url: str, cookies: Any) -> None:
        import httpx

        with httpx.Client(cookies=cookies, timeout=httpx.Timeout(5, read=30)) as client, \
                client.stream("GET", url) as response:
            self.status = response.status_code
            self._open.set()
            kind = "message"
            try:
                for line in response.iter_lines():
                    if self._stop:
                        return
                    if line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: "):
                        self.items.put((kind, json.loads(line[6:])))
                        kind = "message"
            except httpx.RemoteProtocolError:  # the server cut the stream (a page would reconnect)
                self.cut = True

    def drain(self, settle: float = 0.2) -> list[tuple[str, Any]]:
        """Everything received until nothing more came for ``settle`` seconds."""
        out = []
        while True:
            try:
                out.append(self.items.get(timeout=settle))
            except queue.Empty:
                self.got += out
                return out

    def wait_for(self, pred: Any, timeout: float = 5.0) -> tuple[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "not received"
            try:
                item = self.items.get(timeout=left)
            except queue.Empty:
                raise AssertionError("not received") from None
            self.got.append(item)
            if pred(*item):
                return item

    def close(self) -> None:
        self._stop = True
