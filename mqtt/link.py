"""The table on an MQTT broker: a ``Device`` (companion.core.messages) that
publishes ``status``, the retained public ``state``, and the outbox's events
and plays under ``companion/<table_id>/`` (the MQTT contract: docs/integrate/mqtt.md).

The table never waits for the broker.  On the loop's thread the link only
notes that the table changed (a TABLE event) and, once per burst, reads the
public view into the next ``state`` — no paho call, no SQLite, no lock that
another thread holds for long.  Everything else runs on two threads of its
own: paho's network thread (``loop_start``: connecting, reconnecting with a
backoff, the acknowledgements) and the link's worker, which publishes the
state when it changed and hands the outbox's rows to paho in order, deleting
each only on its PUBACK.  paho resends what it was handed across
reconnections; a row handed and never acknowledged (a SIGKILL, a power cut)
is still in the outbox and goes again at the next start — a receiver drops
it by its id.  An acknowledged row is kept aside and sent again at every new
connection until the connection that acknowledged it has held for
``CONFIRM_S``: a broker killed before saving forgets what it acknowledged.

By night (One Night's eyes closed) the state is the one night message, the
same for any deal, and no event or play leaves until morning.  The table
hears once that the venue link is down (never by night: it waits for the
morning) and once that it is back; the details go to the log.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from companion import threads
from companion.core.events import TABLE, Aside, ButtonPressed, ShellError
from companion.core.messages import Event, Inbox, Message, wants
from mqtt import noise, settings, topics

DOWN_AFTER_S = 10.0  # the broker away (or never reached) this long: the table is told, once
WINDOW = 100  # outbox rows handed to paho and not yet acknowledged, at most
TICK_S = 0.5  # how often the worker looks at the clock when nothing wakes it
KEEPALIVE_S = 30
RECONNECT_S = (1, 30)  # paho's backoff: the first retry after 1 s, doubling up to 30 s
LINE_DOWN, LINE_UP = "mqtt.down", "mqtt.up"
# A broker killed between its PUBACK and its next save to disk forgets what it had
# acknowledged but not yet delivered (mosquitto saves every ``autosave_interval``
# at best).  So an acknowledged row is not forgotten at once: it moves to
# ``outbox_sent`` and is sent again at every new connection until the connection
# that acknowledged it has stayed up ``CONFIRM_S`` after the acknowledgement —
# long enough for the broker to have saved it (docs/integrate/mqtt.md: autosave_interval) and for
# paho to notice a broker that died without a word (3 keepalives).  A time window
# on the wall clock (acknowledged "lately") lost plays: a reconnection later than
# the window, or one made by night, never sent them (qa/reliability/mqtt_faults.py).
CONFIRM_S = 3 * KEEPALIVE_S
# The largest packet the table reads, told to the broker in CONNECT (MQTT 5's Maximum
# Packet Size): a compliant broker never sends it anything larger (mosquitto drops such a
# message for this client), so a 64 MiB message on a topic the table hears is never read
# into memory.  The table hears words (a command, Home Assistant's birth) and the broker's
# acknowledgements; 16 KiB is room for any broker's properties.  paho 2.2 has no limit of
# its own on what it reads: a broker that speaks only MQTT 3.1.1 cannot be told.
MAX_PACKET_IN = 16 * 1024


class Outbox(Protocol):
    """The journal's outbox as the link sees it (companion.runtime.outbox.OutboxStore)."""

    def pending(self, after: tuple[int, int] = (0, 0), limit: int = 100) -> list[Any]: ...  # .n .id .topic .payload

    def done(self, places: list[tuple[int, int]]) -> None: ...

    def unconfirmed(self) -> list[Any]: ...  # acknowledged, maybe not kept: sent again at each new connection

    def confirm(self, ids: list[str]) -> None: ...

    def close(self) -> None: ...


