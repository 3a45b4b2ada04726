"""What runs is what was decided: Ctrl-C, plan approval and the audit of a batch.

* **Ctrl-C stops every call.** Once ``KeyboardInterrupt`` reaches the caller
  of a run (or of direct calls), no further tool call of that run starts, on
  every backend, whatever the shape of the calls: a ``parallel()`` batch of
  writes, writes mixed with reads, a loop of single calls, direct
  ``call_tools`` batches, async tools, ``run_async`` cancelled by its loop.
  The interrupt is a real SIGINT to the main thread, delivered while a write
  is running; the writes count their own starts.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from waiting import wait_until

from toolscript import Limits, Runtime, tool

WRITE_S = 0.3
"""How long each write takes: the interrupt lands while one is running."""


class Writes:
    """Starts and ends of the test's write tools, in order (thread-safe appends)."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.finished: list[int] = []

    def tools(self) -> list[Any]:
        """A write tool, an async write tool and a read tool that count their runs."""

        @tool
        def write(n: int) -> int:
            """Write item n."""
            self.started.append(n)
            time.sleep(WRITE_S)
            self.finished.append(n)
            return n

        @tool
        async def write_async(n: int) -> int:
            """Write item n (async)."""
            self.started.append(n)
            await asyncio.sleep(WRITE_S)
            self.finished.append(n)
            return n

        @tool(read_only=True)
        def read(n: int) -> int:
            """Read item n."""
            self.started.append(n)
            time.sleep(WRITE_S)
            self.finished.append(n)
            return n

        return [write, write_async, read]


def _interrupt_when(condition: Callable[[], bool]) -> threading.Thread:
    """SIGINT the main thread (as Ctrl-C does) once ``condition()`` holds."""
    main = threading.main_thread().ident
    assert main is not None and threading.current_thread() is threading.main_thread()

    def fire() -> None:
        deadline = time.monotonic() + 30.0
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.005)
        signal.pthread_kill(main, signal.SIGINT)

    thread = threading.Thread(target=fire, daemon=True)
    thread.start()
    return thread


def _assert_nothing_started_after(writes: Writes, seen: list[int]) -> None:
    """The calls running at the interrupt end; none starts after it (for several
    call durations)."""
    wait_until(lambda: len(writes.finished) >= len(seen), what="the running calls ended")
    time.sleep(WRITE_S * 5)
    assert writes.started == seen, (
        f"calls started after Ctrl-C reached the caller: {writes.started[len(seen):]}")


SCRIPTS = {
    "parallel writes": "parallel(write, [{'n': i} for i in range(8)])",
    "parallel async writes": "parallel(write_async, [{'n': i} for i in range(8)])",
    "parallel writes and reads": (
        "parallel([(write, {'n': 0}), (write, {'n': 1}), (read, {'n': 2}), (write, {'n': 3}),"
        " (write, {'n': 4}), (write, {'n': 5}), (read, {'n': 6}), (write, {'n': 7})])"),
    "a loop of writes": "for i in range(8):\n    write(n=i)",
    "a loop of parallel batches": "for i in range(8):\n    parallel(write, [{'n': i}])",
}


@pytest.mark.parametrize("shape", sorted(SCRIPTS))
def test_ctrl_c_stops_the_calls_of_a_run(backend_name: str, make_runtime: Any,
                                         shape: str) -> None:
    """A real SIGINT while a write of the run is running: ``KeyboardInterrupt``
    reaches the caller, and no call of the run starts after that."""
    writes = Writes()
    runtime: Runtime = make_runtime(writes.tools(), limits=Limits(wall_time_s=60.0))
    with runtime.session() as session:
        assert session.run("x = 1").ok
        _interrupt_when(lambda: len(writes.started) >= 1)
        with pytest.raises(KeyboardInterrupt):
            session.run(SCRIPTS[shape])
        seen = list(writes.started)
        _assert_nothing_started_after(writes, seen)
        assert session.run("1 + 1").value == 2  # the session goes on with a fresh sandbox


@pytest.mark.parametrize("tool_name", ["write", "read"])
def test_ctrl_c_stops_direct_calls(backend_name: str, make_runtime: Any,
                                   tool_name: str) -> None:
    """Direct (classic) batches: writes run on the caller's thread, reads on workers;
    Ctrl-C in either stops the rest of the batch."""
    writes = Writes()
    runtime: Runtime = make_runtime(writes.tools(), limits=Limits(wall_time_s=60.0,
                                                                   max_parallel=2))
    with runtime.session() as session:
        _interrupt_when(lambda: len(writes.started) >= 1)
        with pytest.raises(KeyboardInterrupt):
            session.call_tools([(tool_name, {"n": i}) for i in range(8)])
        seen = list(writes.started)
        _assert_nothing_started_after(writes, seen)
        assert session.call_tool(tool_name, {"n": 99}).ok


def test_cancelled_run_async_stops_the_run(backend_name: str, make_runtime: Any) -> None:
    """``run_async`` cancelled (what ``asyncio.run`` does on Ctrl-C): the run in its
    worker thread is stopped before the cancellation reaches the caller."""
    writes = Writes()
    runtime: Runtime = make_runtime(writes.tools(), limits=Limits(wall_time_s=60.0))

    async def main() -> None:
        with runtime.session() as session:
            task = asyncio.ensure_future(
                session.run_async("parallel(write, [{'n': i} for i in range(8)])"))
            while not writes.started:
                await asyncio.sleep(0.005)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            seen = list(writes.started)
            await asyncio.to_thread(_assert_nothing_started_after, writes, seen)

    asyncio.run(main())
