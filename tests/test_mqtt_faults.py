"""The MQTT fault campaign's short version (qa/reliability/mqtt_faults.py; the
long one: ``python qa/reliability/run.py --mqtt-runs N --mqtt-cuts N``): power
cuts below SQLite with the broker away, and whole scripts with the broker and
the daemon SIGKILLed at random — every kept play arrives once."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from qa.reliability import mqtt_faults, powercut
from qa.reliability.broker import MOSQUITTO

pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed (test.sh installs it as root)")


@pytest.mark.skipif(not powercut.available(), reason="APSW (the crash VFS) is not installed")
def test_after_a_power_cut_the_outbox_holds_a_row_for_exactly_each_kept_play_and_each_arrives_once(
        tmp_path: Path) -> None:
    total = powercut.count_ops(10, overrides=mqtt_faults.cut_overrides(10))
    rng = random.Random(5)
    finished = 0
    for i, cut in enumerate(sorted(rng.sample(range(total // 2, total + 1), 3))):
        r = mqtt_faults.power_cut_run(10, cut, rng.randrange(1 << 30), tmp_path / str(i))
        assert r.ok, r.problems
        assert r.received == r.finished
        finished += r.finished
    assert finished >= 1  # at least one cut came after a play was kept


# Seeds whose runs lost plays before the campaign's broker could save (qa/reliability/broker.py:
# it dropped to a user that could not write its folder) — each kills both, several times.
@pytest.mark.parametrize("seed", [101, 104, 106])
def test_the_broker_and_the_daemon_killed_at_random_every_finished_play_arrives_once(
        seed: int, tmp_path: Path) -> None:
    r = mqtt_faults.fault_run(seed, tmp_path)
    assert r.ok, r.problems
    assert r.broker_kills and r.daemon_kills  # the run did kill both
    assert r.received == r.finished >= 1 and r.strays == 0
