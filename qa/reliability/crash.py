"""One crash run: a random table script played on the real daemon, killed
with SIGKILL at random instants, restarted on the same state directory and
finished; then compared with the same script run uninterrupted.

What is checked:
- every input whose ``accepted`` event was printed before a kill is in the
  journal (at most one more, whose event the kill cut off, may be);
- after each restart the daemon first says where it is (``table.ready``,
  ``table.resumed_gathering`` or ``table.resumed_game`` then the game's
  ``*.resume.*`` line), matching where the reference run was;
- each step's answer (accepted / rejected and why) equals the reference's;
- at the end, the journal's inputs (timers aside: a resumed night replays its
  turn) equal the reference's — none lost, none doubled — and so do the
  plays and the per-game totals (what ``companion scores`` adds up);
- the daemon never prints a traceback and exits 0 on ``quit``.
"""

from __future__ import annotations

import random
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from qa.reliability.inproc import Reference, label, read_journal, run_script, same_input, totals
from qa.reliability.proc import Daemon
from qa.reliability.scripts import ONW_FAST, PANEL_FAST, RETRY_S, Script, generate

RESPONSE_TIMEOUT_S = 20.0
_REFERENCE_LOCK = threading.Lock()
RETRY_FOR_S = 60.0  # a retry step (night, vote count) must be taken within this


@dataclass
class CrashResult:
    seed: int
    games: list[str]
    steps: int
    kills: int = 0
    checked: int = 0  # journaled inputs verified at the end
    lost: int = 0
    doubled: int = 0
    mismatches: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    script_yaml: str = ""

    @property
    def ok(self) -> bool:
        return not (self.lost or self.doubled or self.mismatches or self.problems)

    def problem(self, text: str) -> None:
        self.problems.append(text)


def write_config(path: Path, seed: int = 1) -> Path:
    """The ``--config`` file of the campaign: a fast One Night night, a short
    long-press, a fixed seed."""
    cfg = {"seed": seed, "games": ONW_FAST, "panel": PANEL_FAST}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def plan_kills(rng: random.Random, steps: int, max_kills: int) -> list[tuple[int, float]]:
    """(step index, delay after that step starts); the same index twice means
    the second kill lands while the restarted daemon replays its journal."""
    n = 1 if max_kills <= 1 else rng.choice([1, 1, 2] if max_kills == 2 else list(range(1, max_kills + 1)))
    kills = []
    for _ in range(n):
        at = rng.randrange(steps)
        delay = rng.choice([rng.uniform(0, 0.004), rng.uniform(0, 0.06), rng.uniform(0, 0.4)])
        kills.append((at, delay))
    return sorted(kills)


class _Killer:
    """Arms at most one SIGKILL at a time, on a timer thread."""

    def __init__(self) -> None:
        self.timer: threading.Timer | None = None

    def arm(self, daemon: Daemon, delay: float) -> None:
        self.cancel()
        self.timer = threading.Timer(delay, daemon.kill)
        self.timer.daemon = True
        self.timer.start()

    def armed(self) -> bool:
        """A kill is set and has not happened yet."""
        return self.timer is not None and self.timer.is_alive()

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def crash_run(seed: int, workdir: Path | None = None, *, max_kills: int = 2,
              script: Script | None = None,
              tamper: Callable[[Path], None] | None = None) -> CrashResult:
    """``tamper(state_dir)`` runs after each kill, before the restart: the
    tests use it to break the journal on purpose and see the run notice."""
    t0 = time.monotonic()
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="companion-crash-") as tmp:
            return crash_run(seed, Path(tmp), max_kills=max_kills, script=script, tamper=tamper)
    rng = random.Random(seed * 7919 + 17)
    script = script or generate(seed)
    res = CrashResult(seed, script.games, len(script.steps))
    try:
        with _REFERENCE_LOCK:  # in-process simulations, one at a time
            ref = run_script(script, workdir / "reference")
    except Exception as e:  # e.g. a config the tree cannot load right now: report, go on
        res.problem(f"reference run failed: {type(e).__name__}: {e}")
        res.seconds = time.monotonic() - t0
        return res
    res.script_yaml = script.yaml(ref.waits)
    config = write_config(workdir / "companion.yaml")
    state = workdir / "state"
    state.mkdir()
    kills = plan_kills(rng, len(script.steps), max_kills)
    try:
        _interrupted(script, ref, state, config, kills, res, tamper)
    except Exception as e:  # the harness must report, not die
        res.problem(f"harness error: {type(e).__name__}: {e}")
    _compare(ref, state, res)
    res.seconds = time.monotonic() - t0
    return res


def _nontimer_labels(state: Path) -> list[str]:
    inputs, _ = read_journal(state)
    return [label(i) for i in inputs]


