"""Protocol transport, kernel limits, death reasons and container cleanup."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from dockerhelpers import exec_python, spec
from toolscript.runtime.backends.base import SandboxDied
from toolscript.runtime.backends.docker.backend import (
    MANAGED_LABEL,
    OWNER_PID_LABEL,
    DockerBackend,
    DockerSandbox,
    flush_removals,
    gc,
)
from toolscript.sandbox.protocol import PROTOCOL_VERSION


def _ours(client: Any, **labels: str) -> list[dict[str, Any]]:
    filters = [f"{MANAGED_LABEL}=1", *(f"{k}={v}" for k, v in labels.items())]
    result: list[dict[str, Any]] = client.api.containers(all=True, filters={"label": filters})
    return result


def _exists(client: Any, container_id: str) -> bool:
    flush_removals()  # closed sandboxes are removed in the background
    return any(c["Id"] == container_id for c in client.api.containers(all=True))


def _configure(h: DockerSandbox, **process_limits: Any) -> None:
    h.send({"type": "configure", "tools": [], "modules": [], "process_limits": process_limits})
    assert h.recv(10)["type"] == "configured"


def test_ready_ping_run_and_recv_timeout(backend: DockerBackend) -> None:
    h = backend.start(None)
    try:
        assert h.ready_info["type"] == "ready" and h.ready_info["protocol"] == PROTOCOL_VERSION
        assert h.is_alive() and h.death_reason() is None
        h.send({"type": "ping"})
        assert h.recv(5) == {"type": "pong"}
        _configure(h)
        h.send({"type": "run", "id": 1, "code": "print('hi')\n6 * 7"})
        result = h.recv(10)
        assert result["type"] == "result" and result["ok"], result
        assert result["value"] == 42 and result["stdout"] == "hi\n"
        with pytest.raises(TimeoutError):
            h.recv(0.2)
        h.send({"type": "ping"})  # still usable after a timeout
        assert h.recv(5) == {"type": "pong"}
    finally:
        h.close()
    assert h.death_reason() == "closed" and not h.is_alive()


def test_tool_calls_cross_as_frames(backend: DockerBackend) -> None:
    h = backend.start(None)
    try:
        h.send({
            "type": "configure",
            "tools": [{"name": "double", "params": [{"name": "x", "kind": "positional_or_keyword",
                                                    "required": True}],
                       "read_only": True, "doc": "Double x."}],
            "modules": [],
        })  # fmt: skip
        assert h.recv(10)["type"] == "configured"
        h.send({"type": "run", "id": 7, "code": "[double(i) for i in range(50)]"})
        calls = 0
        while (msg := h.recv(10))["type"] == "call":
            calls += 1
            h.send({"type": "reply", "id": msg["id"], "ok": True, "value": 2 * msg["args"]["x"]})
        assert msg["type"] == "result" and msg["ok"], msg
        assert calls == 50 and msg["value"] == [2 * i for i in range(50)]
    finally:
        h.close()


def test_memory_bomb_is_an_oom_kill_reported_as_memory_limit(
    backend: DockerBackend, docker_client: Any
) -> None:
    h = backend.start(spec(memory_mb=96))
    _configure(h)  # no RLIMIT_AS inside: the kernel's cgroup limit must stop it
    h.send({"type": "run", "id": 1, "code": "x = []\nwhile True:\n    x.append('a' * 10_000_000)"})
    with pytest.raises(SandboxDied, match="memory_limit"):
        h.recv(30)
    assert h.death_reason() == "memory_limit"
    assert h.exit_code == 137
    assert not _exists(docker_client, h.id)  # removed after the exit was recorded


def test_pids_limit_stops_a_thread_bomb(backend: DockerBackend, docker_client: Any) -> None:
    h = backend.start(spec(max_pids=16))
    try:
        code, out = exec_python(
            docker_client,
            h.id,
            "import threading, time\nn = 0\ntry:\n"
            "    while n < 1000:\n"
            "        threading.Thread(target=time.sleep, args=(3,), daemon=True).start(); n += 1\n"
            "except RuntimeError as e:\n    print('stopped', n, e)\n",
        )
        assert code == 0 and "stopped" in out, out
        assert int(out.split()[1]) < 16
        h.send({"type": "ping"})  # the sandbox itself is unharmed
        assert h.recv(5) == {"type": "pong"}
    finally:
        h.close()


def test_kill_and_close_remove_the_container(backend: DockerBackend, docker_client: Any) -> None:
    client = docker_client  # the engine the backend fixture talks to
    a, b = backend.start(None), backend.start(None)
    assert _exists(client, a.id) and _exists(client, b.id)
    a.kill()
    a.kill()  # idempotent
    b.close()
    b.close()
    assert a.death_reason() == "killed" and b.death_reason() == "closed"
    assert not _exists(client, a.id) and not _exists(client, b.id)
    with pytest.raises(SandboxDied):
        a.send({"type": "ping"})


def test_container_killed_from_outside_is_detected(
    backend: DockerBackend, docker_client: Any
) -> None:
    h = backend.start(None)
    docker_client.api.kill(h.id)
    with pytest.raises(SandboxDied):
        h.recv(10)
    assert h.death_reason() == "killed" and h.exit_code == 137
    assert not _exists(docker_client, h.id)


def test_container_of_a_dropped_handle_is_removed(
    backend: DockerBackend, docker_client: Any
) -> None:
    import gc as pygc

    h = backend.start(None)
    cid = h.id
    del h
    pygc.collect()
    assert not _exists(docker_client, cid)


def test_containers_are_removed_at_interpreter_exit(docker_client: Any, image: str) -> None:
    script = textwrap.dedent(f"""
        import os
        from toolscript.runtime.backends.docker.backend import DockerBackend
        b = DockerBackend({image!r}, pool_size=2)
        h = b.start(None)           # one in use, never closed
        b.warm(None).wait_ready(60)  # two idle in the pool, never shut down
        keep = [h]
        print(os.getpid(), flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    pid = proc.stdout.strip().splitlines()[-1]
    assert _ours(docker_client, **{OWNER_PID_LABEL: pid}) == []


def test_gc_removes_stale_containers_only(
    backend: DockerBackend, image: str, docker_client: Any
) -> None:
    client = docker_client  # the engine the backend fixture talks to
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    import socket

    stale = client.api.create_container(
        image,
        labels={MANAGED_LABEL: "1", OWNER_PID_LABEL: dead,
                "org.toolscript.owner-host": socket.gethostname()},
        network_disabled=True,
    )  # fmt: skip
    live = backend.start(None)
    try:
        removed = gc(client=client)
        assert not _exists(client, stale["Id"])
        assert any(name for name in removed)
        assert _exists(client, live.id)  # ours, still in use: kept
    finally:
        live.close()
        if _exists(client, stale["Id"]):
            client.api.remove_container(stale["Id"], force=True)


def test_owner_labels(backend: DockerBackend) -> None:
    h = backend.start(None)
    try:
        labels = h.attrs()["Config"]["Labels"]
        assert labels[OWNER_PID_LABEL] == str(os.getpid())
    finally:
        h.close()
