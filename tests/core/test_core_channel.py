"""Every message the host-sandbox channel carries, on every backend.

The channel is one protocol for all backends: ``configure`` (tools, modules,
process limits), ``run``/``result``, ``call``/``reply``, ``call_many``
(``parallel``), ``reset``, ``ping`` (a warm sandbox checked before reuse) and
``shutdown``, plus the per-run limits and a sandbox that dies mid-run. Each
test drives one of them through the public surface (``Runtime``, ``Session``,
``RunResult``) and asserts the same outcome on inprocess, subprocess and
docker, including which tool calls reached the host.
"""

from __future__ import annotations

from typing import Any

import pytest
from backend_marks import process_backends

from toolscript import Decision, Limits, Runtime, tool

#: Arguments each host tool received, in call order (cleared per test).
SEEN: list[tuple[str, Any]] = []


@tool(read_only=True)
def echo(x: Any) -> Any:
    """Return ``x`` unchanged."""
    SEEN.append(("echo", x))
    return x


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    SEEN.append(("add", (a, b)))
    return a + b


@tool
def write(key: str) -> str:
    """A write: needs approval (the test hook refuses ``key='no'``)."""
    SEEN.append(("write", key))
    return key


@tool(read_only=True)
def fail(message: str) -> str:
    """Always raises ValueError."""
    SEEN.append(("fail", message))
    raise ValueError(message)


TOOLS = [echo, add, write, fail]


def approve(request: Any) -> Decision:
    """Refuse the write of key ``no``; allow the rest."""
    if request.args.get("key") == "no":
        return Decision.deny("not this key")
    return Decision.allow()


@pytest.fixture(autouse=True)
def _clear_seen() -> None:
    SEEN.clear()


@pytest.fixture
def runtime(make_runtime: Any) -> Runtime:
    """A runtime with the channel tools and the refusing approval hook."""
    rt: Runtime = make_runtime(TOOLS, approve=approve, limits=Limits(wall_time_s=5.0))
    return rt


#: The slots of ``results`` as comparable data: a failed call becomes [class, type].
SLOTS = ("[x if not isinstance(x, Exception) else [type(x).__name__, x.type] "
         "for x in results]")


# --- configure ---------------------------------------------------------------------

def test_configure_gives_the_script_exactly_the_registered_tools(runtime: Runtime) -> None:
    result = runtime.run("got = [add(1, 2), echo('e')]\ntry:\n    open_door()\n"
                         "except NameError:\n    got.append('no open_door')\ngot")
    assert result.ok, result.error
    assert result.value == [3, "e", "no open_door"]


def test_configure_applies_the_module_allow_list(make_runtime: Any) -> None:
    rt = make_runtime(TOOLS, modules=["math"])
    allowed = rt.run("import math\nmath.floor(2.5)")
    assert allowed.ok and allowed.value == 2, allowed.error
    refused = rt.run("import json\njson.dumps(1)")
    assert not refused.ok
    assert "json" in refused.error.message


# --- run / result ------------------------------------------------------------------

def test_run_returns_value_stdout_and_typed_errors(runtime: Runtime) -> None:
    ok = runtime.run("print('hi')\n6 * 7")
    assert ok.ok and ok.value == 42 and ok.stdout == "hi\n"
    err = runtime.run("raise KeyError('k')")
    assert not err.ok and err.error.type == "script_error"
    syntax = runtime.run("def (")
    assert not syntax.ok and syntax.error.type == "syntax_error"
    assert SEEN == []


# --- call / reply ------------------------------------------------------------------

