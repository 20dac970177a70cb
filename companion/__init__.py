"""The table companion: rule engines, the table loop, the journal and the clock.

Import direction: ``companion.games`` imports nothing outside itself but
``companion.events``; the core (``session``, ``loop``, ``store``, ``clock``)
never imports ``hardware`` or ``voice``.  Only the composition root
(``companion.app``, ``companion.cli``) wires the shell to the core.
"""

__version__ = "0.1.0"
