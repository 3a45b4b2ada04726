"""The Unix-socket protocol channel: peer check and fallback to attached stdio."""

from __future__ import annotations

import socket
import tempfile
from typing import Any

import pytest
from toolscript.runtime.backends.docker import socket_channel as docker_socket
from toolscript.runtime.backends.docker.backend import DockerBackend

from toolscript.errors import SandboxStartError


def test_a_connection_from_outside_the_container_is_refused() -> None:
    channel = docker_socket.SocketChannel(sandbox_uid=10001)
    intruder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    intruder.connect(channel.path)
    with pytest.raises(TimeoutError):
        channel.accept("0" * 64, timeout=0.5, still_starting=lambda: True)
    assert intruder.recv(1) == b""  # closed on it
    intruder.close()
    with pytest.raises(FileNotFoundError):
        socket.socket(socket.AF_UNIX).connect(channel.path)  # gone after accept


def _hide_the_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mount an empty folder instead: what a remote engine would see."""
    empty = tempfile.mkdtemp(prefix="toolscript-empty-")
    monkeypatch.setattr(
        docker_socket.SocketChannel,
        "mount",
        lambda self: {"Target": "/run/toolscript", "Source": empty, "Type": "bind",
                      "ReadOnly": True},
    )  # fmt: skip


def test_auto_transport_falls_back_to_attach(
    monkeypatch: pytest.MonkeyPatch, docker_client: Any, image: str
) -> None:
    _hide_the_socket(monkeypatch)
    with DockerBackend(image, pool_size=0, docker_client=docker_client) as backend:
        assert backend.transport == "socket"
        h = backend.start(None)
        try:
            assert backend.transport == "attach" and h.transport == "attach"
            h.send({"type": "ping"})
            assert h.recv(5) == {"type": "pong"}
        finally:
            h.close()


def test_forced_socket_transport_fails_clearly(
    monkeypatch: pytest.MonkeyPatch, docker_client: Any, image: str
) -> None:
    _hide_the_socket(monkeypatch)
    b = DockerBackend(image, pool_size=0, docker_client=docker_client, transport="socket")
    with b, pytest.raises(SandboxStartError, match="transport='attach'"):
        b.start(None)