def test_single_calls_valid_invalid_denied_and_failing(runtime: Runtime) -> None:
    result = runtime.run(
        "out = [add(2, 3)]\n"
        "for call in (lambda: add('two', 3), lambda: write('no'), lambda: fail('bad'),\n"
        "             lambda: echo(y=1)):\n"
        "    try:\n        call()\n"
        "    except ToolError as exc:\n"
        "        out.append([type(exc).__name__ if exc.type != 'tool_exception'\n"
        "                    else isinstance(exc, ValueError), exc.type])\n"
        "out.append(write('yes'))\nout")
    assert result.ok, result.error
    assert result.value == [
        5,
        ["ToolArgumentError", "invalid_arguments"],
        ["ToolDenied", "denied"],
        [True, "tool_exception"],  # catchable as the ValueError the tool raised
        ["ToolArgumentError", "invalid_arguments"],
        "yes",
    ]
    # refused calls never reached the host; the failing tool did run
    assert SEEN == [("add", (2, 3)), ("fail", "bad"), ("write", "yes")]
    assert [c.error.type if c.error else None for c in result.tool_calls] == [
        None, "invalid_arguments", "denied", "tool_exception", "invalid_arguments", None]


# --- call_many (parallel) ----------------------------------------------------------

def test_parallel_with_mixed_valid_invalid_and_denied_calls(runtime: Runtime) -> None:
    result = runtime.run(
        "results = parallel([(echo, {'x': 1}), (add, {'a': 'z', 'b': 1}),\n"
        "                    (write, {'key': 'no'}), (write, {'key': 'yes'}),\n"
        "                    (echo, {'y': 1}), (fail, {'message': 'm'})],\n"
        "                   return_exceptions=True)\n" + SLOTS)
    assert result.ok, result.error
    assert result.value[:5] == [
        1,
        ["ToolArgumentError", "invalid_arguments"],
        ["ToolDenied", "denied"],
        "yes",
        ["ToolArgumentError", "invalid_arguments"],
    ]
    assert result.value[5][1] == "tool_exception"
    assert sorted(SEEN, key=repr) == sorted(
        [("echo", 1), ("write", "yes"), ("fail", "m")], key=repr)
    assert len(result.tool_calls) == 6


def test_parallel_without_return_exceptions_raises_the_first_failure(runtime: Runtime) -> None:
    result = runtime.run(
        "try:\n"
        "    parallel([(echo, {'x': 1}), (write, {'key': 'no'}), (echo, {'x': 2})])\n"
        "    caught = None\n"
        "except ToolDenied as exc:\n"
        "    caught = exc.type\n"
        "caught")
    assert result.ok, result.error
    assert result.value == "denied"
    assert ("write", "no") not in SEEN


def test_parallel_with_a_non_json_argument_runs_the_same_calls_on_every_backend(
    runtime: Runtime,
) -> None:
    """One consistent rule on every backend: with ``return_exceptions=True`` the
    call whose arguments are not JSON (a set) fails alone, as invalid arguments,
    and the other calls of the batch run. A write in such a batch must act the
    same way wherever the script runs."""
    result = runtime.run(
        "results = parallel([(echo, {'x': 1}), (echo, {'x': {1, 2}}), (echo, {'x': 3})],\n"
        "                   return_exceptions=True)\n" + SLOTS)
    assert result.ok, result.error
    assert result.value == [1, ["ToolArgumentError", "invalid_arguments"], 3]
    assert sorted(SEEN) == [("echo", 1), ("echo", 3)]  # parallel: any order


# --- reset, ping (warm reuse), shutdown --------------------------------------------

def test_reset_forgets_variables_and_keeps_the_sandbox_usable(runtime: Runtime) -> None:
    with runtime.session() as session:
        assert session.run("x = echo(41)").ok
        assert session.run("x + 1").value == 42
        session.reset()
        gone = session.run("x")
        assert not gone.ok and "NameError" in gone.error.message
        again = session.run("y = add(1, 1)\ny")
        assert again.ok and again.value == 2 and again.session_restarted is False


def test_sandboxes_handed_out_again_answer_and_start_clean(runtime: Runtime) -> None:
    for n in range(3):  # each session takes a (pinged) sandbox from the backend
        with runtime.session() as session:
            fresh = session.run("try:\n    left\nexcept NameError:\n    left = None\nleft")
            assert fresh.ok and fresh.value is None, fresh.error
            assert session.run(f"left = {n}\necho(left)").value == n
    assert SEEN == [("echo", 0), ("echo", 1), ("echo", 2)]