class TableView(Protocol):
    """What the link reads of the table, on the loop's thread only (core.table.Table)."""

    @property
    def eyes_closed(self) -> bool: ...

    def public_view(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class LinkConfig:
    """The checked ``mqtt:`` part, read once (``from_cfg``)."""

    table_id: str
    host: str
    port: int
    username: str | None = None
    password: str | None = None
    tls: Mapping[str, Any] | None = None
    commands: bool = False

    @classmethod
    def from_cfg(cls, cfg: Mapping[str, Any]) -> tuple[LinkConfig, str | None]:
        """The link's settings from a loaded config, and a problem to log
        (an unreadable password file: the link then tries without one)."""
        m = cfg["mqtt"]
        address = settings.broker(cfg)
        assert address is not None, "no broker: the link is not made"
        password, problem = None, None
        if m["password_file"]:
            try:
                password = Path(m["password_file"]).read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as e:
                problem = f"mqtt: cannot read password_file {m['password_file']}: {getattr(e, 'strerror', None) or e}"
        return cls(settings.table_id(cfg), *address, m["username"], password, m["tls"], bool(m["commands"])), problem


class MqttLink:
    """``wants``/``receive``/``close``: the Device.  ``view``: the table
    (read on the loop's thread); ``outbox``: the journal's, on a connection
    of its own; ``inbox``: the loop's, as every source has it
    (core.messages.Inbox): commands arrive there as panel presses, the
    table's state is read by a callable run on the loop's thread, the link's
    line for the table is an ``Aside`` (never by night), its log lines ``ShellError``s."""

    wants = wants(TABLE)

    def __init__(self, conf: LinkConfig, *, view: TableView, outbox: Outbox, inbox: Inbox,
                 client_factory: Callable[..., Any] | None = None, down_after_s: float | None = None) -> None:
        self.conf, self.view, self.outbox, self.inbox = conf, view, outbox, inbox
        self.down_after_s = DOWN_AFTER_S if down_after_s is None else down_after_s
        self._lock = threading.Lock()  # guards the few fields both sides touch; never held over I/O
        self._wake, self._stopping = threading.Event(), threading.Event()
        # loop thread → worker
        self._scheduled = False
        self._state: bytes | None = None
        self._night = False
        # paho thread → worker (deque appends are atomic: paho's callbacks never wait on us):
        # (the connection it came on, mid, accepted)
        self._acks: collections.deque[tuple[int, int, bool]] = collections.deque()
        self._connected = False
        self._connection = 0  # counts the connections made: an acknowledgement belongs to one
        self._fresh = False  # connected since the worker last looked: status and state go again
        self._since = time.monotonic()  # down since (the start counts: never reached)
        self._was_up = False
        self._fallback = False  # the broker refused MQTT 5: next client speaks 3.1.1
        # worker only
        self._sent_state: bytes | None = None
        self._handed: dict[int, tuple[tuple[int, int], str]] = {}  # paho mid → its row's place and id
        self._resent: dict[int, str] = {}  # paho mid → the id of an unconfirmed row sent again
        self._after = (0, 0)  # rows up to this place were handed to this client
        self._resend_due = False  # a new connection: the unconfirmed rows go again (by day)
        self._on = 0  # the connection the worker acts on
        # acknowledged on connection ``_on``: (when, id), confirmed once it held CONFIRM_S
        self._held: collections.deque[tuple[float, str]] = collections.deque()
        self._told_down = False
        self._owed: str | None = None  # a line the table is to hear (said on the loop's thread, by day)
        self.published: collections.Counter[str] = collections.Counter()  # what was handed, by topic kind
        # What other parts of the mqtt package add (Home Assistant's discovery): called on
        # paho's thread after every connection; (topic filter, handler) subscribed on each.
        self._connect_hooks: list[Callable[[Any], None]] = []
        self._hooked = False  # the hooks ran for the connection there is now
        self._subscriptions: list[_Subscription] = []
        self._lines = noise.Lines(self.report)  # the link's log lines, at a bounded rate by kind
        self._presses = noise.Bucket(noise.COMMANDS_BURST, noise.COMMANDS_PER_S)  # paho's thread only
        self.client: Any = None
        self._factory = client_factory or paho_client
        self._protocol = 5
        self._start_client()
        self._worker = threads.spawn("mqtt-link", self._run, stop=self._stop_worker)
        self._scheduled = True  # the first state, once the loop runs (a restart mid-night says nothing)
        self.inbox.submit(self.snapshot)

    def report(self, message: str) -> None:
        """From any thread: a line for the table's log."""
        self.inbox.submit(ShellError(message))

    # ------------------------------------------------------ for the package
    def on_connected(self, hook: Callable[[Any], None]) -> None:
        """``hook(client)`` on paho's thread after every connection (before the
        outbox drains): e.g. Home Assistant's discovery.  It must not block."""
        with self._lock:  # a hook added after the connection (loopback connects at once) runs now
            self._connect_hooks.append(hook)
            late, client = self._hooked, self.client
        if late and client is not None:
            hook(client)

    def subscribe(self, topic: str, handler: Callable[[Any], None], every_s: float = 0.0) -> None:
        """``handler(message)`` for every message on ``topic``, subscribed again
        at every connection; with ``every_s``, at most once in any ``every_s``
        (a burst: its first message at once on paho's thread, its last one
        when the time is up, on the link's worker)."""
        sub = _Subscription(topic, handler, every_s)
        self._subscriptions.append(sub)
        client = self.client
        if client is not None:
            client.message_callback_add(topic, lambda c, u, m: sub.heard(m))
            if self._connected:
                client.subscribe(topic, qos=topics.QOS)

    def publish(self, topic: str, payload: bytes, retain: bool = False) -> None:
        """From any thread: one message, QoS 1 (paho queues it; it never blocks)."""
        client = self.client
        if client is not None:
            client.publish(topic, payload, qos=topics.QOS, retain=retain)

    # ------------------------------------------------------ the loop's thread
    def receive(self, message: Message) -> None:
        """A table event: the state may have changed.  Read it once the
        input's outputs are all out (a callable in the inbox), not per event."""
        if isinstance(message, Event) and not self._scheduled:
            self._scheduled = True
            self.inbox.submit(self.snapshot)

    def snapshot(self) -> None:
        """On the loop's thread: the public view into the next ``state``."""
        self._scheduled = False
        night = self.view.eyes_closed
        state = topics.encode(topics.state(self.view.public_view(), self.conf.table_id, night))
        with self._lock:
            self._state, self._night = state, night
        self._tell()
        self._wake.set()

    def _tell(self) -> None:
        """On the loop's thread: the line owed to the table, unless eyes are
        closed (then it waits for a snapshot by day)."""
        if self.view.eyes_closed:
            return
        with self._lock:
            key, self._owed = self._owed, None
        if key is not None:
            self.inbox.submit(Aside(key, {"en": {}}))

    # --------------------------------------------------------- paho's thread
    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            if self._protocol == 5 and getattr(reason, "value", None) in (1, 132):  # unsupported protocol version
                self._fallback = True
            self._note(f"mqtt: the broker at {self._where()} refused us ({reason})")
            self._wake.set()
            return
        client.publish(topics.topic(self.conf.table_id, "status"), topics.ONLINE, qos=topics.QOS, retain=True)
        if self.conf.commands:
            client.subscribe(topics.topic(self.conf.table_id, "command"), qos=topics.QOS)
        for sub in self._subscriptions:
            client.subscribe(sub.topic, qos=topics.QOS)
        with self._lock:
            hooks, self._hooked = list(self._connect_hooks), True
        for hook in hooks:
            try:
                hook(client)
            except Exception as e:  # another part's bug must not cut the table off the broker
                self._note(f"mqtt: a connection hook failed: {type(e).__name__}: {e}")
        with self._lock:
            self._connected = self._fresh = True
            self._connection += 1
        self._wake.set()

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        with self._lock:
            was, self._connected, self._hooked = self._connected, False, False
            if was:
                self._since = time.monotonic()
        if was:
            self._note(f"mqtt: lost the broker at {self._where()} ({reason}); retrying")
        self._wake.set()

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason: Any, properties: Any) -> None:
        self._acks.append((self._connection, mid, not getattr(reason, "is_failure", False)))
        self._wake.set()

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        if message.retain:  # kept by the broker from whenever: nobody is pressing anything now
            self._note(f"mqtt: ignored a retained command on {message.topic} (a command is pressed, "
                       "never kept: clear it with an empty retained message)", kind="ignored commands")
            return
        button = topics.command(message.payload) if len(message.payload) <= 16 else None
        if button is None:
            self._note(f"mqtt: ignored a command that is not next, back or repeat ({bytes(message.payload[:40])!r})",
                       kind="ignored commands")
            return
        if not self._presses.take():
            self._note(f"mqtt: ignored {button}: commands came faster than {noise.COMMANDS_BURST} at once, "
                       f"then {noise.COMMANDS_PER_S:g} a second", kind="ignored commands")
            return
        self.inbox.submit(ButtonPressed(button))  # journaled like a press of the panel's button

    # --------------------------------------------------------- the worker
    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(TICK_S)
            self._wake.clear()
            try:
                self._step()
            except Exception as e:  # the link must never take the table down with it
                self._note(f"mqtt: {type(e).__name__}: {e}", kind="errors of the link")
                self._stopping.wait(1.0)

    def _step(self) -> None:
        self._lines.flush()
        for sub in self._subscriptions:
            sub.due()
        if self._fallback:
            self._fallback = False
            self._protocol = 3
            self._start_client()
        with self._lock:
            connected, fresh, self._fresh = self._connected, self._fresh, False
            on, state, night, since = self._connection, self._state, self._night, self._since
        if on != self._on:  # a new connection: what the last one held may be lost with its broker
            self._on, self._resend_due = on, True
            self._held.clear()
        self._take_acks(on)
        self._watch_link(connected, since)
        if not connected or self.client is None:
            return
        if state is not None and (fresh or state != self._sent_state):
            self.client.publish(topics.topic(self.conf.table_id, "state"), state, qos=topics.QOS, retain=True)
            self._sent_state = state
            self.published["state"] += 1
        if night:  # nothing but the night's state until morning
            return
        if self._resend_due:  # acknowledged and perhaps never kept: again, before anything newer
            for letter in self.outbox.unconfirmed():
                self._resent[self.client.publish(letter.topic, letter.payload, qos=topics.QOS).mid] = letter.id
                self.published["resent"] += 1
            self._resend_due = False  # only once all went (a failure midway: all again at the next turn)
        room = WINDOW - len(self._handed)
        for letter in self.outbox.pending(after=self._after, limit=room) if room > 0 else ():
            if len(letter.payload) > topics.MAX_PAYLOAD:  # the venue would drop it: said, and kept
                self._note(f"mqtt: outbox message {letter.id} is {len(letter.payload)} bytes; not sent")
            else:
                info = self.client.publish(letter.topic, letter.payload, qos=topics.QOS)
                self._handed[info.mid] = (letter.n, letter.id)
                self.published[letter.topic.rsplit("/", 1)[-1]] += 1
            self._after = letter.n
        self._confirm()

    def _take_acks(self, on: int) -> None:
        """The broker's acknowledgements: a row leaves the outbox; one that came
        on the connection there is now is held, to be confirmed (``_confirm``)."""
        done, now = [], time.monotonic()
        while self._acks:
            connection, mid, ok = self._acks.popleft()
            handed, again = self._handed.pop(mid, None), self._resent.pop(mid, None)
            if handed is not None and ok:
                done.append(handed[0])
            elif handed is not None:  # refused by the broker: kept, sent again at the next start
                self._note(f"mqtt: the broker refused outbox message {handed[1]}; kept in the outbox")
            mid_id = handed[1] if handed is not None else again
            if ok and mid_id is not None and connection == on:
                self._held.append((now, mid_id))
        if done:
            self.outbox.done(done)

    def _confirm(self) -> None:
        """Rows acknowledged on this connection, which has held ``CONFIRM_S``
        since: the broker has kept them, they are not sent again."""
        ripe, limit = [], time.monotonic() - CONFIRM_S
        while self._held and self._held[0][0] <= limit:
            ripe.append(self._held.popleft()[1])
        if ripe:
            self.outbox.confirm(ripe)

    def _watch_link(self, connected: bool, since: float) -> None:
        """Say once that the link is down (away ``down_after_s``, or never
        reached), and once that it is back — each said by day only."""
        owed = None
        if connected:
            self._was_up = True
            if self._told_down:
                self._told_down, owed = False, LINE_UP
        elif not self._told_down and time.monotonic() - since >= self.down_after_s:
            self._told_down, owed = True, LINE_DOWN
            self._note(f"mqtt: the broker at {self._where()} has been away {self.down_after_s:.0f} s"
                       + ("" if self._was_up else " (never reached since start)"))
        if owed is not None:
            with self._lock:
                # "back" cancels a "down" the night kept the table from hearing: nothing to say
                self._owed = None if self._owed is not None and self._owed != owed else owed
            self.inbox.submit(self._tell)

    # --------------------------------------------------------- the client
    def _start_client(self) -> None:
        old, self.client = self.client, None
        if old is not None:
            _stop_client(old)
        self._handed.clear()
        self._resent.clear()
        self._after = (0, 0)  # a new client holds nothing: what the outbox has goes again
        try:
            client = self._factory(self.conf, self._protocol)
        except Exception as e:  # a TLS file that cannot be read: the table plays on without the link
            self._note(f"mqtt: cannot set up the link to {self._where()}: {e}")
            return
        client.on_connect, client.on_disconnect = self._on_connect, self._on_disconnect
        client.on_publish = self._on_publish
        client.message_callback_add(topics.topic(self.conf.table_id, "command"), self._on_message)
        for sub in self._subscriptions:
            client.message_callback_add(sub.topic, lambda c, u, m, sub=sub: sub.heard(m))
        client.connect_async(self.conf.host, self.conf.port, keepalive=KEEPALIVE_S,
                             properties=connect_properties() if self._protocol == 5 else None)
        client.loop_start()  # paho's own thread connects, reconnects (backoff) and reads
        self.client = client

    def _where(self) -> str:
        return f"{self.conf.host}:{self.conf.port}"

    def _note(self, message: str, kind: str = "lines about the broker") -> None:
        self._lines.note(kind, message)

    def _stop_worker(self) -> None:
        self._stopping.set()
        self._wake.set()

    def close(self) -> None:
        """Say ``offline`` (a clean goodbye sends no last will), let paho go,
        stop the worker; harmless twice."""
        self._stop_worker()
        if self._worker is not threading.current_thread():
            self._worker.join(5.0)  # it may be using the outbox's connection: closed below
        client, self.client = self.client, None
        if client is not None:
            if self._connected:
                client.publish(topics.topic(self.conf.table_id, "status"), topics.OFFLINE, qos=topics.QOS,
                               retain=True)
            _stop_client(client)
        if not self._worker.is_alive():
            self.outbox.close()


