"""Tools and helpers shared by the core behavioural tests (a uniquely named
module: several ``conftest.py`` exist in the suite)."""

from __future__ import annotations

import itertools
import os
import select
import threading
import time
from pathlib import Path
from typing import Any

from toolscript import tool
from toolscript.errors import ToolscriptError

# --- tools -------------------------------------------------------------------------

SPANS: list[dict[str, Any]] = []
"""(tag, kind, start, end) of every ``stamp``/``write_stamp`` call, recorded by the tool."""
_SPANS_LOCK = threading.Lock()


@tool(read_only=True)
def add(a: int, b: int = 0) -> int:
    """Add two integers.

    Args:
        a: first number.
        b: second number.
    """
    return a + b


@tool(read_only=True)
def echo(value: Any) -> Any:
    """Return the value unchanged."""
    return value


@tool
def boom(message: str) -> int:
    """Always raises ValueError with the message."""
    raise ValueError(message)


@tool(timeout_s=0.2, blocking=True)
def hang(seconds: float = 3.0) -> int:
    """Sleeps longer than its timeout."""
    time.sleep(seconds)
    return 1


@tool(read_only=True)
def not_json() -> dict[str, Any]:
    """Returns a host object that is not JSON data."""
    return {"handle": threading.Lock()}


@tool(read_only=True)
def fatal() -> int:
    """Raises a programmer-facing toolscript error."""
    raise ToolscriptError("host misconfigured")


def _span(tag: str, kind: str, seconds: float) -> dict[str, Any]:
    start = time.monotonic()
    time.sleep(seconds)
    end = time.monotonic()
    span = {"tag": tag, "kind": kind, "start": start, "end": end,
            "thread": threading.get_ident()}
    with _SPANS_LOCK:
        SPANS.append(span)
    return {"tag": tag}


@tool(read_only=True)
def stamp(tag: str, seconds: float = 0.25) -> dict[str, Any]:
    """Read-only: sleeps, records when it ran.

    Args:
        tag: label returned unchanged.
        seconds: how long to sleep.
    """
    return _span(tag, "read", seconds)


@tool
def write_stamp(tag: str, seconds: float = 0.05) -> dict[str, Any]:
    """A write: sleeps, records when it ran.

    Args:
        tag: label returned unchanged.
        seconds: how long to sleep.
    """
    return _span(tag, "write", seconds)


@tool(requires_approval=True)
def send(to: str, body: str = "") -> dict[str, str]:
    """Send a message (requires approval).

    Args:
        to: recipient.
        body: text.
    """
    return {"status": "sent", "to": to}


ALL_TOOLS = [add, echo, boom, hang, not_json, fatal, stamp, write_stamp, send]


# --- sandbox processes -------------------------------------------------------------

def sandbox_pid(session: Any) -> int | None:
    """The host pid of the session's sandbox process (None on inprocess / not started)."""
    handle = session.sandbox
    if handle is None or handle.calls_inline:  # inprocess: the host's own process
        return None
    process = getattr(handle, "process", None)
    if process is not None:
        return int(process.pid)
    attrs = handle.attrs()  # docker: the container's init process, as the host sees it
    pid = attrs["State"]["Pid"]
    return int(pid) if pid else None


def pid_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def assert_gone(pid: int | None, timeout: float = 10.0) -> None:
    """Wait (bounded) for ``pid`` to disappear; fail if it does not.

    "Gone" means its whole thread group has exited (its pidfd is readable: the
    condition the host's own liveness check uses), not just that its main
    thread is a zombie while the other threads are still being torn down.
    """
    if pid is None:
        return
    try:
        watch = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        if not select.select([watch], [], [], timeout)[0]:
            raise AssertionError(f"sandbox process {pid} is still alive (orphan)")
    finally:
        os.close(watch)
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() > deadline:
            raise AssertionError(f"sandbox process {pid} is still alive (orphan)")
        time.sleep(0.05)


def read_environ(pid: int) -> bytes:
    """The initial environment of a process, read from the host."""
    return Path(f"/proc/{pid}/environ").read_bytes()


def overlapping(spans: list[dict[str, Any]]) -> bool:
    """True if every span overlaps every other one (all ran at the same time)."""
    return max(s["start"] for s in spans) < min(s["end"] for s in spans)


def serial(spans: list[dict[str, Any]]) -> bool:
    """True if no two spans overlap."""
    ordered = sorted(spans, key=lambda s: s["start"])
    return all(a["end"] <= b["start"] for a, b in itertools.pairwise(ordered))
