"""Tools for the batch tests: a slow read, a write that logs to a file, and a
write that holds its item until the test opens a gate.

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


@tool
def gated_write(key: str) -> str:
    """Append ``key`` to the write log, then wait until the gate file exists.

    The write happens first, so a test that sees ``key`` in the log knows the
    item is inside its write tool; it opens the gate (creates the file named
    by ``TOOLSCRIPT_TEST_GATE``) to let such items finish. Without a gate
    variable the tool returns at once.

    Args:
        key: what to record.
    """
    record_write(key)
    gate = os.environ.get("TOOLSCRIPT_TEST_GATE")
    while gate and not os.path.exists(gate):
        time.sleep(0.005)
    return key


@tool(read_only=True)
def fail_if_listed(n: int) -> int:
    """Return ``n``, or raise RuntimeError when ``n`` is listed (one number a
    line) in the file named by ``TOOLSCRIPT_TEST_FAIL_LIST``.

    Args:
        n: the number.
    """
    path = os.environ.get("TOOLSCRIPT_TEST_FAIL_LIST")
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            if str(n) in fh.read().split():
                raise RuntimeError(f"{n} is listed as failing")
    return n
