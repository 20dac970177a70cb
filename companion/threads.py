"""The one registry of worker threads (after gpiozero's ``threads.py``).

It stands beside the pure core, never in it (the core starts no thread):
every thread the daemon runs — the panel's output worker, the reader's
supervisor, the voice's workers, the background prerender, the terminal, the
web server — is started here with a name and a way to stop it, so shutdown
is one call that stops them in the reverse order they started and joins each,
and a thread that will not stop is named rather than silently left behind.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_lock = threading.Lock()


@dataclass
class Worker:
    thread: threading.Thread
    stop: Callable[[], None] | None  # asks the thread to finish (sets its event, posts a sentinel…)

    @property
    def name(self) -> str:
        return self.thread.name


_workers: list[Worker] = []


def spawn(name: str, target: Callable[..., Any], *args: Any, stop: Callable[[], None] | None = None,
          **kwargs: Any) -> threading.Thread:
    """Start ``target(*args, **kwargs)`` on a daemon thread called ``name``;
    ``stop`` is how shutdown asks it to end (None: it ends by itself, or is
    a daemon thread that may be abandoned at exit, like one blocked on input)."""
    thread = threading.Thread(target=target, args=args, kwargs=kwargs, name=name, daemon=True)
    with _lock:
        _workers[:] = [w for w in _workers if w.thread.is_alive()]
        _workers.append(Worker(thread, stop))
    thread.start()
    return thread


def running() -> list[str]:
    """The names of the registered threads still alive."""
    with _lock:
        return [w.name for w in _workers if w.thread.is_alive()]


def shutdown(timeout: float = 2.0, only: Callable[[Worker], bool] | None = None) -> list[str]:
    """Stop (newest first) and join every registered thread — or those ``only``
    picks; returns the names of those still alive after ``timeout`` each."""
    with _lock:
        chosen = [w for w in reversed(_workers) if only is None or only(w)]
    for w in chosen:
        if w.stop is not None:
            try:
                w.stop()
            except Exception:  # a stop hook must not keep the others from stopping
                pass
    stuck = []
    for w in chosen:
        if w.thread is not threading.current_thread():
            w.thread.join(timeout if w.stop is not None else 0)
        if w.thread.is_alive() and w.stop is not None:
            stuck.append(w.name)
    with _lock:
        _workers[:] = [w for w in _workers if w.thread.is_alive()]
    return stuck


class Beside:
    """One call made on a thread of its own (``spawn``) while the caller does
    something else; ``result()`` waits for it, then returns what it returned
    or raises what it raised, in the caller's thread."""

    def __init__(self, name: str, target: Callable[..., Any], *args: Any) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = spawn(name, self._run, target, args)

    def _run(self, target: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            self._value = target(*args)
        except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread by result()
            self._error = e

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value
