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
