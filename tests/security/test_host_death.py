"""A host killed with ``SIGKILL`` leaves no sandbox process and no container behind.

A real host process (a child Python) creates a runtime, opens an idle
session, starts a run that burns CPU without reading its channel (the case a
server cannot notice by reading), lets its warm pool fill, and is then
killed with ``SIGKILL``: none of its cleanup runs. Within a generous bound,
every sandbox process it had (subprocess: the fork server and its sandboxes;
docker: every process of its containers) is gone, and on docker no container
labelled with it as owner is left. On docker's socket transport the
container ends itself (the lifeline: its host's channel closed) even when the
host's undertaker is killed too.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

BOUND_S = 60.0
"""Generous: the lifeline acts in well under a second, the removal in a few."""

HOST = textwrap.dedent("""
    import json, os, sys, threading
    from toolscript import Limits, Runtime, tool

    kind, image = sys.argv[1], sys.argv[2]
    running = threading.Event()

    @tool
    def started() -> int:
        "Say the run is under way."
        running.set()
        return 1

    if kind == "subprocess":
        backend = "subprocess"
        undertaker = None
    else:
        # A host name of its own: the other processes using this engine (other test runs)
        # remove the containers of dead owners *on their host*, which would hide the nets.
        import socket, uuid
        name = "killed-host-" + uuid.uuid4().hex[:8]
        socket.gethostname = lambda: name
        from toolscript.runtime.backends.docker import undertaker as undertaker_module
        from toolscript.runtime.backends.docker.backend import DockerBackend
        isolation, transport = kind.split("-")
        backend = DockerBackend(image, pool_size=1, isolation=isolation, transport=transport)
        undertaker = undertaker_module.pid()
    runtime = Runtime([started], backend=backend,
                      limits=Limits(wall_time_s=300.0, cpu_time_s=300.0))
    idle = runtime.session()
    assert idle.run("1").value == 1
    busy = runtime.session()
    threading.Thread(target=busy.run, args=("started()\\nwhile True:\\n    pass",),
                     daemon=True).start()
    assert running.wait(120)
    pool = getattr(backend, "warm", None)
    if pool is not None:
        assert pool(None).wait_ready(120)
    print(json.dumps({"undertaker": undertaker}), flush=True)
    sys.stdin.read()
""")

KINDS = [
    "subprocess",
    pytest.param("container-socket", marks=pytest.mark.docker),
    pytest.param("container-attach", marks=pytest.mark.docker),
    pytest.param("process-socket", marks=pytest.mark.docker),
]


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, cgroup text) of every process that can be read."""
    table: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode("utf-8", "replace")
            with open(f"/proc/{entry}/cgroup", encoding="utf-8") as fh:
                cgroup = fh.read()
            table[int(entry)] = (int(stat.rsplit(")", 1)[1].split()[1]), cgroup)
        except (OSError, ValueError, IndexError):
            continue
    return table


def _descendants(root: int) -> set[int]:
    """Every live descendant of ``root``."""
    table = _proc_table()
    mine = {root}
    grew = True
    while grew:
        grew = False
        for pid, (ppid, _cgroup) in table.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                grew = True
    return mine - {root}


def _in_containers(ids: set[str]) -> set[int]:
    """The pids of the processes inside any of the containers ``ids``."""
    return {pid for pid, (_ppid, cgroup) in _proc_table().items()
            if any(container_id in cgroup for container_id in ids)}


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie is not running)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:].split()[0] != b"Z"


def _owned(client: Any, host_pid: int, running_only: bool = False) -> list[dict[str, Any]]:
    filters = {"label": ["org.toolscript.managed=1", f"org.toolscript.owner-pid={host_pid}"]}
    found: list[dict[str, Any]] = client.api.containers(all=not running_only, filters=filters)
    return found


def _wait_until(condition: Callable[[], bool], bound: float = BOUND_S) -> bool:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


