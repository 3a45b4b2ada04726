"""Async scripts on every backend: awaitable tool calls, gather/TaskGroup as one
``parallel()`` batch on the host, virtual time, timeouts (issue 25 item 1)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from toolscript import Limits, Runtime, tool

MEETING = 4


def _tools() -> tuple[list[Any], list[tuple[str, int]], threading.Barrier]:
    barrier = threading.Barrier(MEETING, timeout=20)
    log: list[tuple[str, int]] = []
    lock = threading.Lock()
    busy = [0]

    @tool(read_only=True)
    def meet(i: int) -> int:
        """Returns only once MEETING calls are running at the same time."""
        barrier.wait()
        return i

    @tool(read_only=True)
    def lookup(i: int) -> dict[str, int]:
        """A record."""
        return {"i": i, "square": i * i}

    @tool()
    def write(i: int) -> int:
        """A write: records whether another write was running at the same time."""
        with lock:
            busy[0] += 1
            log.append(("start", busy[0]))
        time.sleep(0.01)
        with lock:
            busy[0] -= 1
        return i

    @tool(read_only=True, blocking=True)
    def slow(seconds: float) -> str:
        """Takes ``seconds``."""
        time.sleep(seconds)
        return "slow done"

    return [meet, lookup, write, slow], log, barrier


@pytest.fixture
def async_rt(make_runtime: Callable[..., Runtime]) -> tuple[Runtime, list[tuple[str, int]]]:
    tools, log, _barrier = _tools()
    runtime: Runtime = make_runtime(tools, approve=lambda request: True,
                                    limits=Limits(wall_time_s=30))
    return runtime, log


def test_gather_runs_read_only_calls_concurrently(async_rt: Any) -> None:
    """MEETING calls that each wait for the others: they finish only if the host
    runs them at the same time, as it runs a parallel() batch."""
    rt, _log = async_rt
    res = rt.run("import asyncio\n"
                 f"await asyncio.gather(*[meet(i=i) for i in range({MEETING})])")
    assert res.ok, res.error
    assert res.value == list(range(MEETING))
    assert [call.name for call in res.tool_calls] == ["meet"] * MEETING


def test_a_task_group_of_helpers_is_one_batch(async_rt: Any) -> None:
    rt, _log = async_rt
    res = rt.run("import asyncio\n"
                 "async def one(i):\n    return await meet(i=i) * 10\n"
                 "async with asyncio.TaskGroup() as tg:\n"
                 f"    tasks = [tg.create_task(one(i)) for i in range({MEETING})]\n"
                 "[t.result() for t in tasks]")
    assert res.ok, res.error
    assert res.value == [10 * i for i in range(MEETING)]


def test_writes_in_gather_run_one_at_a_time_in_order(async_rt: Any) -> None:
    rt, log = async_rt
    res = rt.run("import asyncio\nawait asyncio.gather(*[write(i=i) for i in range(5)])")
    assert res.ok, res.error
    assert res.value == [0, 1, 2, 3, 4]
    assert log == [("start", 1)] * 5  # never two writes at once
    assert [call.args for call in res.tool_calls] == [{"i": i} for i in range(5)]


def test_sync_and_awaited_calls_of_one_tool_mix(async_rt: Any) -> None:
    rt, _log = async_rt
    res = rt.run("import asyncio\n"
                 "first = lookup(i=2)['square']\n"
                 "def helper(i):\n    return lookup(i=i)['square']\n"
                 "async def main():\n"
                 "    a = await lookup(i=3)\n"
                 "    return [first, a['square'], helper(4)]\n"
                 "asyncio.run(main())")
    assert res.ok, res.error
    assert res.value == [4, 9, 16]


def test_sleep_does_not_wait_and_counts_against_the_wall_limit(async_rt: Any) -> None:
    rt, _log = async_rt
    res = rt.run("import asyncio\nawait asyncio.sleep(25)\n'woke'")
    assert res.ok and res.value == "woke"
    res = rt.run("import asyncio\nawait asyncio.sleep(25)\nawait asyncio.sleep(25)\n'woke'")
    assert not res.ok and res.error.type == "timeout"


def test_wait_for_drops_a_result_that_comes_too_late(async_rt: Any) -> None:
    rt, _log = async_rt
    res = rt.run("import asyncio\n"
                 "try:\n    r = await asyncio.wait_for(slow(seconds=0.5), timeout=0.05)\n"
                 "except TimeoutError:\n    r = 'timed out'\n"
                 "[r, await asyncio.wait_for(slow(seconds=0), timeout=20)]")
    assert res.ok, res.error
    assert res.value == ["timed out", "slow done"]


def test_a_failed_call_raises_in_its_task_only(async_rt: Any) -> None:
    rt, _log = async_rt
    res = rt.run("import asyncio\n"
                 "r = await asyncio.gather(lookup(i=1), lookup(i='x'), return_exceptions=True)\n"
                 "[r[0]['square'], type(r[1]).__name__, isinstance(r[1], ToolError)]")
    assert res.ok, res.error
    assert res.value[0] == 1 and res.value[2] is True
