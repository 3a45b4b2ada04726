"""Fixtures for the agent tests: the fake model server, real SDK clients, runtimes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> `fakes`
sys.path.insert(0, str(Path(__file__).resolve().parent))  # sample_tools, agent_helpers

import sample_tools
from agent_helpers import OPEN_RUNTIMES, client_for, make_runtime
from fakes.model_server import FakeModelServer
from toolscript.runtime.agent import Agent, Endpoint
from toolscript.runtime.providers import RetryPolicy


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    """A fake model endpoint on 127.0.0.1 (new per test)."""
    with FakeModelServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _clean_state() -> Iterator[None]:
    sample_tools.NOTES.clear()
    sample_tools.SENT.clear()
    yield
    while OPEN_RUNTIMES:
        OPEN_RUNTIMES.pop().close()


@pytest.fixture
def backend(backend_name: str) -> str:
    """Each backend under test (``backend_name`` of tests/conftest.py: docker included).

    A test that only varies the dialect narrows it with ``host_backends``
    (tests/backend_marks.py): the backend path is the same for every dialect,
    so one dialect per docker run is enough.
    """
    return backend_name


@pytest.fixture
def sleeps() -> list[float]:
    """Delays the retry policy asked for (no real sleeping)."""
    return []


@pytest.fixture
def make_agent(server: FakeModelServer, sleeps: list[float]) -> Callable[..., Agent]:
    """``make_agent(provider, runtime=..., **agent_kwargs)`` against the fake server
    (its ``model_settings`` over a retry policy that records instead of sleeping)."""

    def build(provider: str = "openai", runtime: Any = None, **kwargs: Any) -> Agent:
        settings = {"retry": RetryPolicy(sleep=sleeps.append), **kwargs.pop("model_settings", {})}
        kwargs.setdefault("model", "fake-model")
        return Agent(
            runtime if runtime is not None else make_runtime(),
            provider=provider,
            endpoint=Endpoint(client=client_for(provider, server)),
            model_settings=settings,
            **kwargs,
        )

    return build
