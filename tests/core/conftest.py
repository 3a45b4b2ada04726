"""Fixtures of the core behavioural tests: a runtime and a session shared by a
whole module per backend, for tests that only need *a* working sandbox (the
docker backend starts a container per session, so sharing keeps it fast)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from backend_marks import BACKENDS
from corehelpers import ALL_TOOLS, SPANS

from toolscript import Runtime


def _options(name: str) -> dict[str, Any]:
    if name == "docker":
        from toolscript.runtime.backends.docker.image import DEFAULT_IMAGE

        return {"image": os.environ.get("TOOLSCRIPT_IMAGE", DEFAULT_IMAGE), "pool_size": 1}
    return {}


@pytest.fixture(scope="module", params=BACKENDS)
def shared_runtime(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    """One runtime with every core tool, per backend, for a whole test module."""
    name: str = request.param
    if name == "docker":
        request.getfixturevalue("docker_image_tag")
    runtime = Runtime(tools=ALL_TOOLS, backend=name, backend_options=_options(name))
    yield runtime
    runtime.close()


@pytest.fixture(scope="module")
def module_session(shared_runtime: Runtime) -> Iterator[Any]:
    """One session per backend and module."""
    with shared_runtime.session() as session:
        yield session


@pytest.fixture
def fresh(module_session: Any) -> Any:
    """The module's session with an empty namespace."""
    module_session.reset()
    return module_session


@pytest.fixture(autouse=True)
def _clear_spans() -> None:
    SPANS.clear()