class _Subscription:
    """A topic the link hears for another part of the package, and its handler,
    run at most once in any ``every_s`` (0: for every message)."""

    def __init__(self, topic: str, handler: Callable[[Any], None], every_s: float) -> None:
        self.topic, self.handler, self.every_s = topic, handler, every_s
        self._lock = threading.Lock()
        self._last = -float("inf")  # when the handler last ran
        self._waiting: Any = None  # the last message of a burst, for when the time is up

    def heard(self, message: Any) -> None:
        """On paho's thread."""
        with self._lock:
            now = time.monotonic()
            if now - self._last < self.every_s:
                self._waiting = message
                return
            self._last = now
        self.handler(message)

    def due(self) -> None:
        """On the worker: the last message of a burst, once ``every_s`` is up."""
        with self._lock:
            now = time.monotonic()
            if self._waiting is None or now - self._last < self.every_s:
                return
            message, self._waiting, self._last = self._waiting, None, now
        self.handler(message)


def connect_properties() -> Any:
    """MQTT 5's CONNECT properties: the largest packet the table reads."""
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    props = Properties(PacketTypes.CONNECT)
    props.MaximumPacketSize = MAX_PACKET_IN
    return props


def _stop_client(client: Any) -> None:
    try:
        client.disconnect()  # queued after what was published: the broker gets both
    finally:
        client.loop_stop()


