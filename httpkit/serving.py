"""uvicorn on a thread of its own, behind the door (httpkit.guard): the table's
pages (web.server) and the venue's board (venue.server) are served the same way.

The thread runs its loop under ``asyncio.Runner``.  At shutdown uvicorn gives
open connections a second, then cancels their tasks and returns before they
have run; the runner's close runs each to its end, so every page's stream
forgets itself.  A stream left pending on a closed loop stayed on the server's
list: after a restart an event for its audience raised "Event loop is closed"
instead of reaching the pages there, and the interpreter's last garbage
collection crashed on it (tests/test_web.py, the two ``test_finding_…`` of a
restarted server).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from companion import threads
from httpkit.guard import MAX_CONNECTIONS, MAX_HEADERS, Doorman, guarded_protocol, quiet_uvicorn


class Serving:
    """uvicorn serving ``door`` on a registered thread, started again after a
    stop on a fresh server; and the one way in from another thread: ``hand_over``."""

    def __init__(self, door: Doorman) -> None:
        self.door = door
        self.server: Any = None  # the uvicorn server of the latest start
        self.loop: asyncio.AbstractEventLoop | None = None  # while serving; None once closed
        self.thread: threading.Thread | None = None

    def start(self, host: str, port: int, name: str, stop: Callable[[], None],
              sock: socket.socket | None = None, timeout: float = 10.0) -> int:
        """Serve on a registered thread called ``name`` (``stop``: how shutdown
        asks it to end); returns the port once it listens, or raises OSError
        with why not (uvicorn's exit when a port is taken), or an empty one."""
        import uvicorn

        # The door's protocol closes connections over MAX_CONNECTIONS at once and any
        # whose request has not arrived whole in time; uvicorn's own limits stand
        # behind it (its 503 counts tasks too).  httpkit.guard says why 128.
        quiet_uvicorn()
        config = uvicorn.Config(self.door, host=host, port=port, log_level="warning", access_log=False,
                                lifespan="off", loop="asyncio", http=guarded_protocol(self.door),
                                limit_concurrency=MAX_CONNECTIONS + 1, timeout_keep_alive=5,
                                h11_max_incomplete_event_size=MAX_HEADERS, timeout_graceful_shutdown=1)
        self.server = server = uvicorn.Server(config)
        failed: list[BaseException] = []
        done = threading.Event()

        def serve() -> None:
            try:
                with asyncio.Runner() as runner:
                    self.loop = runner.get_loop()
                    self.loop.set_exception_handler(self.door.loop_exception)  # out of descriptors: one line
                    runner.run(server.serve(sockets=[sock] if sock is not None else None))
            except BaseException as e:  # SystemExit from uvicorn when the port is taken
                failed.append(e)
            finally:
                self.loop = None  # closed, every stream of it ended: a restart shares nothing with it
                done.set()

        self.thread = threads.spawn(name, serve, stop=stop)
        deadline = time.monotonic() + timeout
        while not server.started and not done.is_set() and time.monotonic() < deadline:
            time.sleep(0.005)
        if not server.started:
            raise OSError(repr(failed[0]) if failed else "")
        return int(server.servers[0].sockets[0].getsockname()[1])

    def hand_over(self, fn: Callable[..., None], *args: Any) -> None:
        """``fn(*args)`` on the serving thread, soon; from any thread, never
        waiting.  Nothing while stopped, nor once the loop is closing."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # it closed between the check and the call
            pass

    def stop(self, end_streams: Callable[[], None]) -> None:
        """Ask the server to finish; ``end_streams`` runs on its loop first, so
        each page's stream ends at once instead of at the grace second's end."""
        if self.server is not None:
            self.server.should_exit = True
            self.hand_over(end_streams)

    def stopped(self, timeout: float) -> bool:
        """Wait until the serving thread has ended (its loop closed): False if
        it still runs after ``timeout`` seconds."""
        if self.thread is not None:
            self.thread.join(timeout)
        return self.thread is None or not self.thread.is_alive()
