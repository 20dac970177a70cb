"""The MQTT fault campaign: between a table and the venue nothing
is lost and nothing is doubled, whatever fails.

Each run plays a random table script (qa/reliability/scripts.py) on the real
daemon (``companion run --simulate --json``, qa/reliability/proc.py) with
``mqtt:`` naming a real mosquitto on a loopback port (qa/reliability/broker.py),
and a venue (venue/app.py, in this process, a persistent session) listening.
Between steps, at random, the broker is SIGKILLed and started again a moment
later, and the daemon is SIGKILLed (a few milliseconds after an answer, while
its link may be publishing) and started again on its journal.  At the end the
broker and the daemon run undisturbed until the daemon's outbox is empty, and
the venue's plays are compared with the plays in the table's journal:

    finished   the plays the journal holds (its ``plays`` table)
    received   the plays the venue stored, by id
    lost       finished but never received       (must be 0)
    doubled    received twice as a play           (0 by construction: the
               venue keys plays by id; ``repeats`` counts the messages the
               broker delivered again and the venue dropped — QoS 1 is
               at-least-once, the id is what makes it exactly once)
    strays     received but never finished        (must be 0)

Power cuts (``power_cut_run``) go below SQLite with the crash VFS of
qa/reliability/powercut.py: the table plays with a broker that is not there, the
power goes at a random write, and the journal must hold an outbox row for
exactly the plays it holds (the row and the play are one transaction); then
the table starts again with the broker up and the venue must receive each of
those plays once.
"""

from __future__ import annotations

import json
import random
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from companion.runtime.journal import epoch_of, read_only
from companion.runtime.outbox import OutboxStore, play_message_id
from qa.reliability.broker import Broker, free_port
from qa.reliability.crash import _do_step
from qa.reliability.inproc import campaign_overrides
from qa.reliability.proc import Daemon
from qa.reliability.scripts import generate

DRAIN_TIMEOUT_S = 60.0  # broker and daemon both up: the outbox must empty within this


@dataclass
class FaultResult:
    seed: int
    finished: int = 0
    received: int = 0
    lost: int = 0
    strays: int = 0
    repeats: int = 0  # messages the broker delivered again, dropped by the venue by id
    broker_kills: int = 0
    daemon_kills: int = 0
    power_cut: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.strays or self.problems)


def table_id(seed: int) -> str:
    return f"fault-{seed % 100000}"


def write_config(path: Path, seed: int, broker: str) -> Path:
    cfg = {**campaign_overrides(seed), "voice": {"backend": "silent"}, "web": {"listen": None},
           "mqtt": {"broker": broker, "table_id": table_id(seed), "homeassistant": False}}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def journal_plays(state: Path, tid: str) -> set[str]:
    """The ids the journal's plays are published with."""
    db = read_only(state / "journal.sqlite")
    try:
        epoch = epoch_of(db)
        return {play_message_id(tid, row[0], epoch) for row in db.execute("SELECT id FROM plays")}
    finally:
        db.close()


def outbox_ids(state: Path, unconfirmed: bool = False) -> list[str]:
    """The ids waiting in the journal's outbox, in order; ``unconfirmed``: and
    those the broker acknowledged that wait to be confirmed (mqtt/link.py)."""
    store = OutboxStore(state / "journal.sqlite")
    try:
        return [letter.id for letter in [*store.pending(limit=1 << 30), *(store.unconfirmed() if unconfirmed else ())]]
    finally:
        store.close()


class _Venue:
    """The venue in this process, on its own state directory, with no pages."""

    def __init__(self, state: Path, port: int, ident: str) -> None:
        from venue.app import Venue

        self.state = state
        self.venue = Venue(state, ("127.0.0.1", port), None, ident=ident, report=lambda _m: None).start()
        if not self.venue.ear.subscribed.wait(20):
            raise RuntimeError("the venue never subscribed")

    def plays(self, tid: str) -> set[str]:
        with self.venue.store.lock:
            rows = self.venue.store.db.execute("SELECT id FROM plays WHERE table_id=?", (tid,)).fetchall()
        return {str(r[0]) for r in rows}

    def repeats(self) -> int:
        return self.venue.store.counts()["duplicates"]

    def stop(self) -> None:
        self.venue.stop()


