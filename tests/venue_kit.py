"""What the venue's tests share: a plain paho client standing for a table (it
publishes contract messages, docs/integrate/mqtt.md's, built here by hand: the venue trusts
no table's builder), finished plays from real simulated tables, and a wait."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from conftest import example_script

ROOT = Path(__file__).resolve().parent.parent
LOG_EVENTS = ("round_scored", "game_over", "formation", "onw_result", "mh_result", "dt_exit")


def wait(pred: Callable[[], Any], timeout: float = 10.0, what: str = "the condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


class Table:
    """One table's connection to the broker (a plain paho client)."""

    def __init__(self, broker: Any, ident: str, username: str | None = None, password: str | None = None) -> None:
        self.ident = ident
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"test-{ident}-{time.monotonic_ns()}")
        if username is not None:
            self.client.username_pw_set(username, password)
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def send(self, topic: str, payload: Any, retain: bool = False) -> None:
        """``payload``: bytes as they are, anything else as JSON; waits for the broker's PUBACK."""
        data = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
        info = self.client.publish(topic, data, qos=1, retain=retain)
        info.wait_for_publish(timeout=10)
        assert info.is_published(), topic

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def state(table: str, **kw: Any) -> dict[str, Any]:
    base = {"table": table, "game": None, "step": None, "waiting_for": [], "round": None, "totals": {},
            "deadline": None, "night": False, "lang": "en", "online": True}
    return {**base, **kw}


def simulate(script: str, start_wall: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A finished play of the example ``script`` (conftest.example_script) on a simulated table whose clock
    says ``start_wall`` when it begins, and its table events (wall times)."""
    from companion.app import config as configmod
    from companion.app.simulate import Simulation, load_script

    overrides, steps, draws = load_script(example_script(script))
    cfg = configmod.load(list(configmod.shipped_paths()), overrides)
    events: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="venue-sim-") as tmp:
        sim = Simulation(cfg, Path(tmp), events.append, draws=draws)
        try:
            sim.clock.jump_wall(start_wall - sim.clock.wall())
            for _line, kind, value in steps:
                sim.step(kind, value)
            plays = sim.app.journal.plays()
        finally:
            sim.close()
    assert len(plays) == 1, script
    return plays[0], [{**e, "t": start_wall + e["t"]} for e in events if e["event"] in LOG_EVENTS]


def renamed(value: Any, names: Mapping[str, str]) -> Any:
    """A play record or an event with the seats' names as the table's config
    would give them (``players: names:``): every string that is a seat's name."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [renamed(v, names) for v in value]
    if isinstance(value, dict):
        # a seat's id stays what it is: only names change
        return {renamed(k, names): v if k == "sourcePlayerId" else renamed(v, names) for k, v in value.items()}
    return value


def play_message(table: str, seq: int, record: Mapping[str, Any], sides: Mapping[str, tuple[str | None, int | None]],
                 evening: int = 1) -> dict[str, Any]:
    """The contract's ``play`` message: ``record`` as the journal keeps it (its
    id, evening and game beside the BG Stats record), ``sides``: name → (team, place)."""
    bgstats = {k: record[k] for k in ("rules", "playDate", "durationMin", "players")}
    players = [{"name": p["name"], "seat": p["sourcePlayerId"], "score": p["score"], "winner": p["winner"],
                "team": sides.get(p["name"], (None, None))[0], "place": sides.get(p["name"], (None, None))[1]}
               for p in record["players"]]
    return {"id": f"{table}/p/{seq}", "table": table, "play": bgstats, "game": record["game"], "evening": evening,
            "players": players}
