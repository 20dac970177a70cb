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

A store that cannot keep a message (a full disk): the message is held and
tried again (``HOLD_S``, doubling to ``HOLD_MAX_S``, well inside the
keep-alive), and if the store still fails the venue drops its connection.
A broker sends an unacknowledged message again only on a new connection
(and past its in-flight limit sends nothing more), so the reconnection is
what brings back everything not kept; a duplicate is dropped by the store.

Size: the venue tells the broker the largest packet it takes (MQTT 5
Maximum Packet Size, ``MAX_PACKET``: the schema's largest message and its
topic), and the broker drops for the venue what is larger, unread; paho has
no limit of its own, so ``_Client`` lets go of a connection announcing a
larger packet before reading it (a broker that ignores the property: the
venue then reconnects, and that message never gets in).
"""

from __future__ import annotations

import logging
import re
import socket
import sqlite3
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from venue import schema
from venue.paho_client import MAX_PACKET, _Client
from venue.store import Change, Store

TOPIC = "companion/+/#"
SESSION_S = 7 * 24 * 3600  # a week: a venue off between two games nights still hears what it missed
BACKOFF_S = (1, 30)
HOLD_S, HOLD_MAX_S = 0.5, 16.0  # a message the store could not keep is tried again this long (keepalive 30 s)
SAY_AGAIN_S = 60.0  # a topic refused again within this is counted, not said again (a flood is a line a minute)
# and whatever the number of topics, lines are said at a bounded rate (a token bucket): a burst of
# SAY_BURST, then one every SAY_EVERY_S; the rest are counted and summed up in one line
SAY_BURST, SAY_EVERY_S = 10, 6.0
log = logging.getLogger("venue")


def client_id(host: str | None = None) -> str:
    """``venue-<host>``: the host name, lower-cased, anything but [a-z0-9-] made "-"."""
    name = re.sub(r"[^a-z0-9-]", "-", (host or socket.gethostname()).lower())[:32] or "host"
    return f"venue-{name}"


class BadCaFile(ValueError):
    """The ``--ca-file`` given cannot be used (one line naming it)."""


class _Bucket:
    """Lines said at a bounded rate: ``burst`` at once, then one every
    ``every_s``; the others counted, and said as one line when there is room
    again (or at ``flush(force=True)``)."""

    def __init__(self, report: Callable[[str], None], burst: int = SAY_BURST, every_s: float = SAY_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.report, self.burst, self.every_s, self.clock = report, burst, every_s, clock
        self.tokens, self.at, self.held = float(burst), clock(), 0

    def _take(self) -> bool:
        now = self.clock()
        self.tokens, self.at = min(float(self.burst), self.tokens + (now - self.at) / self.every_s), now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def say(self, line: str) -> None:
        if self.held and self._take():
            self._summary()
        if self._take():
            self.report(line)
        else:
            self.held += 1

    def flush(self, force: bool = False) -> None:
        if self.held and (force or self._take()):
            self._summary()

    def _summary(self) -> None:
        self.report(f"refused: {self.held} more like this, not said one by one")
        self.held = 0


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
        self._dropping = False  # the store failed: let the connection go, hear it all again on the next
        self._failures = 0  # connections dropped in a row because the store failed (the hold doubles)
        self._stopping = threading.Event()
        self._refusal_said: dict[str, float] = {}  # topic → when its refusal was last said
        self._said = _Bucket(lambda line: self.report(line))
        self.client = c = _Client(CallbackAPIVersion.VERSION2, client_id=self.ident, protocol=mqtt.MQTTv5,
                                      manual_ack=True)
        if username is not None:
            c.username_pw_set(username, password)
        if ca_file is not None:
            try:
                c.tls_set(ca_certs=ca_file)
            except (ssl.SSLError, OSError) as e:  # empty, junk, unreadable: one line naming the file
                raise BadCaFile(f"{ca_file}: not a CA certificate the venue can use "
                                f"({getattr(e, 'reason', None) or e.strerror or e})") from None
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
        props.MaximumPacketSize = MAX_PACKET  # the broker drops a larger message for us, unread
        self.client.connect_async(self.host, self.port, keepalive=30, clean_start=False, properties=props)
        self.client.loop_start()  # its thread retries the first connection too

    def stop(self) -> None:
        self._stopping.set()  # a message held for a failing store is let go (it comes again)
        self._said.flush(force=True)
        self.client.disconnect()  # a clean DISCONNECT keeps the session (its expiry is not 0)
        self.client.loop_stop()

    # ------------------------------------------------------------ callbacks
    def _connected(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            self._down(f"the broker at {self.address} refused the venue ({reason}); retrying")
            return
        client.subscribe(TOPIC, qos=1)  # kept by the session too; asking again is harmless
        self.connected.set()
        self._dropping = False
        if self._down_said and not self._failures:
            self.report(f"the broker at {self.address} is back")
        self._down_said = False

    def _failed(self, client: Any, userdata: Any) -> None:
        self._down(f"the broker at {self.address} is unreachable; the venue keeps trying")

    def _disconnected(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        self.connected.clear()
        self.subscribed.clear()
        if reason.is_failure and not self._dropping:
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
            self._said.say(f"refused: {problem}")

    def _message(self, client: Any, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        if self._dropping:  # not acknowledged: it comes again on the next connection
            return
        try:
            topic = msg.topic
        except UnicodeDecodeError:  # MQTT topics are UTF-8; a broker should never pass this on
            topic = "companion/?/not-utf-8"
        try:
            record = schema.check(topic, bytes(msg.payload))
            change = self._keep(topic, record)
        except sqlite3.Error as e:  # not kept: not acknowledged; a new connection brings it again
            self._drop(client, e)
            return
        except Exception as e:  # noqa: BLE001 - a message the venue cannot take must not stop its ear
            self._said.say(f"the venue could not take a message on {topic!r} ({e!r})")
            change = None
        self.heard += 1
        self._said.flush()
        if self._failures:
            self._failures = 0
            self.report("the venue keeps messages again")
        client.ack(msg.mid, msg.qos)
        if change is not None:
            try:
                self.notify(change)
            except Exception as e:  # noqa: BLE001 - a page's trouble must not stop the ear
                self.report(f"the board missed a change ({e!r})")

    def _keep(self, topic: str, record: schema.Record | schema.Problem) -> Change | None:
        """Into the store; a store failure is tried again with a backoff for a
        while (a disk filled for a moment), then raised."""
        hold = min(HOLD_S * 2 ** self._failures, HOLD_MAX_S)
        deadline, pause = time.monotonic() + hold, 0.05
        while True:
            try:
                if isinstance(record, schema.Problem):
                    self.store.refuse()
                    self._refused(topic, record)
                    return None
                return self.store.apply(record, self.now())
            except sqlite3.Error:
                if time.monotonic() + pause > deadline or self._stopping.is_set():
                    raise
                self._stopping.wait(pause)
                pause = min(pause * 2, 2.0)

    def _drop(self, client: Any, error: Exception) -> None:
        """The store cannot keep what arrives: let the connection go (paho
        reconnects with its backoff) and hear it all again on the next."""
        if not self._failures:
            self.report(f"the venue cannot keep messages ({error}); it reconnects until it can, losing none")
        self._failures += 1
        self._dropping = True
        sock = client.socket()
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # paho sees the connection lost and reconnects
            except OSError:
                pass
