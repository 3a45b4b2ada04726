"""Tools for the batch tests: a slow read and a write that logs to a file.

The write log (``TOOLSCRIPT_TEST_WRITE_LOG``) lets a test count how often the
write tool ran per item, across an interrupted batch and its resumption.
"""

from __future__ import annotations

import os
import time

from toolscript import tool


@tool(read_only=True)
def slow_square(n: int, delay_s: float = 0.0) -> int:
    """n squared, after sleeping ``delay_s`` seconds.

    Args:
        n: the number.
        delay_s: how long to sleep first.
    """
    time.sleep(delay_s)
    return n * n


@tool
def record_write(key: str) -> str:
    """Append ``key`` to the write log (a side effect a batch must not repeat).

    Args:
        key: what to record.
    """
    path = os.environ.get("TOOLSCRIPT_TEST_WRITE_LOG")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{key}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)
    return key


@tool(read_only=True)
def fail_on(n: int, bad: int) -> int:
    """Return ``n``, or raise ValueError when ``n == bad``.

    Args:
        n: the number.
        bad: the number that fails.
    """
    if n == bad:
        raise ValueError(f"{n} is bad")
    return n