def test_shutdown_closes_the_session_and_the_runtime_goes_on(runtime: Runtime) -> None:
    session = runtime.session()
    assert session.run("1").ok
    session.close()
    assert session.closed
    with pytest.raises(RuntimeError):
        session.run("1")
    session.close()  # idempotent
    assert runtime.run("echo('after')").value == "after"


# --- limits ------------------------------------------------------------------------

@pytest.mark.parametrize(("limits", "code", "error_type"), [
    pytest.param(Limits(max_tool_calls=3), "for i in range(10):\n    echo(i)",
                 "tool_call_limit", id="tool_calls"),
    pytest.param(Limits(max_output_chars=100), "for i in range(100):\n    print('x' * 10)",
                 "output_limit", id="output"),
    pytest.param(Limits(max_result_bytes=1_000), "'x' * 10_000", "result_limit", id="result"),
    pytest.param(Limits(wall_time_s=1.0, cpu_time_s=None), "while True:\n    pass",
                 "timeout", id="wall_time"),
])
def test_limits_end_the_run_with_their_error_type(
    make_runtime: Any, limits: Limits, code: str, error_type: str
) -> None:
    rt = make_runtime(TOOLS, limits=limits)
    with rt.session() as session:
        result = session.run(code)
        assert not result.ok and result.error.type == error_type, result.to_dict()
        after = session.run("echo('next')")
        assert after.ok and after.value == "next", after.to_dict()
    if error_type == "tool_call_limit":  # three calls ran, then the run ended
        assert SEEN[:3] == [("echo", 0), ("echo", 1), ("echo", 2)]
        assert SEEN[3:] == [("echo", "next")]


# --- crashes -----------------------------------------------------------------------

@process_backends  # inprocess has no process that could die (documented)
def test_memory_blowup_is_a_limit_and_the_session_recovers(make_runtime: Any) -> None:
    rt = make_runtime(TOOLS, limits=Limits(memory_mb=128))
    with rt.session() as session:
        assert session.run("keep = echo(1)").ok
        result = session.run("blocks = []\nwhile True:\n    blocks.append(bytearray(8_000_000))")
        assert not result.ok
        assert result.error.type in {"memory_limit", "sandbox_crashed"}, result.to_dict()
        after = session.run("echo(2)")
        assert after.ok and after.value == 2, after.to_dict()


def test_every_backend_is_a_backend_with_a_handle(make_runtime: Any, backend_name: str) -> None:
    """No backend is special-cased: inprocess too starts a sandbox behind a handle,
    and its calls take the same dispatcher path (one record per call, in order)."""
    from toolscript.runtime.backends.base import Backend, SandboxHandle

    rt = make_runtime([echo, add])
    assert isinstance(rt.backend, Backend) and rt.backend.name == backend_name
    with rt.session() as session:
        assert session.sandbox is None
        result = session.run("[echo(1), add(a=1, b=2)]")
        assert result.ok and result.value == [1, 3], result.error
        assert isinstance(session.sandbox, SandboxHandle) and session.sandbox.is_alive()
        assert [r.name for r in result.tool_calls] == ["echo", "add"]
        session.restart()
        assert session.sandbox is None
        assert session.run("echo(2)").value == 2


class AuditBroke(Exception):
    """The programmer's audit sink failed."""


def test_a_host_failure_while_serving_a_call_reaches_the_caller(make_runtime: Any) -> None:
    """When the host itself fails serving a call (here the audit callback raises),
    the caller gets that exception on every backend - the script never sees it as
    its own error - and the session starts a fresh sandbox next time."""

    def audit(record: Any, event: Any) -> None:
        if record.name == "write":
            raise AuditBroke("disk full")

    rt = make_runtime([echo, write], audit=audit)
    with rt.session() as session:
        assert session.run("kept = echo(1)").ok
        with pytest.raises(AuditBroke, match="disk full"):
            session.run("try:\n    write(key='k')\nexcept BaseException:\n    pass\n'swallowed'")
        again = session.run("echo(2)")
        assert again.ok and again.value == 2, again.error
