"""What the table trusts on the broker, tried against a real mosquitto: the
documented set-up (docs/mqtt/companion.conf) binds each client id to its
user, so no login can take another's session; the table takes no command
from a retained message, tells the broker the largest packet it reads, and
logs and acts at a bounded rate whatever a flood sends it.  Waits are
bounded; nothing asserts a timing (a rate bound is derived from the time
the flood took, measured in the test)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from test_mqtt_link import TID, Listener, link, settle, table

from conftest import example_script
from mqtt import link as linkmod
from tests.mosquitto import Broker, documented_broker

USERS = {"venue": "venue-secret", "table-a": "a-secret", "table-b": "b-secret"}


def client(broker: Any, client_id: str, user: str | None = None, *, clean_start: bool = True,
           expiry_s: int = 0) -> paho.Client:
    """A bare MQTT 5 client, connected (CONNACK waited for, bounded)."""
    c = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
    if user is not None:
        c.username_pw_set(user, USERS[user])
    answered = threading.Event()
    c.on_connect = lambda *a: answered.set()
    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = expiry_s
    c.connect(broker.host, broker.port, clean_start=clean_start, properties=props)
    c.loop_start()
    assert answered.wait(10), "the broker never answered"
    return c


def bye(c: paho.Client) -> None:
    c.disconnect()
    c.loop_stop()


@pytest.fixture
def documented(tmp_path: Path) -> Iterator[Broker]:
    b = documented_broker(tmp_path / "broker", tmp_path, USERS)
    yield b
    b.stop()


# ------------------------------------------------------- borrowing a client id
def test_finding_a_table_using_the_venues_client_id_cannot_wipe_the_venues_queued_session(
        documented: Broker) -> None:
    got: list[str] = []
    # the venue as venue/subscriber.py holds it: clean start off, a session that outlives it
    venue = client(documented, "venue-hall", "venue", clean_start=False, expiry_s=7 * 86400)
    subscribed = threading.Event()
    venue.on_subscribe = lambda *a: subscribed.set()
    venue.subscribe("companion/+/play", qos=1)
    assert subscribed.wait(10)
    bye(venue)  # away: the broker queues for it
    a = client(documented, "companion-table-a", "table-a")
    for n in range(3):
        a.publish("companion/table-a/play", f'{{"id": "table-a/p/{n}"}}'.encode(), qos=1).wait_for_publish(10)
    bye(a)
    thief = client(documented, "venue-hall", "table-b", clean_start=True)  # the venue's id, a clean start
    bye(thief)
    venue = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="venue-hall", protocol=paho.MQTTv5)
    venue.username_pw_set("venue", USERS["venue"])
    venue.on_message = lambda c, u, m: got.append(m.payload.decode())
    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = 7 * 86400
    venue.connect(documented.host, documented.port, clean_start=False, properties=props)
    venue.loop_start()
    try:
        deadline = time.monotonic() + 10
        while len(got) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(got) == 3, f"{len(got)} of 3 plays queued for the venue arrived"
    finally:
        bye(venue)


def test_finding_a_table_using_another_tables_client_id_never_knocks_it_off(
        documented: Broker, tmp_path: Path) -> None:
    (tmp_path / "pw").write_text(USERS["table-a"] + "\n", encoding="utf-8")
    (tmp_path / "pw").chmod(0o600)
    board = Listener(documented, topic="companion/table-a/status", user=("venue", USERS["venue"]))
    t = table(tmp_path / "a", documented.address, table_id="table-a", username="table-a",
              password_file=str(tmp_path / "pw"))
    try:
        board.wait_for(lambda: any(p == b"online" for _, p, _ in board.got), pump=t)
        a = link(t)
        assert a._connection == 1 and linkmod.client_id(a.conf) == "table-a"  # what the broker calls it
        # table B logs in under table A's client ids: the link's, and its user name
        for stolen in ("companion-table-a", "table-a", "table-a"):
            bye(client(documented, stolen, "table-b"))
        settle(t, lambda: a._connected)
        time.sleep(1.5)  # a bounded look: a table knocked off reconnects after 1 s
        assert [p for _, p, _ in board.got if p == b"offline"] == [], "table A was knocked off"
        assert a._connection == 1, f"table A had to connect {a._connection} times"
    finally:
        t.close()
        board.close()


# ------------------------------------------------------------ retained commands
def _live_repeat_taken(t: Any, sender: paho.Client, mark: int) -> None:
    """Send live (not retained) ``repeat`` commands until the table takes one:
    its subscription is then in place, and any retained command, which the
    broker sends before anything newer, has been through the table's inbox."""
    for _ in range(40):
        sender.publish(f"companion/{TID}/command", b"repeat", qos=1).wait_for_publish(10)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            t.sim.loop.pump()
            if any(e["event"] == "accepted" and e["input"] == "repeat" for e in t.since(mark)):
                return
            time.sleep(0.02)
    raise AssertionError("the table took no live command")


