"""Helpers of the docker tests (a uniquely named module: several conftest.py exist)."""

from __future__ import annotations

from typing import Any

from toolscript.runtime.backends.base import SandboxSpec
from toolscript.runtime.limits import Limits


def spec(**limits: Any) -> SandboxSpec:
    """A SandboxSpec with some limits changed from the defaults."""
    return SandboxSpec(Limits(**limits))


def exec_python(client: Any, container_id: str, code: str) -> tuple[int, str]:
    """Run ``python -c code`` inside a running sandbox container (as its user)."""
    api = client.api
    ex = api.exec_create(container_id, ["/opt/toolscript/venv/bin/python", "-I", "-c", code])
    out = api.exec_start(ex["Id"]).decode("utf-8", "replace")
    return int(api.exec_inspect(ex["Id"])["ExitCode"]), out


def my_running_containers(client: Any) -> set[str]:
    """Ids of the running sandbox containers this test process owns (asked of the engine)."""
    import os

    filters = {"label": ["org.toolscript.managed=1", f"org.toolscript.owner-pid={os.getpid()}"]}
    return {c["Id"] for c in client.api.containers(filters=filters)}


def container_running(client: Any, container_id: str) -> bool:
    """True while the engine reports the container as running."""
    import docker.errors

    try:
        return bool(client.api.inspect_container(container_id)["State"]["Running"])
    except docker.errors.NotFound:
        return False


def process_backend(client: Any, image: str, **options: Any) -> Any:
    """A DockerBackend with ``isolation="process"`` (no warm pool unless ``pool_size``)."""
    from toolscript.runtime.backends.docker.backend import DockerBackend

    options.setdefault("pool_size", 0)
    return DockerBackend(image, docker_client=client, isolation="process", **options)