def client_id(conf: LinkConfig, role: str = "") -> str:
    """The client id: the user name where there is one (the documented broker,
    docs/mqtt/companion.conf, makes every login's client id its user name, so
    the table calls itself what the broker calls it), else ``companion-<table_id>``;
    ``-<role>`` after it for a client that is not the link (a broker that binds
    ids still gives it the user name: it takes the daemon's place while it is on)."""
    return (conf.username or f"companion-{conf.table_id}") + (f"-{role}" if role else "")


def paho_client(conf: LinkConfig, protocol: int, role: str = "") -> Any:
    """A paho 2.x client (callback API 2) for ``conf``: its last will says
    ``offline``; it reconnects on its own with a backoff (1 s doubling to 30 s).
    ``role`` names a client that is not the table's link (``forget``,
    ``doctor``): its own client id, so the broker never drops the running
    daemon for it, and no last will, since its going says nothing of the table."""
    import paho.mqtt.client as paho

    version = paho.MQTTv5 if protocol == 5 else paho.MQTTv311
    client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id(conf, role),
                         protocol=version, clean_session=None if protocol == 5 else True)
    if not role:
        client.will_set(topics.topic(conf.table_id, "status"), topics.OFFLINE, qos=topics.QOS, retain=True)
    client.reconnect_delay_set(*RECONNECT_S)
    client.connect_timeout = 3.0
    if conf.username is not None:
        client.username_pw_set(conf.username, conf.password)
    if conf.tls is not None:
        client.tls_set_context(tls_context(conf.tls))
    return client