def _nexts(t: Any, mark: int) -> list[dict[str, Any]]:
    """``next`` presses the table took (accepted or refused) since ``mark``."""
    return [e for e in t.since(mark) if e["event"] in ("accepted", "rejected") and e.get("input") == "next"]


def test_finding_a_retained_command_is_never_taken_at_start_or_after_a_broker_restart(tmp_path: Path) -> None:
    b = Broker(tmp_path / "broker", persist=True).start()
    presser = client(b, "presser")
    presser.publish(f"companion/{TID}/command", b"next", qos=1, retain=True).wait_for_publish(10)
    t = table(tmp_path / "s", b.address, commands=True)
    try:
        t.tap("game/one-night", "player/red", "player/blue", "player/green")
        _live_repeat_taken(t, presser, 0)
        assert not _nexts(t, 0), "a retained command was taken at start"
        b.restart()  # kept on disk: the retained command comes again at the table's new subscription
        mark = t.mark()
        settle(t, lambda: link(t)._connection >= 2)
        _live_repeat_taken(t, presser, mark)
        assert not _nexts(t, mark), "a retained command was taken after the broker restarted"
        assert [e for e in t.of("error") if "retained" in e["message"]]  # said (in the log), not taken
    finally:
        t.close()
        bye(presser)
        b.stop()


# ---------------------------------------------------------------------- size
def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


class PeakRss:
    """This process's resident set, sampled every 5 ms on a thread: its peak."""

    def __init__(self) -> None:
        self.base = self.peak = _rss_mib()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, _rss_mib())

    def stop(self) -> float:
        self._stop.set()
        self._thread.join(5)
        return self.peak - self.base


BIG = 64 * 2**20


def test_finding_64_mib_on_home_assistants_status_is_never_read_by_the_table(broker: Any, tmp_path: Path) -> None:
    import subprocess
    import sys

    from mqtt import homeassistant

    ha = Listener(broker, topic=homeassistant.config_topic(TID))
    t = table(tmp_path, broker.address)
    try:
        ha.wait_for(lambda: len(ha.got) >= 1, pump=t)  # the discovery at connection
        peak = PeakRss()
        # another process sends it (its 64 MiB are not ours): "online" and 64 MiB of blanks, a birth
        subprocess.run([sys.executable, "-c", (
            "import paho.mqtt.client as p, sys\n"
            "c = p.Client(p.CallbackAPIVersion.VERSION2, client_id='big', protocol=p.MQTTv5)\n"
            f"c.connect('{broker.host}', {broker.port}); c.loop_start()\n"
            f"c.publish('{homeassistant.HA_STATUS_TOPIC}', b'online' + b' ' * {BIG}, qos=1).wait_for_publish(60)\n"
            f"c.publish('{homeassistant.HA_STATUS_TOPIC}', b'online', qos=1).wait_for_publish(60)\n"
            "c.disconnect(); c.loop_stop()\n")], check=True, timeout=120)
        ha.wait_for(lambda: len(ha.got) >= 2, pump=t)  # the small birth's discovery
        time.sleep(homeassistant.REPUBLISH_S + 1.5)  # a bounded look for another
        grew = peak.stop()
        print(f"table RSS +{grew:.1f} MiB with 64 MiB on {homeassistant.HA_STATUS_TOPIC}")
        assert len(ha.got) == 2, "the 64 MiB birth reached the table's handler"
        assert grew < 32, f"the table's RSS grew {grew:.0f} MiB"
    finally:
        t.close()
        ha.close()


