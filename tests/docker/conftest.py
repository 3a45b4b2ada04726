"""Fixtures for the docker backend tests: a real engine, the real image.

The tests RUN in CI (the test command installs and starts an engine and
builds the image first: ``bash scripts/test-setup.sh``). Outside CI (``CI``
unset) they are skipped, loudly, when no engine answers. If the image is
missing or stale, it is built here from this checkout's sandbox sources.
With ``docker`` left out of ``TOOLSCRIPT_TEST_BACKENDS`` the whole directory
is skipped (``tests/conftest.py``) and no engine is contacted.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from toolscript.runtime.backends.docker.image import DEFAULT_IMAGE, OFFLINE_BASE_IMAGE, ensure_image

from toolscript.errors import BackendUnavailable

IMAGE = os.environ.get("TOOLSCRIPT_IMAGE", DEFAULT_IMAGE)
BASE_IMAGE = os.environ.get("TOOLSCRIPT_BASE_IMAGE", OFFLINE_BASE_IMAGE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of this directory ``docker``."""
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.docker)


@pytest.fixture(scope="session")
def docker_client() -> Iterator[Any]:
    """A client of the engine in the environment, or a loud skip (a failure on CI)."""
    from toolscript.runtime.backends.docker.image import docker_client as connect

    try:
        client = connect()
    except BackendUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the docker tests, but: {exc}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE, docker tests skipped (run scripts/test-setup.sh): {exc}")
    yield client
    mine = client.api.containers(
        all=True,
        filters={"label": ["org.toolscript.managed=1", f"org.toolscript.owner-pid={os.getpid()}"]},
    )
    names = [c["Names"][0] for c in mine]
    for c in mine:
        client.api.remove_container(c["Id"], force=True)
    assert not names, f"sandbox containers left behind by the tests: {names}"


@pytest.fixture(scope="session")
def image(docker_client: Any) -> str:
    """The sandbox image tag, built now if missing or stale."""
    status = ensure_image(IMAGE, base_image=BASE_IMAGE, client=docker_client)
    assert status.up_to_date, status
    return IMAGE


@pytest.fixture(params=["socket", "attach"])
def backend(request: pytest.FixtureRequest, docker_client: Any, image: str) -> Iterator[Any]:
    """A DockerBackend without a warm pool (each start is a cold container), per transport."""
    from toolscript.runtime.backends.docker.backend import DockerBackend

    b = DockerBackend(image, pool_size=0, docker_client=docker_client, transport=request.param)
    assert b.transport == request.param
    yield b
    b.shutdown()


@pytest.fixture
def process_runtime(docker_client: Any, image: str) -> Iterator[Any]:
    """A production runtime on ``isolation="process"`` with a warm pool of two."""
    from dockerhelpers import process_backend

    from toolscript import Runtime

    backend = process_backend(docker_client, image, pool_size=2)
    with Runtime(backend=backend) as runtime:
        yield runtime
    backend.shutdown()
