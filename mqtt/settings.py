"""The ``mqtt:`` part of the config (docs/integrate/mqtt.md, *Set-up*) and what is read from it:
the table's id and the broker's address.  No paho here: the config loads
(and ``companion doctor`` checks it) without the client installed."""

from __future__ import annotations

import os
import re
import socket
import stat
from collections.abc import Mapping
from typing import Any

from companion.core.settings import Field, is_, read_switch, switch

TABLE_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")
PORT, TLS_PORT = 1883, 8883
TLS_KEYS = ("ca_file", "cert_file", "key_file")


def parse_broker(value: str, tls: bool = False) -> tuple[str, int]:
    """``host[:port]`` (``[::1]:1883`` for IPv6) as (host, port); the port is
    1883, or 8883 with TLS, when not given.  ValueError says why not."""
    text = value.strip()
    host, port = text, None
    if text.startswith("["):  # [v6] or [v6]:port
        close = text.find("]")
        host, rest = text[1:close], text[close + 1:] if close > 0 else ""
        if close < 0 or (rest and not rest.startswith(":")):
            raise ValueError(f"must be HOST or HOST:PORT (e.g. broker.local:1883), not {value!r}")
        port = rest[1:] if rest else None
    elif text.count(":") == 1:
        host, port = text.split(":")
    if not host or any(c.isspace() or c in "/#+" for c in host) or (port is not None and not (
            port.isdigit() and 1 <= int(port) <= 65535)):
        raise ValueError(f"must be HOST or HOST:PORT (e.g. broker.local:1883), not {value!r}")
    return host, int(port) if port is not None else (TLS_PORT if tls else PORT)


def _broker(v: Any) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str):
        return f"must be HOST[:PORT] (e.g. broker.local:1883) or null, not {v!r}"
    try:
        parse_broker(v)
    except ValueError as e:
        return str(e)
    return None


def _table_id(v: Any) -> str | None:
    if v is None or (isinstance(v, str) and TABLE_ID.fullmatch(v)):
        return None
    return f"must be 1 to 32 of a-z, 0-9 and '-' (not first), e.g. table-3, or null (the host name), not {v!r}"


def _tls(v: Any) -> str | None:
    if v is None:
        return None
    if not isinstance(v, dict) or set(v) - set(TLS_KEYS) or not isinstance(v.get("ca_file"), str):
        return f"must be null or {{ca_file: PATH, cert_file: PATH|null, key_file: PATH|null}}, not {v!r}"
    if any(v.get(k) is not None and not isinstance(v[k], str) for k in TLS_KEYS):
        return f"must name its files as paths, not {v!r}"
    if (v.get("cert_file") is None) != (v.get("key_file") is None):
        return "must give cert_file and key_file together (a client certificate and its key), or neither"
    return None


SETTINGS: dict[str, Field] = {
    "broker": Field(None, _broker, "host[:port] of the MQTT broker (1883; 8883 with tls); null: off"),
    "table_id": Field(None, _table_id, "companion/<table_id>/…; null: the host name, lower-cased"),
    "username": Field(None, lambda v: None if v is None else is_(str, "a user name")(v),
                      "the broker's user name, if it asks for one"),
    "password_file": Field(None, lambda v: None if v is None else is_(str, "a path")(v),
                           "a file holding the password (never the password here)"),
    "tls": Field(None, _tls, "{ca_file, cert_file, key_file}; null: plain TCP"),
    "commands": Field(False, switch, "on: next/back/repeat from companion/<id>/command, journaled",
                      read=read_switch),
    "homeassistant": Field(True, switch, "publish Home Assistant discovery", read=read_switch),
}


def host_table_id(hostname: str) -> str:
    """A host name as a table id: lower-cased, anything but a-z, 0-9 and '-'
    turned into '-', cut to 32; never empty, never starting with '-'."""
    tid = re.sub(r"[^a-z0-9-]", "-", hostname.lower())[:32].lstrip("-")
    return tid or "table"


def table_id(cfg: Mapping[str, Any]) -> str:
    """The table's id on the broker: ``mqtt.table_id``, else the host name's."""
    return str(cfg["mqtt"]["table_id"] or host_table_id(socket.gethostname()))


def broker(cfg: Mapping[str, Any]) -> tuple[str, int] | None:
    """The broker's (host, port), or None when MQTT is off."""
    m = cfg["mqtt"]
    return None if m["broker"] is None else parse_broker(m["broker"], tls=m["tls"] is not None)


def enabled(cfg: Mapping[str, Any]) -> bool:
    return cfg.get("mqtt", {}).get("broker") is not None


def password_file_exposed(cfg: Mapping[str, Any]) -> str | None:
    """A warning when ``mqtt.password_file`` can be read by every user of the
    machine (the table reads it at start: 0600, or 0640 with the service's
    group, is enough); None when it cannot, or there is none to check."""
    path = cfg.get("mqtt", {}).get("password_file")
    try:
        mode = os.stat(path).st_mode if path else 0
    except OSError:  # unreadable or missing: the link says so when it reads it
        return None
    if not mode & stat.S_IROTH:
        return None
    return (f"mqtt.password_file {path} is readable by everyone (mode {stat.S_IMODE(mode):04o}): "
            "any user of this machine can read the table's broker password")
