"""A run the watchdog ended leaves the host's interpreter as it was: a tracer still traces.

In process, the watchdog ends a run past its limit with an asynchronous
exception (``PyThreadState_SetAsyncExc``) and clears one still pending when
the run ends. On CPython the pending flag is the interpreter's, not the
thread's: clearing the exception with ``NULL`` left it raised with nothing to
deliver, and from then on a thread with a trace function (a debugger,
coverage, a test harness's line budget) spun forever at the first instruction
of its next frame, before its tracer was ever called. smolagents' executor
suite hung that way (``benchmarks/smolagents_suite.py``). Each case runs in a
child process, so that a hang is a failed test and not a hung suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD_S = 30.0
"""The child's own limit: far above what its runs take (a wall limit of 0.5 s each)."""

SCENARIO = textwrap.dedent("""
    import sys
    from toolscript import Limits, Runtime

    lines = 0

    class Budget(BaseException):
        pass

    def tracer(frame, event, arg):
        global lines
        lines += 1
        if lines > LIMIT:
            raise Budget
        return tracer

    def traced_endless_loop():
        global lines
        lines = 0
        sys.settrace(tracer)
        try:
            exec("while True:\\n    pass")
        except Budget:
            pass
        finally:
            sys.settrace(None)
        return lines

    LIMIT = 20_000
    runtime = Runtime(backend="inprocess", limits=Limits(wall_time_s=0.5))
    session = runtime.session()
    if TRACED_RUN:
        sys.settrace(lambda frame, event, arg: None)  # the host traces during the run too
    first = session.run("n = 0\\nwhile True:\\n    n += 1")
    sys.settrace(None)
    assert not first.ok and first.error.type == "timeout", first.error
    assert traced_endless_loop() > LIMIT  # the tracer ran and ended the loop
    assert session.run("40 + 2").value == 42
    assert runtime.session().run("1 + 1").value == 2
    again = session.run("while True:\\n    pass")
    assert again.error.type == "timeout", again.error
    assert traced_endless_loop() > LIMIT
    print("ended")
""")


@pytest.mark.parametrize("traced_run", [False, True], ids=["tracer-after", "tracer-during"])
def test_a_timed_out_run_leaves_the_host_tracer_working(traced_run: bool) -> None:
    code = SCENARIO.replace("TRACED_RUN", repr(traced_run))
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=CHILD_S)
    except subprocess.TimeoutExpired:
        pytest.fail("the host hung after a timed-out in-process run")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ended"
