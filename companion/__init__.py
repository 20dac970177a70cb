"""The table companion.

Layers, and the one direction of imports (``tests/test_layers.py``)::

    companion.core      pure values and state machines: events, the engine
                        interface, the table between games, tag identities
    companion.games     one package per game, importing only the core
    companion.runtime   the loop, the router, the journal, draws, the clock
    companion.app       config, wiring, and the commands (daemon, simulate …)
    hardware, voice     the shell: devices, importing only the core

``companion.app`` is the only place that imports everything.
"""

__version__ = "0.1.0"