class TlsFileError(ValueError):
    """A TLS file that cannot be used: ``mqtt.tls.<key> <path>: <problem>``."""


def tls_context(tls: Mapping[str, Any]) -> Any:
    """The TLS context for ``mqtt.tls`` (as paho's ``tls_set`` makes it: the
    broker's certificate checked against ``ca_file``, its name against the
    host), each file loaded on its own so that a missing, unreadable or junk
    one is named with its problem (TlsFileError), never a bare "No such file"."""
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies the certificate and the host name
    steps = [("ca_file", lambda: context.load_verify_locations(cafile=tls["ca_file"]))]
    if tls.get("cert_file"):
        steps.append(("cert_file", lambda: context.load_cert_chain(tls["cert_file"], tls.get("key_file"))))
    for key, load in steps:
        path = tls[key]
        try:
            with open(path, "rb"):
                pass
            load()
        except ssl.SSLError as e:
            what = "a PEM certificate" if key == "ca_file" else "a PEM certificate and its key (mqtt.tls.key_file)"
            raise TlsFileError(f"mqtt.tls.{key} {path}: not {what} ({e.reason or e})") from None
        except OSError as e:
            raise TlsFileError(f"mqtt.tls.{key} {path}: {e.strerror or e}") from None
    return context


def make_link(cfg: Mapping[str, Any], *, view: TableView, outbox: Outbox, inbox: Inbox, **kwargs: Any) -> MqttLink:
    """The link for a loaded config (``mqtt.broker`` set): what the wiring
    makes, and a fault campaign may make the same way."""
    conf, problem = LinkConfig.from_cfg(cfg)
    for line in (problem, settings.password_file_exposed(cfg)):
        if line is not None:
            inbox.submit(ShellError(line if line.startswith("mqtt: ") else f"mqtt: {line}"))
    return MqttLink(conf, view=view, outbox=outbox, inbox=inbox, **kwargs)