def _interrupted(script: Script, ref: Reference, state: Path, config: Path,
                 kills: list[tuple[int, float]], res: CrashResult,
                 tamper: Callable[[Path], None] | None = None) -> None:
    steps = script.steps
    ref_steps = ref.journaled_steps
    killer = _Killer()
    pending = list(kills)
    pos = 0
    journal_before = 0  # journaled (non-timer) inputs when this daemon started
    daemon = Daemon(state, config)
    first_start = True

    def arm_due() -> None:
        if pending and pending[0][0] <= pos:
            _, delay = pending.pop(0)
            killer.arm(daemon, delay)

    while True:
        if not first_start:
            _check_resume(daemon, ref, pos, res)
        first_start = False
        arm_due()
        died = False
        while pos < len(steps):
            arm_due()
            resp = _do_step(daemon, steps[pos])
            if resp is None:
                died = True
                break
            _compare_response(pos, steps[pos], resp, ref, res)
            pos += 1
        if not died and (killer.armed() or pending):
            # The planned instant fell after the last answer: kill now instead,
            # so every run has its kills.
            killer.cancel()
            if pending:
                pending.pop(0)
            daemon.kill()
            died = True
        killer.cancel()
        if not died:
            rc = daemon.quit()
            if rc != 0:
                res.problem(f"quit: exit code {rc}")
            _check_lifetime(daemon, state, journal_before, res, finished=True)
            if tb := daemon.traceback():
                res.problem(f"traceback: {tb.splitlines()[-1]}")
            return
        daemon.finish()
        if not daemon.killed:
            res.problem(f"daemon died on its own at step {pos} ({steps[pos]}): "
                        f"{(daemon.traceback() or ' '.join(daemon.stderr[-3:]))[-300:]}")
            return
        res.kills += 1
        if tamper is not None:
            tamper(state)
        if tb := daemon.traceback():
            res.problem(f"traceback before the kill: {tb.splitlines()[-1]}")
        k = _check_lifetime(daemon, state, journal_before, res, finished=False)
        if k > len(ref_steps):
            res.problem(f"journal holds {k} inputs, the whole reference only {len(ref_steps)}")
            return
        pos = ref_steps[k - 1] + 1 if k else 0
        journal_before = k
        daemon = Daemon(state, config)


def _do_step(daemon: Daemon, step: Any) -> dict[str, Any] | None:
    """Send one step (a retry step until accepted); its answer, or None if the daemon died."""
    deadline = time.monotonic() + RETRY_FOR_S
    while True:
        start = daemon.mark()
        if not daemon.send(step.command()):
            return None
        _, resp = daemon.response(start, RESPONSE_TIMEOUT_S)
        if resp is None:
            if daemon.alive() and not daemon.killed:
                daemon.kill()  # hung: no answer within the timeout
                daemon.killed = False
                daemon.stderr.append(f"harness: no answer to {step.command()!r} within {RESPONSE_TIMEOUT_S} s")
            return None
        if not step.retry or resp["event"] == "accepted" or time.monotonic() > deadline:
            return resp
        time.sleep(RETRY_S)


def _compare_response(i: int, step: Any, resp: dict[str, Any], ref: Reference, res: CrashResult) -> None:
    want = ref.responses[i]
    if want is None:
        return
    got = (resp["event"], resp.get("input"), resp.get("reason"))
    exp = (want["event"], want.get("input"), want.get("reason"))
    if got != exp:
        res.mismatches += 1
        res.problem(f"step {i} {step.kind} {step.value}: daemon {got}, reference {exp}")


def _check_lifetime(daemon: Daemon, state: Path, journal_before: int, res: CrashResult,
                    *, finished: bool) -> int:
    """Every accepted event this daemon printed is in the journal, in order;
    returns how many inputs the journal holds now."""
    printed = [e["input"] for e in daemon.events if e["event"] == "accepted" and e["input"] != "repeat"]
    now = _nontimer_labels(state)
    new = now[journal_before:]
    common = 0
    while common < min(len(printed), len(new)) and same_input(printed[common], new[common]):
        common += 1
    if common < len(printed):
        res.lost += len(printed) - common
        res.problem(f"accepted but not journaled: {printed[common:]} (journal has {new[common:]})")
    extra = len(new) - len(printed)
    if extra > (0 if finished else 1):
        res.problem(f"{extra} journaled inputs without an accepted event: {new[len(printed):]}")
    return len(now)


RESUME_KEYS = {"idle": ("table.ready",), "gathering": ("table.resumed_gathering",),
               "playing": ("table.resumed_game",)}


def _check_resume(daemon: Daemon, ref: Reference, pos: int, res: CrashResult) -> None:
    """The restarted daemon's first line says where the table is."""
    i, started = daemon.wait_event(lambda e: e["event"] == "started", 0, RESPONSE_TIMEOUT_S)
    if started is None:
        return  # killed during start-up; the next start is checked
    j, say = daemon.wait_event(lambda e: e["event"] == "say", i, RESPONSE_TIMEOUT_S)
    if say is None:
        return
    phase = ref.phases[pos - 1] if pos else "idle"
    if say["key"] not in RESUME_KEYS[phase]:
        res.mismatches += 1
        res.problem(f"after restart at step {pos} ({phase}) the first line was {say['key']}")
    elif phase == "playing":
        game = ("skb.resume.", "onw.resume.")
        _, line = daemon.wait_event(lambda e: e["event"] == "say" and e["key"].startswith(game), j, 5.0)
        if line is None and not daemon.killed:
            res.mismatches += 1
            res.problem(f"after restart at step {pos}: no game resume line")


def _compare(ref: Reference, state: Path, res: CrashResult) -> None:
    try:
        inputs, plays = read_journal(state)
    except Exception as e:
        res.problem(f"journal unreadable: {e}")
        return
    got = Counter(map(label, inputs))
    want = Counter(map(label, ref.inputs))
    res.lost += sum((want - got).values())
    res.doubled += sum((got - want).values())
    res.checked += len(ref.inputs)
    if inputs != ref.inputs:
        res.mismatches += 1
        first = next((i for i, (a, b) in enumerate(zip(inputs, ref.inputs, strict=False)) if a != b),
                     min(len(inputs), len(ref.inputs)))
        res.problem(f"journal differs from the reference at input {first}: "
                    f"{inputs[first:first + 3]} vs {ref.inputs[first:first + 3]}")
    if plays != ref.plays:
        res.mismatches += 1
        res.problem(f"plays differ: {plays} vs {ref.plays}")
    elif totals(plays) != totals(ref.plays):
        res.mismatches += 1
        res.problem("totals differ")
    if len(ref.plays) != len(res.games):
        res.problem(f"the reference finished {len(ref.plays)} of {len(res.games)} games (generator)")
