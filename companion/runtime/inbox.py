"""The loop's inbox: one queue every source puts into, from any thread
(``submit``: the ``companion.core.messages.Inbox`` every source is handed).

It is made before the loop and before any part, so that the composition root
(companion.app.wiring) can hand each part its way in when the part is built
(the panel, the pages, the MQTT link, the voice's and the backups' errors),
instead of late-binding them to a loop that does not exist yet.
"""

from __future__ import annotations

import queue
from typing import Any

from companion.core.events import ShellError


class Inbox(queue.Queue[Any]):
    """The loop takes from it on its own thread; anything may put."""

    def submit(self, item: Any) -> None:
        """An input, a ``ShellError``, an ``Aside`` or a callable (core.messages.Inbox)."""
        self.put(item)

    def report_error(self, message: str) -> None:
        """Something the shell survived: the loop logs it."""
        self.put(ShellError(message))
