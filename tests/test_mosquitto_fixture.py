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
