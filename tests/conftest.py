"""Shared fixtures: the backends every behavioural test runs on.

``backend_name`` is parametrized over ``inprocess``, ``subprocess`` and
``docker`` (override with ``TOOLSCRIPT_TEST_BACKENDS=inprocess,subprocess``).
Docker tests need a running engine and the sandbox image: the README's test
command installs and builds both; on CI (``CI`` set) a missing engine fails
the run instead of skipping it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from backend_marks import BACKENDS

from toolscript import Limits, Runtime


@pytest.fixture(scope="session")
def docker_image_tag() -> str:
    """The sandbox image, checked (and built if stale) once per test session."""
    from toolscript.runtime.image import DEFAULT_IMAGE, OFFLINE_BASE_IMAGE, ensure_image

    from toolscript.errors import BackendUnavailable

    image = os.environ.get("TOOLSCRIPT_IMAGE", DEFAULT_IMAGE)
    try:
        status = ensure_image(
            image, base_image=os.environ.get("TOOLSCRIPT_BASE_IMAGE", OFFLINE_BASE_IMAGE)
        )
    except BackendUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the docker backend, but: {exc}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE: docker backend skipped (bash scripts/test-setup.sh): {exc}")
    assert status.up_to_date, status
    return image


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    """Each backend in turn."""
    name: str = request.param
    if name == "docker":
        request.getfixturevalue("docker_image_tag")
    return name


def backend_options(name: str, pool_size: int = 1) -> dict[str, Any]:
    """Constructor options for a backend in tests."""
    if name == "docker":
        from toolscript.runtime.image import DEFAULT_IMAGE

        return {"image": os.environ.get("TOOLSCRIPT_IMAGE", DEFAULT_IMAGE), "pool_size": pool_size}
    return {}


@pytest.fixture
def make_runtime(backend_name: str) -> Iterator[Callable[..., Runtime]]:
    """Build runtimes on the current backend; all are closed after the test."""
    made: list[Runtime] = []

    def make(tools: Any = (), *, limits: Limits | None = None, pool_size: int = 1,
             **kwargs: Any) -> Runtime:
        runtime = Runtime(tools=tools, backend=backend_name, limits=limits,
                          backend_options=backend_options(backend_name, pool_size), **kwargs)
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        runtime.close()
