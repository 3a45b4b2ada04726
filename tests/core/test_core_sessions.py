"""Sessions: state persists between runs, reset() forgets it, Runtime.run is
always fresh, and a killed sandbox restarts cleanly."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest
from backend_marks import process_backends
from corehelpers import ALL_TOOLS, assert_gone, pid_alive, sandbox_pid
from waiting import wait_until

from toolscript import Limits


def test_variables_functions_classes_persist(fresh: Any) -> None:
    first = fresh.run(
        "total = 40\n"
        "def double(x):\n"
        "    return 2 * x\n"
        "class Counter:\n"
        "    def __init__(self):\n"
        "        self.n = 0\n"
        "    def tick(self):\n"
        "        self.n += 1\n"
        "        return self.n\n"
        "counter = Counter()\n"
        "counter.tick()\n"
        "import math\n"
    )
    assert first.ok, first.error
    second = fresh.run("counter.tick()\n[total + 2, double(21), counter.tick(), "
                       "isinstance(counter, Counter), math.floor(2.5)]")
    assert second.ok, second.error
    assert second.value == [42, 42, 3, True, 2]


def test_tool_results_persist_in_variables(fresh: Any) -> None:
    fresh.run("rows = [add(i, i) for i in range(5)]")
    result = fresh.run("sum(rows)")
    assert result.value == 20
    assert result.tool_calls == []  # the second run made no calls


def test_reset_forgets_everything(fresh: Any) -> None:
    fresh.run("x = 1\ndef f():\n    return 2\nclass C:\n    pass\n")
    fresh.reset()
    for name in ("x", "f", "C"):
        result = fresh.run(name)
        assert not result.ok
        assert result.error.type == "script_error"
        assert "NameError" in result.error.message
    assert fresh.run("add(1, 1)").value == 2  # tools and builtins survive a reset
    assert fresh.run("len([1])").value == 1


def test_reset_does_not_restore_user_shadowing(fresh: Any) -> None:
    fresh.run("add = lambda a, b: 'shadowed'\nlen = None")
    assert fresh.run("add(1, 2)").value == "shadowed"
    fresh.reset()
    assert fresh.run("[add(1, 2), len('ab')]").value == [3, 2]


def test_runtime_run_is_a_fresh_namespace_each_time(make_runtime: Any) -> None:
    runtime = make_runtime(ALL_TOOLS)
    assert runtime.run("secret = 42").ok
    result = runtime.run("secret")
    assert not result.ok and "NameError" in result.error.message


def test_two_sessions_do_not_share_state(make_runtime: Any) -> None:
    runtime = make_runtime(ALL_TOOLS)
    with runtime.session() as one, runtime.session() as two:
        one.run("x = 'one'")
        two.run("x = 'two'")
        assert one.run("x").value == "one"
        assert two.run("x").value == "two"


def test_closed_session_refuses_runs(make_runtime: Any) -> None:
    runtime = make_runtime()
    session = runtime.session()
    assert session.run("1").value == 1
    pid = sandbox_pid(session)
    session.close()
    session.close()  # idempotent
    assert session.closed
    with pytest.raises(RuntimeError):
        session.run("1")
    assert_gone(pid)


@process_backends  # inprocess has no process to restart: its timeout is an in-thread abort
def test_run_after_timeout_restarts_and_next_run_works(make_runtime: Any,
                                                       backend_name: str) -> None:
    runtime = make_runtime(limits=Limits(wall_time_s=0.5))
    with runtime.session() as session:
        session.run("kept = 1")
        pid = sandbox_pid(session)
        # A C-level loop the in-sandbox watchdog cannot interrupt: only a kill
        # works, the host's wall-clock one or the kernel's RLIMIT_CPU.
        result = session.run("import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')")
        assert result.error.type in ("timeout", "cpu_limit")
        assert result.session_restarted is True
        assert "lost" in result.error.message
        assert_gone(pid)
        after = session.run("kept")
        assert not after.ok and "NameError" in after.error.message  # variables were lost
        again = session.run("x = 2\nx * 21")
        assert again.ok and again.value == 42
        assert again.session_restarted is False
        assert sandbox_pid(session) != pid


@process_backends  # inprocess has no crash isolation (documented)
def test_crash_mid_run_restarts_and_next_run_works(make_runtime: Any, backend_name: str) -> None:
    from toolscript import tool

    victims: list[int] = []

    @tool(read_only=True)
    def kill_sandbox() -> int:
        """Kills the sandbox process from the host, as the OOM killer would."""
        os.kill(victims[0], signal.SIGKILL)
        # SIGKILL is delivered asynchronously (on docker the pid is the
        # container's init, whose namespace is torn down after it dies): return
        # only once it is gone, so the reply cannot outrun the kill.
        wait_until(lambda: not pid_alive(victims[0]), 10, what="the sandbox process gone")
        return 0

    runtime = make_runtime([kill_sandbox])
    with runtime.session() as session:
        session.run("x = 1")
        pid = sandbox_pid(session)
        assert pid is not None
        victims.append(pid)
        result = session.run("print('start')\nkill_sandbox()\n'never'")
        assert not result.ok
        assert result.error.type == "sandbox_crashed", result.error
        assert result.session_restarted is True
        assert_gone(pid)
        after = session.run("1 + 1")
        assert after.ok and after.value == 2


@process_backends  # inprocess has no process that could die
def test_sandbox_dying_between_runs_is_reported(make_runtime: Any, backend_name: str) -> None:
    runtime = make_runtime()
    with runtime.session() as session:
        session.run("x = 1")
        pid = sandbox_pid(session)
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        assert_gone(pid)
        result = session.run("2 + 2")
        assert result.ok and result.value == 4
        # The variables are gone: the result must say so.
        assert result.session_restarted is True
        assert not session.run("x").ok
