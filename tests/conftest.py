"""Shared fixtures: the backends every behavioural test runs on.

``backend_name`` is parametrized over ``inprocess``, ``subprocess`` and
``docker`` (override with ``TOOLSCRIPT_TEST_BACKENDS=inprocess,subprocess``).
Docker tests need a running engine and the sandbox image: the README's test
command installs and builds both; on CI (``CI`` set) a missing engine fails
the run instead of skipping it. When ``docker`` is not in
``TOOLSCRIPT_TEST_BACKENDS``, every test that needs docker (``tests/docker``,
the ``docker`` marker, the ``docker_image_tag``/``docker_client`` fixtures, a
``backend_name`` of ``docker``) is skipped without touching the engine.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from backend_marks import BACKENDS, backend_options

from toolscript import Limits, Runtime

_DOCKER_FIXTURES = frozenset({"docker_image_tag", "docker_client"})
_DOCKER_DIR = os.path.join(os.path.dirname(__file__), "docker")


def _needs_docker(item: pytest.Item) -> bool:
    """True for a test that would start or query the docker engine."""
    if item.get_closest_marker("docker") or str(item.fspath).startswith(_DOCKER_DIR):
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("backend_name") == "docker":
        return True
    return bool(_DOCKER_FIXTURES & set(getattr(item, "fixturenames", ())))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip everything docker when ``TOOLSCRIPT_TEST_BACKENDS`` leaves docker out."""
    if "docker" in BACKENDS:
        return
    skip = pytest.mark.skip(reason="docker not in TOOLSCRIPT_TEST_BACKENDS")
    for item in items:
        if _needs_docker(item):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def docker_image_tag() -> str:
    """The sandbox image, checked (and built if stale) once per test session."""
    from toolscript.runtime.backends.docker.image import (
        DEFAULT_IMAGE,
        OFFLINE_BASE_IMAGE,
        ensure_image,
    )

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


@pytest.fixture(scope="module")
def _module_runtimes() -> Iterator[dict[tuple[str, tuple[int, ...]], Runtime]]:
    made: dict[tuple[str, tuple[int, ...]], Runtime] = {}
    yield made
    for runtime in made.values():
        runtime.close()


@pytest.fixture
def module_runtime(backend_name: str, _module_runtimes: dict[tuple[str, tuple[int, ...]], Runtime],
                   ) -> Callable[[Any], Runtime]:
    """A runtime with default settings shared by the tests of one module on one backend.

    For modules whose tests only run scripts (``runtime.run`` or a ``with
    runtime.session()`` block: a fresh session each time, so nothing of one test
    reaches the next): one runtime and its warm pool per module
    instead of a container started and removed for every test. Keyed by the tools'
    identities; anything else a test configures needs :func:`make_runtime`.
    """
    def get(tools: Any = ()) -> Runtime:
        tools = list(tools)
        key = (backend_name, tuple(id(tool) for tool in tools))
        if key not in _module_runtimes:
            _module_runtimes[key] = Runtime(tools=tools, backend=backend_name,
                                            backend_options=backend_options(backend_name, 1))
        return _module_runtimes[key]

    return get
