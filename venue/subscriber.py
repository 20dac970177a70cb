"""The venue's ear on the broker: paho-mqtt 2.x, client id ``venue-<host>``,
``companion/+/#`` at QoS 1 on a persistent session, so what the tables sent
while the venue was down waits for it on the broker.

The session: MQTT 5 with ``clean_start`` off and a session expiry interval
(``SESSION_S``): mosquitto keeps the subscription and queues QoS 1 messages
for the venue while it is away, for that long (MQTT 3.1.1 brokers: a clean
session off, kept as long as the broker's ``persistent_client_expiration``).
Every message goes through ``schema.check`` into the store, and is
acknowledged only once it is committed (``manual_ack``): a venue killed
between hearing and keeping a message hears it again.  A broker down or
refusing us: paho reconnects with a backoff (1 s doubling to 30 s) and the
venue says so once, and once more when it is back.
"""

from __future__ import annotations

import logging
import re
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from venue import schema
from venue.store import Change, Store

TOPIC = "companion/+/#"
SESSION_S = 7 * 24 * 3600  # a week: a venue off between two games nights still hears what it missed
BACKOFF_S = (1, 30)
SAY_AGAIN_S = 60.0  # a topic refused again within this is counted, not said again (a flood is a line a minute)
log = logging.getLogger("venue")


def client_id(host: str | None = None) -> str:
    """``venue-<host>``: the host name, lower-cased, anything but [a-z0-9-] made "-"."""
    name = re.sub(r"[^a-z0-9-]", "-", (host or socket.gethostname()).lower())[:32] or "host"
    return f"venue-{name}"


class Subscriber:
    """``notify(change)`` is called on paho's thread for each change the
    pages may show; ``report(line)`` for what the venue survived."""

    def __init__(self, store: Store, host: str, port: int, *, ident: str | None = None,
                 username: str | None = None, password: str | None = None, ca_file: str | None = None,
                 notify: Callable[[Change], None] = lambda c: None,
                 report: Callable[[str], None] = log.warning, now: Callable[[], float] = time.time) -> None:
        self.store, self.host, self.port = store, host, port
        self.notify, self.report, self.now = notify, report, now
        self.ident = ident or client_id()
        self.connected = threading.Event()
        self.subscribed = threading.Event()  # the broker confirmed companion/+/# (SUBACK): messages flow
        self.heard = 0  # messages taken (kept or refused)
        self._down_said = False
        self._refusal_said: dict[str, float] = {}  # topic → when its refusal was last said
        self.client = c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=self.ident, protocol=mqtt.MQTTv5,
                                      manual_ack=True)
        if username is not None:
            c.username_pw_set(username, password)
        if ca_file is not None:
            c.tls_set(ca_certs=ca_file)
        c.reconnect_delay_set(*BACKOFF_S)
        c.on_connect, c.on_connect_fail, c.on_disconnect = self._connected, self._failed, self._disconnected
        c.on_message = self._message
        c.on_subscribe = lambda *_: self.subscribed.set()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> None:
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = SESSION_S
        self.client.connect_async(self.host, self.port, keepalive=30, clean_start=False, properties=props)
        self.client.loop_start()  # its thread retries the first connection too

    def stop(self) -> None:
        self.client.disconnect()  # a clean DISCONNECT keeps the session (its expiry is not 0)
        self.client.loop_stop()

    # ------------------------------------------------------------ callbacks
    def _connected(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            self._down(f"the broker at {self.address} refused the venue ({reason}); retrying")
            return
        client.subscribe(TOPIC, qos=1)  # kept by the session too; asking again is harmless
        self.connected.set()
        if self._down_said:
            self.report(f"the broker at {self.address} is back")
        self._down_said = False

    def _failed(self, client: Any, userdata: Any) -> None:
        self._down(f"the broker at {self.address} is unreachable; the venue keeps trying")

    def _disconnected(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        self.connected.clear()
        self.subscribed.clear()
        if reason.is_failure:
            self._down(f"the link to the broker at {self.address} is down ({reason}); the venue keeps trying")

    def _down(self, line: str) -> None:
        self.connected.clear()
        self.subscribed.clear()
        if not self._down_said:
            self._down_said = True
            self.report(line)

    def _refused(self, topic: str, problem: schema.Problem) -> None:
        now = time.monotonic()
        if now - self._refusal_said.get(topic, -SAY_AGAIN_S) >= SAY_AGAIN_S:
            if len(self._refusal_said) > 1024:  # topics made up by the thousand: forget the old ones
                self._refusal_said.clear()
            self._refusal_said[topic] = now
            self.report(f"refused: {problem}")

    def _message(self, client: Any, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        try:
            topic = msg.topic
        except UnicodeDecodeError:  # MQTT topics are UTF-8; a broker should never pass this on
            topic = "companion/?/not-utf-8"
        try:
            record = schema.check(topic, bytes(msg.payload))
            if isinstance(record, schema.Problem):
                self.store.refuse()
                self._refused(topic, record)
                change = None
            else:
                change = self.store.apply(record, self.now())
        except sqlite3.Error as e:  # not kept: not acknowledged, so the broker sends it again
            self.report(f"the venue could not keep a message ({e}); it will come again")
            return
        except Exception as e:  # noqa: BLE001 - a message the venue cannot take must not stop its ear
            self.report(f"the venue could not take a message on {topic!r} ({e!r})")
            change = None
        self.heard += 1
        client.ack(msg.mid, msg.qos)
        if change is not None:
            try:
                self.notify(change)
            except Exception as e:  # noqa: BLE001 - a page's trouble must not stop the ear
                self.report(f"the board missed a change ({e!r})")
