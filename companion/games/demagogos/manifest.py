"""Demagogos' Trap as the rest of the system knows it (core.manifest): each
exit published; every player alone, ranked by the place they left in, at a venue."""

from companion.core.manifest import Event, describe, name, whole
from companion.games.demagogos.engine import Demagogos

MANIFEST = describe(Demagogos, events=(
    Event("dt_exit", {"player": name(), "vp": whole(0), "place": whole(1)}),
), rating="places")