def _restart_later(broker: Broker, delay: float) -> threading.Thread:
    def again() -> None:
        time.sleep(delay)
        broker.start()
    t = threading.Thread(target=again, daemon=True, name="broker-restart")
    t.start()
    return t


def _settle(res: FaultResult, state: Path, venue: _Venue, tid: str, daemon: Daemon) -> None:
    """Broker and daemon up and undisturbed: wait (bounded) until the outbox is
    empty and the venue holds what the journal finished, then count."""
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    finished = journal_plays(state, tid)
    while time.monotonic() < deadline:
        if not outbox_ids(state) and finished <= venue.plays(tid):
            break
        time.sleep(0.1)
    else:
        left = outbox_ids(state)
        res.problems.append(f"not delivered within {DRAIN_TIMEOUT_S:.0f} s: {len(left)} outbox rows left "
                            f"({left[:3]}), daemon alive={daemon.alive()}")
    got = venue.plays(tid)
    res.finished, res.received = len(finished), len(got & finished)
    res.lost, res.strays = len(finished - got), len(got - finished)
    res.repeats = venue.repeats()


def fault_run(seed: int, workdir: Path | None = None, *, broker_kill_p: float = 0.08,
              daemon_kill_p: float = 0.05) -> FaultResult:
    """One script with the broker and the daemon killed at random between steps."""
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="companion-mqtt-faults-") as tmp:
            return fault_run(seed, Path(tmp), broker_kill_p=broker_kill_p, daemon_kill_p=daemon_kill_p)
    rng = random.Random(seed)
    res = FaultResult(seed)
    tid = table_id(seed)
    # A broker that forgets on restart would lose the venue's queue with it: the
    # venue's side of the guarantee needs mosquitto's persistence (docs/integrate/mqtt.md).
    broker = Broker(workdir / "broker", persist=True).start()
    venue = _Venue(workdir / "venue", broker.port, f"venue-faults-{seed}")
    state = workdir / "state"
    config = write_config(workdir / "companion.yaml", seed, broker.address)
    daemon = Daemon(state, config)
    restarts: list[threading.Thread] = []
    try:
        for step in generate(seed).steps:
            restarting = bool(restarts) and restarts[-1].is_alive()
            if not restarting and rng.random() < broker_kill_p:
                broker.stop(kill=True)
                res.broker_kills += 1
                restarts.append(_restart_later(broker, rng.uniform(0.05, 1.5)))
            if _do_step(daemon, step) is None and not daemon.killed:
                res.problems.append(f"the daemon stopped answering at {step.command()!r}: {daemon.stderr[-2:]}")
                break
            if rng.random() < daemon_kill_p:
                time.sleep(rng.choice([0.0, rng.uniform(0, 0.01), rng.uniform(0, 0.1)]))
                daemon.kill()
                daemon.finish()
                res.daemon_kills += 1
                daemon = Daemon(state, config)
        for t in restarts:
            t.join(5)
        if broker.proc is None:
            broker.start()
        _settle(res, state, venue, tid, daemon)
    finally:
        if daemon.quit() is None:
            res.problems.append("the daemon would not quit")
        venue.stop()
        broker.stop()
    return res


