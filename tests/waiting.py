"""Waiting for a condition in tests: poll it, never sleep a fixed time.

A fixed ``time.sleep`` before an assertion is either too short on a loaded
machine (a flaky test) or too long everywhere (a slow suite). ``wait_until``
polls the condition itself and fails with a readable message after a
generous bound, so it only ever costs the time the condition really takes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["wait_until"]


def wait_until(predicate: Callable[[], object], timeout: float = 30.0, *,
               what: str = "condition", interval: float = 0.01) -> None:
    """Return as soon as ``predicate()`` is truthy; raise AssertionError after ``timeout`` s.

    ``timeout`` is a bound for a broken test, not a measurement: keep it far
    above what the condition needs on a busy 2-core machine.
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        time.sleep(interval)
