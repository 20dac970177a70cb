"""``companion mqtt forget``: remove the table's device from Home Assistant.

Connects to the broker (paho 2.x, callback API 2), publishes what
``homeassistant.forget`` says removes the device (the empty, retained
config), waits — bounded — for the broker's PUBACK and says so in one line.
A broker that cannot be reached, refuses us or does not acknowledge is one
line on stderr and a non-zero exit, never a traceback.  The settings are the
``mqtt:`` part of the config (``broker``, ``table_id``, ``username``,
``password_file``, ``tls``), which ``--mqtt`` and ``--table-id`` override,
read into the link's own ``LinkConfig`` and connected with the link's client
factory (``mqtt.link.paho_client``, as ``forget``: another client id, no last
will); the app hands them in (companion/app/mqtt_cmd.py).

Run it while Home Assistant is connected to the broker (it removes the
device when it hears the empty config), and with the daemon stopped or
``mqtt: homeassistant: off`` — a running daemon announces the device again
whenever Home Assistant restarts.
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from companion.core import settings as core_settings
from mqtt import homeassistant
from mqtt import settings as mqtt_settings
from mqtt.link import LinkConfig, paho_client

TIMEOUT_S = 10.0


class ForgetError(Exception):
    """Why the device could not be removed: one line, for the user."""


def where(conf: LinkConfig) -> str:
    """The broker's address as written (``[::1]:1883`` for IPv6)."""
    return f"[{conf.host}]:{conf.port}" if ":" in conf.host else f"{conf.host}:{conf.port}"


def address(value: str, tls: bool = False) -> tuple[str, int]:
    """``HOST[:PORT]`` as (host, port), as the config reads it; ForgetError says why not."""
    try:
        return mqtt_settings.parse_broker(value, tls=tls)
    except ValueError as e:
        raise ForgetError(f"the broker {e}") from None


def target(args: argparse.Namespace, settings: Mapping[str, Any]) -> LinkConfig:
    """The broker and table from the command line, else the config's
    ``mqtt:`` (missing keys: their defaults), read as the daemon's link reads
    them (``LinkConfig.from_cfg``)."""
    m = {**core_settings.defaults(mqtt_settings.SETTINGS), **settings}
    # a value given empty is a mistake (a variable that was not set), never "use the default":
    # `--table-id ''` would otherwise act on this table
    if args.mqtt is not None and not args.mqtt.strip():
        raise ForgetError("--mqtt must be HOST[:PORT], not ''")
    broker = args.mqtt if args.mqtt not in (None, "off") else m["broker"]
    if not broker:
        raise ForgetError("no broker: give --mqtt HOST[:PORT], or mqtt: broker: in the config")
    address(broker, tls=m["tls"] is not None)  # a bad --mqtt is one line, not an assertion
    table_id = args.table_id if args.table_id is not None else (
        m["table_id"] or mqtt_settings.host_table_id(socket.gethostname()))
    if not homeassistant.TABLE_ID.fullmatch(table_id):
        raise ForgetError(f"the table id must be 1 to 32 of a-z, 0-9 and '-' (not first), not {table_id!r}")
    conf, problem = LinkConfig.from_cfg({"mqtt": {**m, "broker": broker, "table_id": table_id}})
    if problem is not None:  # the link tries without the password; forget has no reason to
        raise ForgetError(problem.removeprefix("mqtt: "))
    return conf


def publish(t: LinkConfig, messages: list[tuple[str, bytes]], timeout_s: float = TIMEOUT_S) -> None:
    """Publish ``messages`` retained at QoS 1 and wait for every PUBACK,
    all within ``timeout_s``; ForgetError (one line) when that fails."""
    deadline = time.monotonic() + timeout_s
    try:  # the link's own client, MQTT 3.1.1, as ``forget``: not the daemon's client id, nor its will
        client = paho_client(t, protocol=4, role="forget")
    except (OSError, ValueError) as e:  # a TLS file that cannot be used (TlsFileError names it)
        raise ForgetError(f"cannot set up TLS for the broker at {where(t)}: {e}") from None
    client.connect_timeout = timeout_s
    connected = threading.Event()
    answer: list[Any] = []

    def on_connect(_c: Any, _u: Any, _flags: Any, reason_code: Any, _props: Any) -> None:
        answer.append(reason_code)
        connected.set()

    client.on_connect = on_connect
    try:
        client.connect(t.host, t.port, keepalive=max(5, int(timeout_s) + 5))
    except (OSError, ValueError) as e:  # refused, unreachable, no such host, a bad certificate file
        raise ForgetError(f"cannot reach the broker at {where(t)}: {getattr(e, 'strerror', None) or e}") from None
    client.loop_start()
    try:
        if not connected.wait(max(0.0, deadline - time.monotonic())):
            raise ForgetError(f"the broker at {where(t)} did not answer within {timeout_s:g} s")
        if answer[0].is_failure:
            raise ForgetError(f"the broker at {where(t)} refused the connection: {answer[0]}")
        sent = [client.publish(topic, payload, qos=1, retain=True) for topic, payload in messages]
        for info in sent:
            try:
                info.wait_for_publish(max(0.0, deadline - time.monotonic()))
            except (RuntimeError, ValueError) as e:
                raise ForgetError(f"the broker at {where(t)} lost the connection: {e}") from None
            if not info.is_published():
                raise ForgetError(f"the broker at {where(t)} did not acknowledge within {timeout_s:g} s")
    finally:
        client.disconnect()
        client.loop_stop()


# ---------------------------------------------------------- companion mqtt
def configure_parser(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="mqtt_command", required=True, metavar="forget")
    f = sub.add_parser("forget", help="remove this table's device from Home Assistant (the broker must be up)")
    f.add_argument("--mqtt", metavar="HOST[:PORT]", help="the broker (default: mqtt: broker: in the config)")
    f.add_argument("--table-id", metavar="ID", help="the table's id (default: mqtt: table_id:, else the host name)")
    f.add_argument("--timeout", type=float, default=TIMEOUT_S, help=argparse.SUPPRESS)
    f.add_argument("--config", action="append", type=Path, default=[], help="a settings file")


def run(args: argparse.Namespace, settings: Mapping[str, Any]) -> int:
    """``settings``: the config's ``mqtt:`` part (empty where there is none)."""
    try:
        t = target(args, settings)
        publish(t, homeassistant.forget(t.table_id), timeout_s=args.timeout)
    except ForgetError as e:
        print(f"companion mqtt forget: {e}", file=sys.stderr)
        return 1
    print(f"companion mqtt forget: Home Assistant forgets the table {t.table_id} "
          f"({homeassistant.config_topic(t.table_id)} cleared on {where(t)})")
    return 0
