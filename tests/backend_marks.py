"""Parametrizations for tests that only apply to some backends.

A test that checks what only a separate process or a container can do (a
memory limit, a hard kill, an empty environment) is parametrized over those
backends instead of skipping on the others: the inprocess backend simply has
no such case to test (documented in README "Backends").
"""

from __future__ import annotations

import os
from typing import Any

import pytest

BACKENDS = [b for b in os.environ.get(
    "TOOLSCRIPT_TEST_BACKENDS", "inprocess,subprocess,docker").split(",") if b]
"""The backends under test (``TOOLSCRIPT_TEST_BACKENDS`` narrows them)."""
PROCESS_BACKENDS = [b for b in BACKENDS if b != "inprocess"]
DOCKER_BACKENDS = [b for b in BACKENDS if b == "docker"]
HOST_BACKENDS = [b for b in BACKENDS if b != "docker"]

process_backends = pytest.mark.parametrize("backend_name", PROCESS_BACKENDS, indirect=True)
"""Run on the backends with a sandbox process: subprocess and docker."""

docker_only = pytest.mark.parametrize("backend_name", DOCKER_BACKENDS, indirect=True)
"""Run on the docker backend only (container faults, engine errors)."""


host_backends = pytest.mark.parametrize("backend_name", HOST_BACKENDS, indirect=True)
"""Run on inprocess and subprocess only: for permutations of a test (one per
dialect, per format ...) whose backend-relevant part already runs on docker in a
sibling test; a container start per permutation would only add minutes."""


def backend_options(name: str, pool_size: int = 1) -> dict[str, Any]:
    """Constructor options for a backend in tests (docker: the image under test)."""
    if name == "docker":
        from toolscript.runtime.backends.docker.image import DEFAULT_IMAGE

        return {"image": os.environ.get("TOOLSCRIPT_IMAGE", DEFAULT_IMAGE), "pool_size": pool_size}
    return {}


def with_backends(cases: list[Any], backends_of: Any) -> list[Any]:
    """``pytest.param(case, backend)`` pairs for cases whose backends differ."""
    return [pytest.param(case, backend, id=f"{backend}-{getattr(case, 'id', case)}")
            for case in cases for backend in backends_of(case)]