def power_cut_run(seed: int, cut_after: int, cut_seed: int, workdir: Path | None = None) -> FaultResult:
    """A power cut at VFS operation ``cut_after`` while the broker is away;
    then the table and the broker up: every play the journal kept arrives once."""
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="companion-mqtt-cut-") as tmp:
            return power_cut_run(seed, cut_after, cut_seed, Path(tmp))
    from qa.reliability.inproc import Runner, close_quickly, load_config
    from qa.reliability.powercut import fork_play

    res = FaultResult(seed, power_cut=True)
    tid = table_id(seed)
    state = workdir / "state"
    state.mkdir(parents=True)
    away = f"127.0.0.1:{free_port()}"  # nothing listens there: every row stays in the outbox
    overrides = {**campaign_overrides(seed), "mqtt": {"broker": away, "table_id": tid, "homeassistant": False}}
    events = fork_play(state, seed, cut_after, cut_seed, overrides=overrides)
    if crash := [e for e in events if e["event"] == "_crash"]:
        res.problems.append(f"the run before the cut failed: {crash[0]['error']}")
        return res
    if not (state / "journal.sqlite").exists():
        return res  # cut before the journal was made: nothing was finished
    broker = Broker(workdir / "broker").start()
    venue = _Venue(workdir / "venue", broker.port, f"venue-cut-{seed}-{cut_after}")
    runner = None
    try:
        runner = Runner(state, load_config({**overrides, "mqtt": {**overrides["mqtt"], "broker": broker.address}}))
        finished = journal_plays(state, tid)
        # One row a play, no more, no less: waiting, or acknowledged already (the table
        # is up and may have sent it: it then waits to be confirmed).  Reading only what
        # waits raced the link: a row acknowledged, not yet at the venue, was found nowhere.
        rows = {i for i in outbox_ids(state, unconfirmed=True) if "/p/" in i}
        if rows != finished:
            missing, extra = finished - rows, rows - finished
            res.problems.append(f"outbox after the cut: plays without a row {sorted(missing)[:3]}, "
                                f"rows without a play {sorted(extra)[:3]}")
        _settle(res, state, venue, tid, _Alive())
    finally:
        if runner is not None:
            close_quickly(runner.sim)
        venue.stop()
        broker.stop()
    return res


class _Alive:
    """Stands for the daemon in ``_settle``'s message when the table runs in this process."""

    def alive(self) -> bool:
        return True


def campaign(runs: int, cuts: int, seed: int, *, progress: Any = None) -> tuple[list[FaultResult], float]:
    """``runs`` scripts with kills, then ``cuts`` power cuts (needs APSW)."""
    from qa.reliability import powercut

    t0 = time.monotonic()
    results: list[FaultResult] = []
    rng = random.Random(seed)
    for i in range(runs):
        results.append(fault_run(seed + i))
        if progress:
            progress(results[-1])
    if cuts and powercut.available():
        script = seed
        total = powercut.count_ops(script, overrides=cut_overrides(script))
        for _ in range(cuts):
            results.append(power_cut_run(script, rng.randint(1, total), rng.randrange(1 << 30)))
            if progress:
                progress(results[-1])
    return results, time.monotonic() - t0


def cut_overrides(seed: int) -> dict[str, Any]:
    return {**campaign_overrides(seed), "mqtt": {"broker": f"127.0.0.1:{free_port()}", "table_id": table_id(seed),
                                                 "homeassistant": False}}


def summary(results: list[FaultResult], seconds: float) -> list[tuple[str, str]]:
    runs = [r for r in results if not r.power_cut]
    cuts = [r for r in results if r.power_cut]
    return [
        ("runs (kills) / power cuts", f"{len(runs)} / {len(cuts)}"),
        ("broker SIGKILLs", str(sum(r.broker_kills for r in runs))),
        ("daemon SIGKILLs", str(sum(r.daemon_kills for r in runs))),
        ("plays finished", str(sum(r.finished for r in results))),
        ("plays received at the venue", str(sum(r.received for r in results))),
        ("lost", str(sum(r.lost for r in results))),
        ("doubled at the venue", str(sum(r.strays for r in results))),
        ("repeats delivered (dropped by id)", str(sum(r.repeats for r in results))),
        ("failed runs", str(sum(not r.ok for r in results))),
        ("seconds", f"{seconds:.0f}"),
    ]


def as_json(results: list[FaultResult]) -> str:
    return json.dumps([r.__dict__ | {"ok": r.ok} for r in results], indent=1)