# --------------------------------------------------------------------- noise
def _flood(broker: Any, topic: str, payload: bytes, n: int) -> None:
    c = client(broker, f"flood-{time.monotonic_ns()}")
    try:
        infos = [c.publish(topic, payload, qos=1) for _ in range(n)]
        for info in infos:
            info.wait_for_publish(60)
    finally:
        bye(c)


def test_finding_5000_junk_commands_give_a_bounded_number_of_log_lines(broker: Any, tmp_path: Path) -> None:
    from mqtt import noise

    n = 5000
    t = table(tmp_path, broker.address, commands=True)
    try:
        settle(t, lambda: link(t)._connected)
        start = time.monotonic()
        _flood(broker, f"companion/{TID}/command", b"dance", n)

        def lines() -> list[str]:
            return [e["message"] for e in t.of("error") if "ignored" in e["message"] and "command" in e["message"]]

        seen = [-1, time.monotonic()]  # lines counted, and since when

        def still() -> bool:  # the lines have stopped coming for 2 s (every junk command said once, unbounded)
            if len(lines()) != seen[0]:
                seen[:] = [len(lines()), time.monotonic()]
            return time.monotonic() - seen[1] > 2.0

        settle(t, lambda: any("not logged" in line for line in lines()) or still(), timeout=90)
        took = time.monotonic() - start
        told = [line for line in lines() if "not logged" not in line]
        print(f"{len(lines())} log lines for {n} junk commands in {took:.1f} s")
        assert len(told) <= noise.LINES_BURST + noise.LINES_PER_S * took + 1, f"{len(told)} lines for {n} commands"
        settle(t, lambda: any("not logged" in line for line in lines()), timeout=30)  # what was left out is said
        summary = next(line for line in lines() if "not logged" in line)
        assert summary.startswith("mqtt: ") and int(summary.split()[1]) >= 1, summary
    finally:
        t.close()


def test_finding_a_flood_of_repeat_commands_is_spoken_at_a_bounded_rate(broker: Any, tmp_path: Path) -> None:
    from mqtt import noise

    n = 1000
    t = table(tmp_path, broker.address, commands=True)
    try:
        t.tap("game/one-night", "player/red", "player/blue", "player/green")
        settle(t, lambda: link(t)._connected)
        mark, start = t.mark(), time.monotonic()
        _flood(broker, f"companion/{TID}/command", b"repeat", n)

        def taken() -> int:
            return len([e for e in t.since(mark) if e["event"] == "accepted" and e.get("input") == "repeat"])

        settle(t, lambda: taken() >= n or any("not logged" in e["message"] for e in t.since(mark, "error")),
               timeout=90)
        took = time.monotonic() - start
        print(f"{taken()} of {n} repeat commands taken in {took:.1f} s")
        assert taken() <= noise.COMMANDS_BURST + noise.COMMANDS_PER_S * took + 1
    finally:
        t.close()


def test_finding_a_burst_of_home_assistant_births_republishes_the_discovery_a_bounded_number_of_times(
        broker: Any, tmp_path: Path) -> None:
    from mqtt import homeassistant

    n = 3000
    ha = Listener(broker, topic=homeassistant.config_topic(TID))
    t = table(tmp_path, broker.address)
    try:
        ha.wait_for(lambda: len(ha.got) >= 1, pump=t)
        start = time.monotonic()
        _flood(broker, homeassistant.HA_STATUS_TOPIC, b"online", n)
        time.sleep(homeassistant.REPUBLISH_S + 1.5)  # the burst's last birth is answered when its time is up
        took = time.monotonic() - start
        again = len(ha.got) - 1
        print(f"{again} discoveries for {n} births in {took:.1f} s")
        assert 1 <= again <= 1 + took / homeassistant.REPUBLISH_S + 1
    finally:
        t.close()
        ha.close()


