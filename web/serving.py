"""uvicorn on a thread of its own, behind the door (web.guard): the table's
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

from companion.core import threads
from web.guard import MAX_CONNECTIONS, MAX_HEADERS, Doorman, guarded_protocol, quiet_uvicorn


def make_server(door: Doorman, host: str, port: int) -> Any:
    """A uvicorn server for ``door``.  The door's protocol closes connections
    over MAX_CONNECTIONS at once and any whose request has not arrived whole in
    time; uvicorn's own limits stand behind it (its 503 counts tasks too)."""
    import uvicorn

    quiet_uvicorn()
    config = uvicorn.Config(door, host=host, port=port, log_level="warning", access_log=False, lifespan="off",
                            loop="asyncio", http=guarded_protocol(door), limit_concurrency=MAX_CONNECTIONS + 1,
                            timeout_keep_alive=5, h11_max_incomplete_event_size=MAX_HEADERS,
                            timeout_graceful_shutdown=1)
    return uvicorn.Server(config)


def serve_on_thread(server: Any, door: Doorman, name: str, stop: Callable[[], None],
                    on_loop: Callable[[asyncio.AbstractEventLoop | None], None],
                    sock: socket.socket | None = None, timeout: float = 10.0) -> threading.Thread:
    """Serve on a registered thread called ``name``; returns it once it listens,
    or raises OSError with why not (uvicorn's exit when a port is taken), or an
    empty one.  ``on_loop`` is told the loop once it runs and None once it has
    closed (a hand-over meanwhile meets a closed loop's RuntimeError: catch it)."""
    failed: list[BaseException] = []
    done = threading.Event()

    def serve() -> None:
        try:
            with asyncio.Runner() as runner:
                loop = runner.get_loop()
                loop.set_exception_handler(door.loop_exception)  # out of descriptors: one line, no traceback
                on_loop(loop)
                runner.run(server.serve(sockets=[sock] if sock is not None else None))
        except BaseException as e:  # SystemExit from uvicorn when the port is taken
            failed.append(e)
        finally:
            on_loop(None)  # closed, every stream of it ended: a restart shares nothing with it
            done.set()

    thread = threads.spawn(name, serve, stop=stop)
    deadline = time.monotonic() + timeout
    while not server.started and not done.is_set() and time.monotonic() < deadline:
        time.sleep(0.005)
    if not server.started:
        raise OSError(repr(failed[0]) if failed else "")
    return thread

