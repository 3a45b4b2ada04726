"""Fixtures for the large-tool-set tests: the fake model server and real SDK clients."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> `fakes`
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent"))  # agent_helpers

from fakes.model_server import FakeModelServer


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    """A fake model endpoint on 127.0.0.1 (new per test)."""
    with FakeModelServer() as fake:
        yield fake