def test_finding_the_documented_broker_refuses_a_big_message_on_a_tables_own_topic_before_anyone_reads_it(
        documented: Broker) -> None:
    board = Listener(documented, topic="companion/+/event", user=("venue", USERS["venue"]))
    a = client(documented, "a", "table-a")
    try:
        a.publish("companion/table-a/event", b"x" * 2**20, qos=1)  # 1 MiB: the broker hangs up on table A
        a.loop_stop()
        a = client(documented, "a", "table-a")  # back, within the contract's 64 KiB
        a.publish("companion/table-a/event", b"x" * 60_000, qos=1).wait_for_publish(10)
        board.wait_for(lambda: bool(board.got), timeout=10)
        assert [len(p) for _, p, _ in board.got] == [60_000], "the broker passed on a 1 MiB message"
    finally:
        bye(a)
        board.close()


# ----------------------------------------------------------------- bad files
@pytest.mark.parametrize("content", [None, b"", b"not a certificate\n"], ids=["missing", "empty", "junk"])
def test_finding_a_missing_or_junk_ca_file_is_named_with_its_problem(tmp_path: Path, content: bytes | None) -> None:
    from mqtt import forget

    ca = tmp_path / "venue-ca.pem"
    if content is not None:
        ca.write_bytes(content)
    t = table(tmp_path / "s", "127.0.0.1:1", tls={"ca_file": str(ca)})
    try:
        settle(t, lambda: any("cannot set up" in e["message"] for e in t.of("error")), timeout=10)
        line = next(e["message"] for e in t.of("error") if "cannot set up" in e["message"])
    finally:
        t.close()
    assert f"mqtt.tls.ca_file {ca}: " in line, line
    assert ("No such file" in line) if content is None else ("certificate" in line), line
    conf = linkmod.LinkConfig("t1", "127.0.0.1", 1, tls={"ca_file": str(ca)})
    with pytest.raises(forget.ForgetError, match=f"mqtt.tls.ca_file {ca}: "):
        forget.publish(conf, [], timeout_s=1)
    if content is not None:  # readable: doctor's own check passes it, the TLS library does not
        from companion.app import config, doctor

        r = doctor.check_mqtt(config.load([], {"mqtt": {"broker": "127.0.0.1:1", "tls": {"ca_file": str(ca)}}}),
                              doctor.Env())
        assert (r.status, r.detail) == (doctor.FAIL, line.split("cannot set up the link to 127.0.0.1:1: ")[1])


@pytest.mark.parametrize("mode", [0o644, 0o604])
def test_finding_a_password_file_everyone_can_read_is_said_at_start_and_by_doctor(tmp_path: Path, mode: int) -> None:
    from companion.app import config, doctor

    pw = tmp_path / "mqtt-password"
    pw.write_text("s3cret\n", encoding="utf-8")
    pw.chmod(mode)
    t = table(tmp_path / "s", "127.0.0.1:1", username="t1", password_file=str(pw))
    try:
        lines = [e["message"] for e in t.of("error") if "password_file" in e["message"]]
    finally:
        t.close()
    assert len(lines) == 1 and str(pw) in lines[0] and "readable by everyone" in lines[0], lines
    cfg = config.load([], {"mqtt": {"broker": "127.0.0.1:1", "username": "t1", "password_file": str(pw)}})
    r = doctor.check_mqtt_password_file(cfg, doctor.Env())
    assert r.status == "WARN" and str(pw) in r.detail and f"chmod 640 {pw}" in r.fix, r
    pw.chmod(0o640)  # the service's group may read it: fine
    assert doctor.check_mqtt_password_file(cfg, doctor.Env()).status == doctor.OK
    t = table(tmp_path / "s2", "127.0.0.1:1", username="t1", password_file=str(pw))
    try:
        assert not [e for e in t.of("error") if "password_file" in e["message"]]
    finally:
        t.close()
    assert doctor.check_mqtt_password_file(config.load([], {}), doctor.Env()).status == doctor.SKIP


