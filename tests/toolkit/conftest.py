"""Fixtures for the tool-design toolkit tests (issue 8)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> `fakes`
sys.path.insert(0, str(Path(__file__).resolve().parent))  # toolkit_helpers

_WANTED = os.environ.get("TOOLSCRIPT_TEST_BACKENDS", "inprocess,subprocess").split(",")
BACKENDS = [b for b in ("inprocess", "subprocess") if b in _WANTED] or ["inprocess"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The in-tree backends (toolkit features live on the host; docker adds nothing)."""
    return str(request.param)