@contextlib.contextmanager
def _host(kind: str, image: str) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    """A running host process of ``kind`` and what it printed; killed at the end."""
    host = subprocess.Popen([sys.executable, "-c", HOST, kind, image],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        line = host.stdout.readline()
        assert line, "the host process did not start its sessions"
        yield host, json.loads(line)
    finally:
        if host.poll() is None:
            host.kill()
        host.wait()


def _docker_client() -> Any:
    from toolscript.runtime.backends.docker.image import docker_client

    return docker_client()


@pytest.mark.parametrize("kind", KINDS)
def test_nothing_outlives_a_killed_host(kind: str, request: pytest.FixtureRequest) -> None:
    docker = kind != "subprocess"
    image = request.getfixturevalue("docker_image_tag") if docker else ""
    client = _docker_client() if docker else None
    with _host(kind, image) as (host, info):
        if client is not None:
            containers = {c["Id"] for c in _owned(client, host.pid)}
            # process isolation: one container of sessions; else one per session and the pool's
            assert len(containers) >= (1 if kind.startswith("process") else 3), containers
            sandboxes = _in_containers(containers)
        else:
            sandboxes = _descendants(host.pid)
        assert len(sandboxes) >= 3, sandboxes  # the zygote or the containers' processes
        helpers = {info["undertaker"]} - {None}
        host.send_signal(signal.SIGKILL)
        host.wait()
        try:
            assert _wait_until(lambda: not any(_alive(p) for p in sandboxes | helpers)), (
                f"alive after the host's death: {[p for p in sandboxes if _alive(p)]}")
            if client is not None:
                assert _wait_until(lambda: not _owned(client, host.pid)), (
                    f"containers left: {_owned(client, host.pid)}")
        finally:
            if client is not None:
                for c in _owned(client, host.pid):
                    client.api.remove_container(c["Id"], force=True)


@pytest.mark.docker
@pytest.mark.parametrize("isolation", ["container", "process"])
def test_the_container_ends_itself_when_its_host_is_gone(
    isolation: str, docker_image_tag: str
) -> None:
    """Without the undertaker (killed first): the lifeline alone ends every container
    (removing what is left is the next backend's, ``test_docker_crash_cleanup.py``)."""
    client = _docker_client()
    with _host(f"{isolation}-socket", docker_image_tag) as (host, info):
        containers = {c["Id"] for c in _owned(client, host.pid)}
        sandboxes = _in_containers(containers)
        os.kill(info["undertaker"], signal.SIGKILL)
        assert _wait_until(lambda: not _alive(info["undertaker"]))
        host.send_signal(signal.SIGKILL)
        host.wait()
        try:
            assert _wait_until(lambda: not _owned(client, host.pid, running_only=True)), (
                f"still running: {_owned(client, host.pid, running_only=True)}")
            assert _wait_until(lambda: not any(_alive(p) for p in sandboxes))
        finally:
            for c in _owned(client, host.pid):
                client.api.remove_container(c["Id"], force=True)


FORKING_HOST = textwrap.dedent("""
    import json, os, socket, sys, time, uuid
    name = "forking-host-" + uuid.uuid4().hex[:8]  # out of other processes' orphan removal
    socket.gethostname = lambda: name
    from toolscript.runtime.backends.docker import undertaker
    from toolscript.runtime.backends.docker.backend import DockerBackend

    backend = DockerBackend(sys.argv[1], pool_size=1)
    assert backend.warm(None).wait_ready(120)
    child = os.fork()
    if child == 0:  # a fork of the host (multiprocessing, a user's os.fork) outlives it
        time.sleep(300)
        os._exit(0)
    print(json.dumps({"undertaker": undertaker.pid(), "child": child}), flush=True)
    if sys.argv[2] == "exit":
        os.kill(child, 9)
        os.waitpid(child, 0)
        sys.exit(0)
    sys.stdin.read()
""")


@pytest.mark.docker
@pytest.mark.parametrize("end", ["SIGKILL", "exit"])
def test_the_undertaker_hears_its_host_whatever_it_forked(end: str, docker_image_tag: str) -> None:
    """A forked child holds no copy of the undertaker's pipe; a clean exit lets it go."""
    client = _docker_client()
    host = subprocess.Popen([sys.executable, "-c", FORKING_HOST, docker_image_tag, end],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    info: dict[str, Any] = {}
    try:
        assert host.stdout is not None
        info = json.loads(host.stdout.readline())
        if end == "SIGKILL":
            assert _owned(client, host.pid)
            host.send_signal(signal.SIGKILL)
        host.wait(120)
        assert _wait_until(lambda: not _owned(client, host.pid)), _owned(client, host.pid)
        assert _wait_until(lambda: not _alive(info["undertaker"]))
    finally:
        if host.poll() is None:
            host.kill()
        host.wait()
        with contextlib.suppress(ProcessLookupError, KeyError):
            os.kill(info["child"], signal.SIGKILL)
        for c in _owned(client, host.pid):
            client.api.remove_container(c["Id"], force=True)