@pytest.mark.parametrize("flag", ["--table-id", "--mqtt"])
def test_finding_forget_with_an_empty_table_id_or_broker_refuses_and_touches_nothing(
        broker: Any, flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    from companion.app import cli

    seen = Listener(broker, topic="homeassistant/#")
    try:
        argv = {"--table-id": ["--mqtt", broker.address, "--table-id", ""],
                "--mqtt": ["--mqtt", "", "--table-id", TID]}[flag]
        code = cli.main(["mqtt", "forget", *argv])
        err = capsys.readouterr().err
        time.sleep(0.5)  # a bounded look: nothing may come
        assert code == 1 and len(err.strip().splitlines()) == 1 and "''" in err, err
        assert seen.got == [], "forget acted on this table"
    finally:
        seen.close()


def test_finding_on_a_full_disk_the_outbox_says_the_disk_is_full_not_cannot_rollback(tmp_path: Path) -> None:
    import sqlite3

    from test_mqtt_link import play

    from companion.app.simulate import load_script
    from companion.runtime.outbox import OutboxStore

    script = load_script(example_script("seven-knights.yaml"))
    t = table(tmp_path, "127.0.0.1:1", script)  # nobody listens: the plays wait in the outbox
    try:
        play(t, script)
    finally:
        t.close()

    class FullDisk:
        """The journal's connection on a disk that filled: a write fails with
        SQLITE_FULL, and SQLite has rolled the whole transaction back itself
        (it may, on SQLITE_FULL: www.sqlite.org/lang_transaction.html)."""

        def __init__(self) -> None:
            self.db = sqlite3.connect(str(tmp_path / "journal.sqlite"), isolation_level=None,
                                      check_same_thread=False)

        def execute(self, sql: str, *args: Any) -> Any:
            return self.db.execute(sql, *args)

        def executemany(self, sql: str, rows: Any) -> Any:
            if sql.lstrip().upper().startswith(("INSERT", "DELETE")) and self.db.in_transaction:
                self.db.execute("ROLLBACK")
                raise sqlite3.OperationalError("database or disk is full")
            return self.db.executemany(sql, rows)

        def close(self) -> None:
            self.db.close()

        @property
        def in_transaction(self) -> bool:
            return self.db.in_transaction

    outbox = OutboxStore(tmp_path / "journal.sqlite", FullDisk)
    try:
        rows = outbox.pending(limit=1000)
        assert rows
        with pytest.raises(Exception) as caught:
            outbox.done([r.n for r in rows])
        assert "full" in str(caught.value) and "rollback" not in str(caught.value), caught.value
        assert len(outbox.pending(limit=1000)) == len(rows)  # nothing half done
    finally:
        outbox.close()


def test_lines_of_a_kind_come_at_a_bounded_rate_and_what_was_left_out_is_counted_in_one_line() -> None:
    from mqtt import noise

    now = [0.0]
    said: list[str] = []
    lines = noise.Lines(said.append, burst=2, per_s=0.5, clock=lambda: now[0])
    for i in range(10):
        lines.note("ignored commands", f"junk {i}")
    lines.note("errors of the link", "disk full")  # another kind is never hidden by the flood
    lines.flush()  # no token yet: the count waits
    assert said == ["junk 0", "junk 1", "disk full"]
    now[0] = 2.0
    lines.flush()
    assert said[-1] == "mqtt: 8 more ignored commands not logged (at most 2 at once, then one every 2 s)"
    lines.flush()
    assert len(said) == 4  # said once
