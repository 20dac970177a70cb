"""sd_notify over a real AF_UNIX datagram socket standing in for systemd."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.app import sdnotify
from companion.app.sdnotify import Notifier

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="needs AF_UNIX sockets")


@pytest.fixture
def systemd(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A bound datagram socket, as systemd's notify socket is."""
    path = str(tmp_path / "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(2.0)
    yield sock, path
    sock.close()


def received(sock: socket.socket) -> str:
    return sock.recv(4096).decode("utf-8")


def test_ready_status_stopping_watchdog_arrive_as_datagrams(systemd: tuple[socket.socket, str]) -> None:
    sock, path = systemd
    n = Notifier({"NOTIFY_SOCKET": path})
    assert n.enabled
    assert n.ready()
    assert received(sock) == "READY=1"
    assert n.status("round 2 of 3")
    assert received(sock) == "STATUS=round 2 of 3"
    assert n.watchdog()
    assert received(sock) == "WATCHDOG=1"
    assert n.stopping()
    assert received(sock) == "STOPPING=1"
    n.close()


def test_ready_can_carry_a_status(systemd: tuple[socket.socket, str]) -> None:
    sock, path = systemd
    assert Notifier({"NOTIFY_SOCKET": path}).ready("table ready")
    assert received(sock) == "READY=1\nSTATUS=table ready"


def test_status_cannot_inject_a_second_assignment(systemd: tuple[socket.socket, str]) -> None:
    sock, path = systemd
    Notifier({"NOTIFY_SOCKET": path}).status("bad\nREADY=1")
    assert received(sock) == "STATUS=bad READY=1"


@pytest.mark.skipif(not os.path.exists("/proc/net/unix"), reason="abstract sockets are Linux only")
def test_abstract_namespace_socket() -> None:
    name = f"companion-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(2.0)
    try:
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).ready()
        assert received(sock) == "READY=1"
    finally:
        sock.close()


def test_module_functions_use_the_process_environment(
    systemd: tuple[socket.socket, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sock, path = systemd
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.setenv("WATCHDOG_USEC", "20000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert sdnotify.ready()
    assert received(sock) == "READY=1"
    assert sdnotify.watchdog()
    assert received(sock) == "WATCHDOG=1"
    assert sdnotify.watchdog_interval() == 10.0
    assert sdnotify.stopping()
    assert received(sock) == "STOPPING=1"


def test_everything_is_a_no_op_off_systemd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    assert not sdnotify.ready()
    assert not sdnotify.status("x")
    assert not sdnotify.watchdog()
    assert not sdnotify.stopping()
    assert sdnotify.watchdog_interval() is None
    assert not Notifier({}).enabled


def test_a_vanished_socket_is_not_an_error(tmp_path: Path) -> None:
    n = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone")})
    assert n.ready() is False  # the daemon goes on; systemd's timeout deals with it


@pytest.mark.parametrize(
    ("env", "interval"),
    [
        ({"WATCHDOG_USEC": "30000000"}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}, None),  # meant for another process
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
        ({}, None),
    ],
)
def test_watchdog_interval_is_half_the_timeout_for_this_process(env: dict[str, str], interval: float | None) -> None:
    assert Notifier(env).watchdog_interval() == interval
