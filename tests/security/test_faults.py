"""Fault injection: each fault gives a clear error, the session can run again,
and nothing is left running.

Faults: the sandbox killed (or its container paused) in the middle of a
tool call; a tool that hangs, raises, or returns something that is not JSON;
an approval hook that raises; Ctrl-C (``KeyboardInterrupt``) inside a tool,
inside a hook, or while the host waits for the sandbox; the Docker daemon
unreachable.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from typing import Any

import pytest
from backend_marks import DOCKER_BACKENDS, PROCESS_BACKENDS, docker_only, with_backends
from security_helpers import new_sandbox_children, sandbox_children
from waiting import wait_until

from toolscript import ApprovalRequired, Decision, Limits, Runtime, tool

FAST = Limits(wall_time_s=4.0, tool_timeout_s=0.5)


class Target:
    """Where the tool that kills its own sandbox finds it (set by the test)."""

    session: Any = None
    backend: str = ""


def _kill_own_sandbox() -> None:
    """SIGKILL the sandbox and return once it is dead (the reply must not outrun the kill)."""
    handle = Target.session.sandbox
    if Target.backend == "subprocess":
        pid = handle.process.pid
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not _pid_running(pid), what="the sandbox process dead")
    else:
        subprocess.run(["docker", "kill", handle.name], check=True, capture_output=True)
        wait_until(lambda: not _container_running(handle.name), what="the container stopped")


def _pid_running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _container_running(name: str) -> bool:
    out = subprocess.run(["docker", "inspect", "-f", "{{.State.Running}}", name],
                         capture_output=True, text=True, check=False)
    return out.returncode == 0 and out.stdout.strip() == "true"


@tool
def kill_sandbox() -> str:
    """Kill the sandbox that is calling this tool, then return."""
    _kill_own_sandbox()
    return "killed"


@tool
def pause_sandbox() -> str:
    """Freeze the container that is calling this tool."""
    subprocess.run(["docker", "pause", Target.session.sandbox.name], check=True,
                   capture_output=True)
    return "paused"


@tool(blocking=True)
def hang() -> str:
    """Never returns in time."""
    time.sleep(3)
    return "late"


@tool
def explode() -> str:
    """Raises."""
    raise RuntimeError("database is on fire")


@tool
def not_json() -> Any:
    """Returns a host object that is not JSON data."""
    return threading.Lock()


@tool
def ctrl_c() -> str:
    """The user pressed Ctrl-C while this tool ran."""
    raise KeyboardInterrupt


@tool
def ok(value: int = 1) -> int:
    """Returns its argument."""
    return value


TOOLS = [kill_sandbox, pause_sandbox, hang, explode, not_json, ctrl_c, ok]


def assert_usable(session: Any) -> None:
    result = session.run("ok(41) + 1")
    assert result.ok and result.value == 42, result.to_dict()


# Killing needs a sandbox process (not inprocess); pausing is a container fault.
@pytest.mark.parametrize(
    ("fault", "backend_name"),
    with_backends(["kill", "pause"],
                  lambda fault: PROCESS_BACKENDS if fault == "kill" else DOCKER_BACKENDS),
    indirect=["backend_name"],
)
def test_sandbox_dies_mid_call(fault: str, backend_name: str, make_runtime: Any) -> None:
    before = {pid for pid, _ in sandbox_children()}
    runtime: Runtime = make_runtime(TOOLS, limits=Limits(wall_time_s=2.0))
    with runtime.session() as session:
        assert session.run("1").ok
        Target.session, Target.backend = session, backend_name
        tool_name = "kill_sandbox" if fault == "kill" else "pause_sandbox"
        result = session.run(f"x = {tool_name}()\nprint(x)\nwhile True:\n    pass")
        assert not result.ok
        assert result.session_restarted, result.to_dict()
        assert result.error is not None
        expected = {"kill": {"sandbox_crashed", "killed"}, "pause": {"timeout"}}[fault]
        assert result.error.type in expected, result.to_dict()  # ended by the fault, not a hang
        assert [c.name for c in result.tool_calls] == [tool_name]
        assert result.tool_calls[0].ok  # the tool itself returned
        assert_usable(session)
    runtime.close()  # also stops the warm pool's idle sandbox
    if backend_name == "subprocess":
        assert not new_sandbox_children(before)


def test_tool_faults_are_data(make_runtime: Any) -> None:
    runtime: Runtime = make_runtime(TOOLS, limits=FAST)
    with runtime.session() as session:
        result = session.run(
            "out = []\n"
            "for name in ['hang', 'explode', 'not_json']:\n"
            "    try:\n"
            "        out.append(['ok', name, globals_table[name]()])\n"
            "    except ToolError as e:\n"
            "        out.append([e.type, name, e.message[:60]])\n"
            "out".replace("globals_table[name]", "{'hang': hang, 'explode': explode, "
                          "'not_json': not_json}[name]")
        )
        assert result.ok, result.to_dict()
        assert [row[:2] for row in result.value] == [
            ["timeout", "hang"], ["tool_exception", "explode"], ["invalid_result", "not_json"]]
        assert "database is on fire" in result.value[1][2]
        assert [c.error.type for c in result.tool_calls] == ["timeout", "tool_exception",
                                                              "invalid_result"]
        assert_usable(session)


def test_approval_hook_that_raises_fails_closed(make_runtime: Any) -> None:
    def broken(request: Any) -> bool:
        raise RuntimeError("policy service unreachable")

    runtime: Runtime = make_runtime(TOOLS, approve=broken, limits=FAST)
    result = runtime.run("try:\n    ok(1)\nexcept ToolDenied as e:\n    r = e.message\nr")
    assert result.ok
    assert "policy service unreachable" in result.value
    record = result.tool_calls[0]
    assert record.approved is False and record.decided_by == "hook"


def test_approval_required_stops_the_run(make_runtime: Any) -> None:
    def stop(request: Any) -> Decision:
        raise ApprovalRequired(f"{request.tool} needs a human")

    runtime: Runtime = make_runtime(TOOLS, approve=stop, limits=FAST)
    with runtime.session() as session:
        with pytest.raises(ApprovalRequired):
            session.run("try:\n    ok(1)\nexcept BaseException:\n    pass\n'swallowed'")
        runtime.approve = None
        runtime.dispatcher.approve = None
        assert_usable(session)


@pytest.mark.parametrize("where", ["tool", "hook"])
def test_ctrl_c_in_tool_or_hook(where: str, make_runtime: Any) -> None:
    """KeyboardInterrupt inside a tool or the approval hook reaches the programmer,
    even if the script wraps the call in ``except BaseException``; the call is
    recorded; the session runs the next script."""
    audited: list[Any] = []

    def hook(request: Any) -> bool:
        if request.tool == "ok" and request.args.get("value") == 7:
            raise KeyboardInterrupt
        return True

    runtime: Runtime = make_runtime(TOOLS, approve=hook if where == "hook" else None,
                                    limits=FAST, audit=lambda rec, ctx: audited.append(rec))
    call = "ctrl_c()" if where == "tool" else "ok(7)"
    with runtime.session() as session:
        with pytest.raises(KeyboardInterrupt):
            session.run(f"while True:\n    try:\n        {call}\n    except BaseException:\n"
                        "        pass")
        assert len(audited) == 1
        assert audited[0].error is not None and audited[0].error.type == "host_abort"
        assert_usable(session)


def test_ctrl_c_while_waiting(backend_name: str, make_runtime: Any) -> None:
    """A real Ctrl-C arrives in the main thread while the host waits for the
    sandbox (or, inprocess, while the script runs and tries to swallow it)."""
    assert threading.current_thread() is threading.main_thread()
    before = {pid for pid, _ in sandbox_children()}
    runtime: Runtime = make_runtime(TOOLS, limits=Limits(wall_time_s=10.0))
    with runtime.session() as session:
        assert session.run("x = 1").ok
        main = threading.main_thread().ident
        assert main is not None
        # a real SIGINT to the main thread: interrupts a blocking select() like Ctrl-C does
        timer = threading.Timer(0.5, signal.pthread_kill, (main, signal.SIGINT))
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                session.run("while True:\n    try:\n        while True:\n            pass\n"
                            "    except BaseException:\n        pass")
        finally:
            timer.cancel()
        # KeyboardInterrupt, not a timeout after 10 s: the interrupt itself ended the run
        assert_usable(session)
    runtime.close()  # also stops the warm pool's idle sandbox
    if backend_name == "subprocess":
        assert not new_sandbox_children(before)


@pytest.mark.parametrize("backend_name", PROCESS_BACKENDS, indirect=True)
def test_ctrl_c_stops_the_sandbox_at_once(backend_name: str, make_runtime: Any) -> None:
    """After Ctrl-C the abandoned run's sandbox does not keep running until its
    wall-clock limit (ten minutes here): its process or container is killed
    under the serving thread that is still reading from it."""
    assert threading.current_thread() is threading.main_thread()
    runtime: Runtime = make_runtime(TOOLS, limits=Limits(wall_time_s=600.0))
    with runtime.session() as session:
        assert session.run("x = 1").ok
        handle = session.sandbox
        main = threading.main_thread().ident
        assert handle is not None and main is not None
        timer = threading.Timer(0.5, signal.pthread_kill, (main, signal.SIGINT))
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                session.run("while True:\n    pass")
        finally:
            timer.cancel()
        if backend_name == "subprocess":
            pid = handle.process.pid
            wait_until(lambda: not _pid_running(pid), what="the sandbox process gone")
        else:
            wait_until(lambda: not _container_running(handle.name), what="the container gone")
        assert_usable(session)


@docker_only
def test_docker_daemon_unreachable(backend_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolscript.errors import BackendUnavailable

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(BackendUnavailable) as info, Runtime(backend="docker") as runtime:
        runtime.run("1")
    assert "docker" in str(info.value).lower()
