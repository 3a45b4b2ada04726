"""MCP from async code, with the real SDK: the tool source's connection lives on
the loop it was opened on (the caller's in async code, the shared fallback loop
in sync code) and every call runs there; the server's ``run_script`` runs
scripts concurrently while its loop keeps serving; closing leaves no thread or
server process behind."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import eco_async_tools
import psutil
import pytest
from eco_net import free_port, wait_for_port
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import ToolAnnotations
from toolscript.runtime.agent import Agent
from toolscript.runtime.integrations.mcp import MCPToolSource, build_server
from toolscript.tools import tool
from toolscript.tools.asynctools import fallback_loop

from toolscript import Decision, RunResult, Runtime
from toolscript.errors import ConfigurationError
from toolscript.testing import TestModel, call, run_script

SERVER = str(Path(__file__).with_name("eco_mcp_server.py"))
ASYNC_TOOLS = str(Path(__file__).with_name("eco_async_tools.py"))
TOKEN = "test-token-0123456789abcdef"


class LoopServer:
    """An in-process MCP server whose async tools run on the connection's loop
    (the SDK serves it in memory, on the client's loop): what they record is
    where the source's calls ran."""

    def __init__(self) -> None:
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.threads: list[int] = []
        self.server = MCPServer("Loops", log_level="CRITICAL")
        barrier = asyncio.Barrier(2)

        async def where() -> int:
            """The id of the thread this call ran on."""
            self.loops.append(asyncio.get_running_loop())
            self.threads.append(threading.get_ident())
            return threading.get_ident()

        async def meet(n: int) -> int:
            """Return n once two calls are in flight at once."""
            self.loops.append(asyncio.get_running_loop())
            async with asyncio.timeout(60):  # a bound: a failing test fails, never hangs
                await barrier.wait()
            return n

        for func in (where, meet):
            self.server.add_tool(func, annotations=ToolAnnotations(read_only_hint=True))


def server_pids() -> set[int]:
    """The pids of this process's descendants running the stdio test server."""
    found = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if SERVER in child.cmdline():
                found.add(child.pid)
        except psutil.Error:
            pass
    return found


def reaped(pids: set[int]) -> bool:
    """None of ``pids`` exists any more, not even as a zombie."""
    return not any(psutil.pid_exists(pid) for pid in pids)


# ------------------------------------------------------------------ the source, async
def test_async_use_opens_the_connection_on_the_callers_loop(
    make_runtime: Callable[..., Runtime],
) -> None:
    served = LoopServer()

    async def main() -> Any:
        async with MCPToolSource(served.server, prefix="") as source:
            assert source.loop is asyncio.get_running_loop()
            runtime = make_runtime(source.tools())
            result = await runtime.run_async("[where(), where()]")
            direct = await source.acall("where", {}, unwrap=True)
            return asyncio.get_running_loop(), threading.get_ident(), result, direct

    loop, thread, result, direct = asyncio.run(main())
    assert result.ok, result.error
    # Both calls of the script (made from the runtime's worker thread) and the
    # direct one ran on the caller's loop, in the caller's thread.
    assert result.value == [thread, thread] and direct == thread
    assert served.loops == [loop, loop, loop]


def test_async_stdio_source_keeps_validation_approval_and_audit(
    make_runtime: Callable[..., Runtime],
) -> None:
    audited: list[str] = []

    def approve(request: Any) -> Decision:
        if request.tool == "weather_server_set_alarm" and request.args["city"] != "Oslo":
            return Decision.deny("only Oslo")
        return Decision.allow()

    code = (
        "ok = weather_server_set_alarm('Oslo', -5)\n"
        "try:\n"
        "    weather_server_set_alarm('Rome', 0)\n"
        "except ToolDenied as exc:\n"
        "    denied = exc.type\n"
        "try:\n"
        "    weather_server_add('1', 2)\n"
        "except ToolArgumentError as exc:\n"
        "    invalid = exc.type\n"
        "[weather_server_add(40, 2), ok, denied, invalid, weather_server_calls_seen()]\n"
    )

    async def main() -> Any:
        async with MCPToolSource.stdio(sys.executable, [SERVER]) as source:
            assert source.loop is asyncio.get_running_loop()
            runtime = make_runtime(
                source.tools(), approve=approve, audit=lambda record, ctx: audited.append(record)
            )
            return await runtime.run_async(code)

    result = asyncio.run(main())
    assert result.ok, result.error
    total, ok, denied, invalid, seen = result.value
    assert (total, ok) == (42, "alarm set for Oslo below -5.0")
    assert (denied, invalid) == ("denied", "invalid_arguments")
    assert seen == ["set-alarm", "add"]  # refused calls never reached the server
    assert len(audited) == len(result.tool_calls) == 5


def test_two_concurrent_async_runs_share_one_connection(
    make_runtime: Callable[..., Runtime],
) -> None:
    """Each call waits until the other is in flight too: both runs' calls travel
    over the one stdio connection at the same time."""

    async def main() -> Any:
        async with MCPToolSource.stdio(sys.executable, [SERVER], include=["meet"]) as source:
            runtime = make_runtime(source.tools(), pool_size=2)
            return await asyncio.gather(
                runtime.run_async("weather_server_meet(1)"),
                runtime.run_async("weather_server_meet(2)"),
            )

    first, second = asyncio.run(main())
    assert first.ok and second.ok, (first.error, second.error)
    assert (first.value, second.value) == (1, 2)


def test_blocking_on_the_connections_own_loop_is_refused_not_hung() -> None:
    """Sync code inside a coroutine blocks the loop the connection lives on. A
    blocking call on that thread is refused; so are a sync run's calls and direct
    calls, made from another thread while this one waits in ``run``: they are
    answered at once with the way out, never left to wait for the blocked loop
    until their timeout (an hour here)."""
    served = LoopServer()

    async def main() -> Any:
        async with MCPToolSource(served.server, prefix="", timeout_s=3600) as source:
            with pytest.raises(RuntimeError, match="run_async"):
                source.call("where", {})
            results = []
            for backend in ("inprocess", "subprocess"):
                with Runtime(source.tools(), backend=backend) as runtime:
                    results.append(runtime.run("where()"))
                    with runtime.session() as session:
                        results.append(session.call_tool("where", {}))
            return results

    for refused in asyncio.run(main()):
        call = refused.tool_calls[0] if isinstance(refused, RunResult) else refused
        assert not refused.ok and call.error is not None, refused
        assert call.error.type == "tool_exception", call.error
        assert "blocked by a sync run" in call.error.message, call.error.message
        assert "run_async" in call.error.message


def test_async_agent_calls_run_on_the_callers_loop() -> None:
    served = LoopServer()
    model = TestModel(run_script("where()"), [call("where")], "done")

    async def main() -> Any:
        source = await MCPToolSource(served.server, prefix="").aconnect()
        async with Agent(model, mode="mixed", runtime_options={"backend": "inprocess"},
                         tools=[source]) as agent:
            result = await agent.run_async("go")
        closed = source.loop is None  # the agent closed the source it was given
        return asyncio.get_running_loop(), threading.get_ident(), result, closed

    loop, thread, result, closed = asyncio.run(main())
    assert [s.output for s in result.steps] == [f"value:\n{thread}", str(thread)]
    assert served.loops == [loop, loop] and closed


# ------------------------------------------------------------------ the source, sync
def test_sync_use_runs_on_the_fallback_loop_every_async_tool_shares() -> None:
    served = LoopServer()

    @tool(read_only=True)
    async def my_loop_is_the_fallback() -> bool:
        """Whether this async tool runs on the fallback loop."""
        return asyncio.get_running_loop() is fallback_loop()

    with MCPToolSource(served.server, prefix="") as source:
        assert source.loop is fallback_loop()
        with Runtime([*source.tools(), my_loop_is_the_fallback], backend="inprocess") as rt:
            result = rt.run("[where(), my_loop_is_the_fallback()]")
        # A source opened in sync code also serves async runs on another loop,
        # and direct calls from any loop: dispatched to the connection's loop.
        with Runtime(source.tools(), backend="inprocess") as rt:
            elsewhere = asyncio.run(rt.run_async("where()"))
        direct = asyncio.run(source.acall("where", {}, unwrap=True))
    assert result.ok, result.error
    assert result.value[1] is True
    assert elsewhere.ok, elsewhere.error
    assert served.loops == [fallback_loop()] * 3
    assert len(set(served.threads)) == 1 and direct == served.threads[0]
    assert served.threads[0] != threading.get_ident()


def test_stdio_source_without_async_code_still_works() -> None:
    source = MCPToolSource.stdio(sys.executable, [SERVER], include=["add", "forecast"])
    with source, Runtime(source.tools(), backend="inprocess") as rt:
        result = rt.run("weather_server_add(weather_server_forecast('Oslo')['temp_c'], 1)")
    assert result.ok and result.value == 22
    with pytest.raises(ConnectionError, match="not connected"):
        source.call("add", {"a": 1, "b": 2})


# ------------------------------------------------------------------ closing
def _join_new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Threads started since ``before`` that do not end on their own (joined first:
    the child watcher's thread may still be returning when the process is reaped)."""
    new = [t for t in threading.enumerate() if t not in before]
    for thread in new:
        thread.join(timeout=30)
    return [t for t in new if t.is_alive()]


def test_close_and_aclose_leave_no_threads_or_server_processes() -> None:
    fallback_loop()  # the shared loop outlives every source: start it before counting
    threads = set(threading.enumerate())
    assert not server_pids()

    source = MCPToolSource.stdio(sys.executable, [SERVER], include=["add"])
    source.connect()
    running = server_pids()
    assert len(running) == 1
    assert source.call("add", {"a": 1, "b": 1}, unwrap=True) == 2
    source.close()
    assert reaped(running)
    source.close()  # idempotent

    async def main() -> Any:
        async with MCPToolSource.stdio(sys.executable, [SERVER], include=["add"]) as first:
            in_block = server_pids()
            value = await first.acall("add", {"a": 2, "b": 2}, unwrap=True)
        after_block = reaped(in_block)
        second = await MCPToolSource.stdio(sys.executable, [SERVER], include=["add"]).aconnect()
        opened = server_pids()
        await second.aclose()
        await second.aclose()
        return len(in_block), value, after_block, len(opened), reaped(opened)

    assert asyncio.run(main()) == (1, 4, True, 1, True)
    assert _join_new_threads(threads) == []


def test_close_from_another_thread_than_the_connections_loop() -> None:
    """A source opened on a loop is closed from sync code in another thread: the
    closing runs on its loop and is waited for."""
    closed = threading.Event()
    holder: list[MCPToolSource] = []

    async def main() -> set[int]:
        source = await MCPToolSource.stdio(sys.executable, [SERVER], include=["add"]).aconnect()
        holder.append(source)
        running = server_pids()
        closer = threading.Thread(target=lambda: (source.close(), closed.set()))
        closer.start()
        await asyncio.to_thread(closer.join)
        return running

    running = asyncio.run(main())
    assert len(running) == 1 and closed.is_set() and reaped(running)
    with pytest.raises(ConnectionError):
        holder[0].call("add", {"a": 1, "b": 1})


def test_a_connection_whose_loop_ended_is_lost_and_connect_opens_a_new_one() -> None:
    """``asyncio.run`` returned without closing the source: its server is gone,
    calls say so, and the next :meth:`connect` opens a new connection."""
    source = MCPToolSource.stdio(sys.executable, [SERVER], include=["add"])

    async def main() -> set[int]:
        await source.aconnect()
        assert await source.acall("add", {"a": 1, "b": 2}, unwrap=True) == 3
        return server_pids()

    first = asyncio.run(main())
    assert len(first) == 1 and reaped(first)
    with pytest.raises(ConnectionError, match="not connected"):
        source.call("add", {"a": 1, "b": 2})
    with source:
        assert source.loop is fallback_loop()
        assert source.call("add", {"a": 2, "b": 2}, unwrap=True) == 4
        second = server_pids()
    assert len(second) == 1 and reaped(second)


def test_a_failed_async_connection_is_a_configuration_error_and_leaves_nothing() -> None:
    source = MCPToolSource.stdio(
        sys.executable, ["-c", "import sys; sys.exit(3)"], connect_timeout_s=20
    )
    with pytest.raises(ConfigurationError, match="cannot connect"):
        asyncio.run(source.aconnect())
    assert source.loop is None and not server_pids()


# ------------------------------------------------------------------ the server
def test_server_runs_two_scripts_at_once_on_a_free_loop() -> None:
    """Each script's async tool waits on the server's loop until the other
    script's call is in flight: both handlers run at once, and the loop is free
    while their scripts run in worker threads."""

    async def scenario(server: Any) -> Any:
        async with Client(server) as client:
            first, second = await asyncio.gather(
                client.call_tool("run_script", {"code": "meet(1)['n']"}),
                client.call_tool("run_script", {"code": "meet(2)['n']"}),
            )
            return asyncio.get_running_loop(), first.structured_content, second.structured_content

    with Runtime([eco_async_tools.meet], backend="inprocess") as rt:
        server = build_server(rt)
        loop, first, second = asyncio.run(scenario(server))
        server.sessions.close_all()
    assert first["ok"] and second["ok"], (first, second)
    assert (first["value"], second["value"]) == (1, 2)
    assert loop in eco_async_tools._BARRIERS  # the async tool ran on the server's loop


def test_http_server_serves_two_clients_scripts_at_once(tmp_path: Path) -> None:
    """``toolscript mcp serve --transport http``: two clients, each in its own
    session, whose scripts wait for each other in an async tool that runs on
    the server's event loop (its main thread)."""
    port = free_port()
    log = tmp_path / "server.log"
    command = [
        sys.executable, "-m", "toolscript", "mcp", "serve", "--tools", ASYNC_TOOLS,
        "--transport", "http", "--port", str(port), "--backend", "subprocess",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command, env={**os.environ, "TOOLSCRIPT_MCP_TOKEN": TOKEN},
            stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/mcp"

    async def one(n: int) -> Any:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            reply = await client.call_tool("run_script", {"code": f"meet({n})"})
            return reply.structured_content

    async def both() -> Any:
        return await asyncio.gather(one(1), one(2))

    try:
        wait_for_port(port, proc)
        first, second = asyncio.run(both())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert first["ok"] and second["ok"], (first, second, log.read_text())
    assert first["value"] == {"n": 1, "main_thread": True}
    assert second["value"] == {"n": 2, "main_thread": True}
    assert first["session_id"] != second["session_id"]
