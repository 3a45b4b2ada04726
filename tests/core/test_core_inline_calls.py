"""Tool calls with a per-call timeout: inline in the serving thread, bounded everywhere.

On every backend a call runs in the thread serving the run, its deadline kept
by the runtime's one watchdog. A tool that hangs (in ``time.sleep``, on a lock,
in a blocking C call, in a coroutine) is answered ``timeout`` while the run
goes on - on the process backends always, in process when the tool is declared
``blocking`` (or is async) - its thread is counted as abandoned until it
returns, and its late result is dropped. In process, a hung tool that is not
declared blocking shares the script's thread: the run ends ``timeout`` at the
call's timeout and the sandbox is replaced. No wall-clock asserts: the tests
wait on events the tools and the runtime set.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from toolscript.runtime.calls.deadlines import Deadlines

from toolscript import Limits, Runtime, tool


class Hang:
    """Ways for a tool to block, each released by :meth:`release` (never by a sleep)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()
        self.read_end, self.write_end = os.pipe()
        self.event = threading.Event()
        self.entered = threading.Event()
        self.returned = threading.Event()

    def block(self, how: str) -> str:
        self.entered.set()
        try:
            if how == "sleep":
                self.event.wait(60)  # Event.wait: a C-level wait on a lock
            elif how == "lock" and self.lock.acquire(timeout=60):
                self.lock.release()  # the next blocked call goes on too
            elif how == "c_call":
                select.select([self.read_end], [], [], 60)  # a blocking system call
            return how
        finally:
            self.returned.set()

    def release(self) -> None:
        self.event.set()
        if self.lock.locked():
            self.lock.release()
        os.write(self.write_end, b"x")

    def close(self) -> None:
        self.release()
        os.close(self.read_end)
        os.close(self.write_end)


@pytest.fixture
def hang() -> Iterator[Hang]:
    made = Hang()
    yield made
    made.close()


def _wait_for(condition: Callable[[], bool]) -> bool:
    """Poll ``condition`` on an event's timeout (a bounded wait, not a timing assert)."""
    pause = threading.Event()
    for _ in range(1000):
        if condition():
            return True
        pause.wait(0.01)
    return condition()


def _tools(hang: Hang, blocking: bool = True) -> list[Any]:
    @tool(timeout_s=0.2, blocking=blocking)
    def stuck(how: str) -> str:
        """Block until the test releases it."""
        return hang.block(how)

    @tool
    def quick(x: int) -> int:
        """Answer at once."""
        return x + 1

    return [stuck, quick]


SCRIPT = ("try:\n    r = stuck(HOW)\nexcept ToolTimeout as e:\n    r = e.type\n"
          "[r, quick(1), quick(2)]")


@pytest.mark.parametrize("how", ["sleep", "lock", "c_call"])
def test_a_hung_tool_times_out_and_the_run_goes_on(
    make_runtime: Callable[..., Runtime], hang: Hang, how: str,
):
    rt = make_runtime(_tools(hang))
    with rt.session() as session:
        result = session.run(SCRIPT.replace("HOW", repr(how)))
        assert result.ok, result.error
        assert result.value == ["timeout", 2, 3]
        assert [r.error.type if r.error else "ok" for r in result.tool_calls] == [
            "timeout", "ok", "ok"]
        assert not result.session_restarted
        stats = rt.stats()
        assert stats["abandoned_threads"] == 1 and stats["abandoned_total"] == 1
        hang.release()
        assert hang.returned.wait(30)
        assert _wait_for(lambda: rt.stats()["abandoned_threads"] == 0)
        # the late result is dropped: no record, no reply; the session goes on
        again = session.run("[quick(10), r]")
        assert again.ok and again.value == [11, "timeout"]
        assert len(again.tool_calls) == 1


def test_the_default_limit_bounds_an_inline_call(make_runtime: Callable[..., Runtime],
                                                 hang: Hang, backend_name: str):
    @tool
    def wait_forever() -> str:
        """Block (no timeout of its own: Limits.tool_timeout_s applies)."""
        return hang.block("lock")

    rt = make_runtime([wait_forever], limits=Limits(tool_timeout_s=0.2))
    result = rt.run("try:\n    wait_forever()\nexcept ToolError as e:\n    r = e.type\nr")
    if backend_name == "inprocess":  # the call shares the script's thread: the run ends
        assert not result.ok and result.error is not None
        assert result.error.type == "timeout" and result.session_restarted
    else:
        assert result.ok and result.value == "timeout", result.error
    assert "0.2 s" in result.tool_calls[0].error.message


def test_a_hung_inline_tool_ends_the_inprocess_run(hang: Hang):
    """In process, a tool not declared blocking runs in the script's thread: at its
    timeout the caller gets the run back (``timeout``), the sandbox is replaced, and
    the script never runs on after the tool finally returns. (The process backends
    answer the call and the run goes on: tested above.)"""
    after: list[str] = []

    @tool
    def mark(x: str) -> str:
        """Record that the script went on."""
        after.append(x)
        return x

    stuck, quick = _tools(hang, blocking=False)
    with Runtime(tools=[stuck, quick, mark], backend="inprocess") as rt, rt.session() as session:
        assert session.run("kept = 1").ok
        result = session.run("try:\n    stuck('lock')\nexcept BaseException:\n    pass\n"
                             "mark('went on')")
        assert not result.ok and result.error is not None
        assert result.error.type == "timeout" and "stuck did not finish" in result.error.message
        assert result.session_restarted
        assert [r.error.type if r.error else "ok" for r in result.tool_calls] == ["timeout"]
        assert rt.stats()["abandoned_threads"] == 1
        hang.release()
        assert hang.returned.wait(30)
        assert _wait_for(lambda: rt.stats()["abandoned_threads"] == 0)
        assert after == []  # the abandoned script stopped at once
        again = session.run("try:\n    kept\nexcept NameError:\n    r = 'lost'\n[r, quick(1)]")
        assert again.ok and again.value == ["lost", 2], again.error


