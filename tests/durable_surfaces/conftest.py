"""Fixtures of the durable-approval surfaces: a real SQLite journal and a real headless
Chromium (helpers in surface_helpers.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from surface_helpers import have_browser, start_chrome
from toolscript.runtime.durable.sqlite import SQLiteJournal


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[SQLiteJournal]:
    """A real SQLite journal store in the test's directory."""
    store = SQLiteJournal(tmp_path / "journal.sqlite3")
    yield store
    store.close()


@pytest.fixture(scope="session")
def chrome() -> Iterator[Any]:
    """A real headless Chromium (skipped without it off CI; a failure under CI)."""
    if not have_browser():
        if os.environ.get("CI"):
            pytest.fail("chromium / chromium-driver missing: run scripts/test-setup.sh")
        pytest.skip("chromium and chromium-driver are not installed "
                    "(scripts/install-test-packages.sh)")
    driver = start_chrome()
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(chrome: Any) -> Iterator[Any]:
    """The session's browser with its cookies cleared after each test."""
    yield chrome
    chrome.delete_all_cookies()
