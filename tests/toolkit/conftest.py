"""Fixtures for the tool-design toolkit tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from backend_marks import BACKENDS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> `fakes`
sys.path.insert(0, str(Path(__file__).resolve().parent))  # toolkit_helpers

@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn (the toolkit lives on the host, but its calls cross every boundary)."""
    if request.param == "docker":
        request.getfixturevalue("docker_image_tag")
    return str(request.param)
