"""The broker fixture is a real mosquitto that a paho 2.x client can publish
to and read back from (the MQTT tests stand on it), and it can be stopped."""

from __future__ import annotations

import threading
from typing import Any

import paho.mqtt.client as mqtt


def test_a_retained_message_published_to_the_fixture_broker_is_read_back(broker: Any) -> None:
    got: list[bytes] = []
    arrived = threading.Event()

    def on_message(client: Any, userdata: Any, msg: Any) -> None:
        got.append(msg.payload)
        arrived.set()

    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="fixture-pub")
    pub.connect(broker.host, broker.port)
    pub.loop_start()
    pub.publish("companion/t/status", b"online", qos=1, retain=True).wait_for_publish(5)
    pub.loop_stop()
    pub.disconnect()

    sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="fixture-sub")
    sub.on_message = on_message
    sub.connect(broker.host, broker.port)
    sub.subscribe("companion/+/status", qos=1)
    sub.loop_start()
    try:
        assert arrived.wait(5), "the retained status never arrived"
    finally:
        sub.loop_stop()
        sub.disconnect()
    assert got == [b"online"]
    broker.stop()
    assert broker.proc is None


def test_finding_a_persisting_broker_keeps_a_waiting_message_across_its_sigkill(tmp_path: Any) -> None:
    """The fault campaign's broker (``persist=True``) is to keep a venue's
    session and what waits in it on disk.  Run as root, mosquitto drops to its
    own user, which could not write the test's folder: every save failed
    ("Permission denied", in its log only), the broker kept nothing, and the
    campaign counted the plays a restart forgot as plays the table lost."""
    import time

    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    from tests.mosquitto import Broker

    b = Broker(tmp_path / "broker", persist=True).start()
    got: list[bytes] = []
    arrived = threading.Event()

    def venue() -> Any:
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="fixture-venue", protocol=mqtt.MQTTv5)
        c.on_message = lambda cl, u, m: (got.append(m.payload), arrived.set())
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = 3600
        c.connect(b.host, b.port, clean_start=False, properties=props)
        c.loop_start()
        return c

    try:
        v = venue()
        v.subscribe("companion/#", qos=1)[1]
        time.sleep(0.5)  # the SUBACK; the subscription is then a change the broker saves
        v.disconnect()
        v.loop_stop()
        pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="fixture-table", protocol=mqtt.MQTTv5)
        pub.connect(b.host, b.port)
        pub.loop_start()
        pub.publish("companion/t/play", b"p1", qos=1).wait_for_publish(5)
        pub.loop_stop()
        pub.disconnect()
        db = tmp_path / "broker" / "mosquitto.db"
        deadline = time.monotonic() + 10
        while not db.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.5)  # autosave_interval 1: the queued message is saved by now, if it can be
        b.stop(kill=True)
        b.start()
        v = venue()
        try:
            assert arrived.wait(10), "the message waiting for the venue did not outlive the broker's SIGKILL: " + (
                tmp_path / "broker" / "mosquitto.log").read_text(errors="replace")[-300:]
        finally:
            v.loop_stop()
            v.disconnect()
        assert got == [b"p1"]
    finally:
        b.stop()
