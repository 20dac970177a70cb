"""The loop's timers (companion/runtime/timers.py): re-arming replaces, cancelling drops."""

from __future__ import annotations

from companion.runtime.timers import Timers


def test_timers_fire_in_order_rearmed_once_cancelled_never() -> None:
    t = Timers()
    t.arm("a", 5.0)
    t.arm("b", 2.0)
    t.arm("a", 1.0)  # replaces the first "a"
    t.arm("c", 3.0)
    t.cancel("c")
    assert t.pending() == {"a": 1.0, "b": 2.0}
    fired = []
    while t.next_due() <= 10.0:
        fired.append(t.pop())
    assert fired == [(1.0, "a"), (2.0, "b")] and t.next_due() == float("inf")
