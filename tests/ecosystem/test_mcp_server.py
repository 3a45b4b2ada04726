"""``run_script`` over MCP: the SDK's real client against our real server,
in memory and over stdio (``toolscript mcp serve``)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from toolscript.runtime.mcp import build_server

from toolscript import Runtime

EXAMPLE_TOOLS = str(Path(__file__).resolve().parents[2] / "examples" / "store_tools.py")


def _load_store_tools():
    from toolscript.tools import load_tools

    return load_tools(EXAMPLE_TOOLS)


def test_in_memory_client_runs_scripts_with_sessions():
    async def scenario(server):
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"run_script", "reset_session"}
            description = tools["run_script"].description
            assert "def get_daily_revenue(store_id: str, date: str)" in description
            assert tools["run_script"].input_schema["required"] == ["code"]

            first = await client.call_tool(
                "run_script",
                {"code": "stores = list_stores()\nprint(len(stores))\nstores[0]['store_id']"},
            )
            assert not first.is_error
            payload = first.structured_content
            assert payload["value"] == "ST001" and payload["stdout"] == "8\n"
            assert payload["tool_calls"] == [{"name": "list_stores", "ok": True}]
            sid = payload["session_id"]

            again = await client.call_tool("run_script", {"code": "len(stores)", "session_id": sid})
            assert again.structured_content["value"] == 8

            # Without a session_id (and no transport session), a new session starts.
            fresh = await client.call_tool("run_script", {"code": "stores"})
            assert fresh.is_error
            assert fresh.structured_content["error"]["type"] == "script_error"
            assert fresh.structured_content["session_id"] != sid

            # Writes need approval: the default policy denies send_email.
            denied = await client.call_tool(
                "run_script", {"code": "send_email(to='a@example.com', subject='s', body='b')"}
            )
            assert denied.is_error
            assert denied.structured_content["tool_calls"] == [
                {"name": "send_email", "ok": False, "error": "denied"}
            ]

            reset = await client.call_tool("reset_session", {"session_id": sid})
            assert reset.structured_content["ok"] is True
            gone = await client.call_tool("run_script", {"code": "1", "session_id": sid})
            assert gone.structured_content["error"]["type"] == "unknown_session"

    with Runtime(_load_store_tools(), backend="inprocess") as rt:
        server = build_server(rt)
        try:
            anyio.run(scenario, server)
        finally:
            server.sessions.close_all()


def test_session_cap_closes_the_least_recently_used():
    async def scenario(server):
        async with Client(server) as client:
            ids = []
            for n in range(3):
                result = await client.call_tool("run_script", {"code": f"x = {n}\nx"})
                ids.append(result.structured_content["session_id"])
            oldest = await client.call_tool("run_script", {"code": "x", "session_id": ids[0]})
            newest = await client.call_tool("run_script", {"code": "x", "session_id": ids[2]})
            return oldest.structured_content, newest.structured_content

    with Runtime([], backend="inprocess") as rt:
        server = build_server(rt, max_sessions=2)
        oldest, newest = anyio.run(scenario, server)
        server.sessions.close_all()
    assert oldest["error"]["type"] == "unknown_session"
    assert newest["value"] == 2


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_stdio_server_keeps_the_clients_session(mode):
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "toolscript",
            "mcp",
            "serve",
            "--tools",
            EXAMPLE_TOOLS,
            "--backend",
            "subprocess",
        ],
    )

    async def scenario():
        async with Client(params, mode=mode) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert "run_script" in names
            first = await client.call_tool(
                "run_script",
                {
                    "code": "revenue = {s['store_id']: get_daily_revenue(s['store_id'], "
                    "'2026-08-24')['revenue_yuan'] for s in list_stores()}\nlen(revenue)"
                },
            )
            second = await client.call_tool("run_script", {"code": "max(revenue, key=revenue.get)"})
            return first.structured_content, second.structured_content

    first, second = anyio.run(scenario)
    assert first["ok"] and first["value"] == 8
    assert second["ok"] and second["value"].startswith("ST0")
    assert second["session_id"] == first["session_id"]  # one client per stdio server
