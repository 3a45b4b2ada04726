"""A host process killed with its containers still there: the next backend removes them.

A separate Python process creates a docker backend whose warm pool starts
containers, creates one more container without starting it (a kill between
``create`` and ``start``), and is then killed with ``SIGKILL``, its undertaker
first (``tests/security/test_host_death.py`` shows that one at work): none of
its cleanup runs. Creating a new :class:`DockerBackend` removes every container
whose owner on this host is gone, and nothing else: not the containers of a
live process, not those of another host sharing the engine.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from toolscript.runtime.backends.docker.backend import (
    MANAGED_LABEL,
    OWNER_HOST_LABEL,
    OWNER_PID_LABEL,
    OWNER_START_LABEL,
    DockerBackend,
    owner_labels,
)

CRASHING_HOST = textwrap.dedent("""
    import json, sys, uuid
    from toolscript.runtime.backends.docker.backend import DockerBackend

    backend = DockerBackend({image!r}, pool_size=2)
    assert backend.warm(None).wait_ready(120)
    config = backend.config_for(None)
    kwargs = config.create_kwargs("toolscript-crash-" + uuid.uuid4().hex[:12])
    from toolscript.runtime.backends.docker.image import docker_client
    api = docker_client().api
    created = api.create_container(config.image,
                                   host_config=api.create_host_config(**kwargs["host_config"]),
                                   **kwargs["container"])
    from toolscript.runtime.backends.docker import undertaker
    print(json.dumps({{"created": created["Id"], "undertaker": undertaker.pid()}}), flush=True)
    sys.stdin.read()  # until killed
""")


def _owned_by(client: Any, pid: int | str) -> list[dict[str, Any]]:
    filters = [f"{MANAGED_LABEL}=1", f"{OWNER_PID_LABEL}={pid}"]
    found: list[dict[str, Any]] = client.api.containers(all=True, filters={"label": filters})
    return found


def _exists(client: Any, container_id: str) -> bool:
    return any(c["Id"] == container_id for c in client.api.containers(all=True))


@pytest.fixture
def killed_host(docker_client: Any, image: str) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """The pid of a host process killed with its containers alive, and those containers.

    The killed process is left unreaped (a zombie, as when its parent has not
    noticed yet): its pid still exists, and it is gone all the same.
    """
    host = subprocess.Popen([sys.executable, "-c", CRASHING_HOST.format(image=image)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        line = host.stdout.readline()
        assert line, "the host process did not start its containers"
        created = json.loads(line)["created"]
        # Killed with its host (a whole cgroup, say): the last net is what is tested here.
        undertaker = json.loads(line)["undertaker"]
        watch = os.pidfd_open(undertaker)
        os.kill(undertaker, signal.SIGKILL)
        assert select.select([watch], [], [], 30)[0], "the undertaker did not die"
        os.close(watch)
        left = _owned_by(docker_client, host.pid)
        assert created in {c["Id"] for c in left}
        assert len(left) == 3, left  # the two pool containers and the one never started
        host.send_signal(signal.SIGKILL)
        os.waitid(os.P_PID, host.pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped
        yield host.pid, _owned_by(docker_client, host.pid)
    finally:
        host.kill()
        host.wait()
        for info in _owned_by(docker_client, host.pid):  # only if the test failed
            docker_client.api.remove_container(info["Id"], force=True)


def _decoy(client: Any, image: str, labels: dict[str, str]) -> str:
    """A container that is never started, labelled as ours with ``labels``."""
    created = client.api.create_container(
        image, name=f"toolscript-decoy-{uuid.uuid4().hex[:12]}", network_disabled=True,
        labels={MANAGED_LABEL: "1", **labels})
    container_id: str = created["Id"]
    return container_id


def test_a_new_backend_removes_the_containers_of_a_killed_host(
    docker_client: Any, image: str, killed_host: tuple[int, list[dict[str, Any]]]
) -> None:
    dead_pid, left = killed_host
    assert "created" in {c["State"] for c in left}  # never started: nothing would ever end it
    me = owner_labels()
    decoys = {
        "live owner": _decoy(docker_client, image, me),
        "other host": _decoy(docker_client, image, {
            OWNER_HOST_LABEL: "elsewhere.invalid", OWNER_PID_LABEL: str(dead_pid)}),
        "reused pid": _decoy(docker_client, image, {  # this pid, another process's start
            OWNER_HOST_LABEL: me[OWNER_HOST_LABEL], OWNER_PID_LABEL: me[OWNER_PID_LABEL],
            OWNER_START_LABEL: "1"}),
    }
    try:
        backend = DockerBackend(image, pool_size=0, docker_client=docker_client)
        try:
            assert [c for c in _owned_by(docker_client, dead_pid)
                    if c["Labels"].get(OWNER_HOST_LABEL) == me[OWNER_HOST_LABEL]] == []
            names = {c["Names"][0].lstrip("/") for c in left}
            assert names <= set(backend.orphans_removed)
            assert _exists(docker_client, decoys["live owner"])
            assert _exists(docker_client, decoys["other host"])
            assert not _exists(docker_client, decoys["reused pid"])
        finally:
            backend.shutdown()
    finally:
        for container_id in decoys.values():
            if _exists(docker_client, container_id):
                docker_client.api.remove_container(container_id, force=True)


def test_labels_name_the_owner_with_its_start_time(docker_client: Any, image: str) -> None:
    backend = DockerBackend(image, pool_size=0, docker_client=docker_client)
    handle = backend.start(None)
    try:
        labels = handle.attrs()["Config"]["Labels"]
        assert {k: labels.get(k) for k in owner_labels()} == owner_labels()
        assert labels[OWNER_START_LABEL].isdigit()
    finally:
        handle.close()
        backend.shutdown()