def test_abandoned_inline_calls_are_capped(make_runtime: Callable[..., Runtime], hang: Hang):
    rt = make_runtime(_tools(hang), limits=Limits(max_abandoned_threads=2))
    code = ("out = []\nfor i in range(4):\n    try:\n        stuck('lock')\n"
            "    except ToolError as e:\n        out.append(e.type)\nout")
    result = rt.run(code)
    assert result.ok, result.error
    assert result.value == ["timeout", "timeout", "overloaded", "overloaded"]
    assert rt.stats()["abandoned_threads"] == 2
    hang.release()
    assert _wait_for(lambda: rt.stats()["abandoned_threads"] == 0)
    assert rt.stats()["abandoned_total"] == 2


def test_a_hung_async_tool_times_out(make_runtime: Callable[..., Runtime]):
    release = threading.Event()

    @tool(timeout_s=0.2)
    async def slow() -> str:
        """Await until released."""
        while not release.is_set():
            await asyncio.sleep(0.01)
        return "late"

    assert slow.blocking  # async tools always are: the run goes on on every backend
    rt = make_runtime([slow])
    try:
        result = rt.run("try:\n    r = slow()\nexcept ToolTimeout as e:\n    r = e.type\nr")
        assert result.ok and result.value == "timeout", result.error
    finally:
        release.set()


def test_parallel_with_a_hung_call(make_runtime: Callable[..., Runtime], hang: Hang):
    @tool(read_only=True, timeout_s=0.2)
    def look(i: int) -> int:
        """Read; the first one hangs."""
        if i == 0:
            hang.block("lock")
        return i

    @tool(timeout_s=0.2)
    def write(i: int) -> int:
        """Write; the first one hangs."""
        if i == 0:
            hang.block("lock")
        return i

    rt = make_runtime([look, write])
    result = rt.run("[[x if isinstance(x, int) else x.type "
                    "for x in parallel(t, [0, 1, 2], return_exceptions=True)] "
                    "for t in (look, write)]")
    assert result.ok, result.error
    assert result.value == [["timeout", 1, 2], ["timeout", 1, 2]]
    assert [r.error.type for r in result.tool_calls if r.error] == ["timeout", "timeout"]


def test_calls_run_inline_in_the_serving_thread(make_runtime: Callable[..., Runtime]):
    threads: list[int] = []

    @tool
    def where() -> int:
        """Record the thread serving the call."""
        threads.append(threading.get_ident())
        return len(threads)

    rt = make_runtime([where])
    result = rt.run("[where() for _ in range(50)]")
    assert result.ok and result.value == list(range(1, 51)), result.error
    assert len(set(threads)) == 1
    assert threads[0] != threading.get_ident()
    assert rt.executor.deadlines.pending() == 0


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals reach the main thread only")
def test_ctrl_c_while_a_tool_hangs(make_runtime: Callable[..., Runtime], hang: Hang):
    main = threading.main_thread().ident
    assert main is not None

    @tool(timeout_s=30)
    def stuck() -> str:
        """Block; Ctrl-C arrives meanwhile (in the main thread, as a terminal's does)."""
        signal.pthread_kill(main, signal.SIGINT)
        return hang.block("lock")

    @tool
    def quick(x: int) -> int:
        """Answer at once."""
        return x + 1

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    rt = make_runtime([stuck, quick])
    try:
        with rt.session() as session:
            with pytest.raises(KeyboardInterrupt):
                session.run("while True:\n    try:\n        stuck()\n"
                            "    except BaseException:\n        pass")
            hang.release()
            after = session.run("quick(1)")
            assert after.ok and after.value == 2, after.error
    finally:
        signal.signal(signal.SIGINT, previous)


# --- the watchdog itself ----------------------------------------------------------------


def test_deadlines_fire_once_and_cancel_wins_before():
    deadlines = Deadlines()
    fired = threading.Event()
    never: list[int] = []
    try:
        cancelled = deadlines.add(0.0 + 10**9, lambda: never.append(1))
        assert deadlines.cancel(cancelled) is True
        due = deadlines.add(0.0, fired.set)  # already passed: fires at once
        assert fired.wait(30)
        assert deadlines.cancel(due) is False  # too late: its action ran
        assert deadlines.pending() == 0
        assert never == []
    finally:
        deadlines.close()


def test_deadlines_keep_order_and_drop_cancelled_entries():
    deadlines = Deadlines()
    order: list[int] = []
    last = threading.Event()
    try:
        entries = [deadlines.add(10**9 + i, lambda: order.append(-1)) for i in range(5000)]
        for entry in entries:
            deadlines.cancel(entry)
        assert deadlines.pending() == 0
        assert deadlines.held() < 5000  # compacted
        now = time.monotonic()
        deadlines.add(now + 0.2, lambda: order.append(2))
        deadlines.add(now + 0.1, lambda: order.append(1))
        deadlines.add(now + 0.3, last.set)
        assert last.wait(30)
        assert order == [1, 2]
    finally:
        deadlines.close()
