"""``run_script`` over MCP: the SDK's real client against our real server,
in memory and over stdio (``toolscript mcp serve``)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from toolscript.runtime.integrations.mcp import build_server

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
            assert payload["new_session"] is True
            sid = payload["session_id"]

            again = await client.call_tool("run_script", {"code": "len(stores)", "session_id": sid})
            assert again.structured_content["value"] == 8
            same = await client.call_tool("run_script", {"code": "len(stores)"})
            assert same.structured_content["session_id"] == sid
            assert same.structured_content["new_session"] is False

            # Writes need approval: the default policy denies send_email.
            denied = await client.call_tool(
                "run_script", {"code": "send_email(to='a@example.com', subject='s', body='b')"}
            )
            assert denied.is_error
            assert denied.structured_content["tool_calls"] == [
                {"name": "send_email", "ok": False, "error": "denied"}
            ]

            reset = await client.call_tool("reset_session", {})
            assert reset.structured_content["ok"] is True
            gone = await client.call_tool("run_script", {"code": "1", "session_id": sid})
            assert gone.structured_content["error"]["type"] == "unknown_session"
            fresh = await client.call_tool("run_script", {"code": "stores"})
            assert fresh.structured_content["error"]["type"] == "script_error"
            assert fresh.structured_content["new_session"] is True

    with Runtime(_load_store_tools(), backend="inprocess") as rt:
        server = build_server(rt, single_client=True)
        try:
            anyio.run(scenario, server)
        finally:
            server.sessions.close_all()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_connection_without_a_transport_session_gets_one_run_sessions(mode):
    """In memory there is no transport session to bind a session to: each run
    is fresh, its session is closed at once, and no session_id is honoured."""

    async def scenario(server):
        async with Client(server, mode=mode) as client:
            first = await client.call_tool("run_script", {"code": "x = 1\nx"})
            second = await client.call_tool("run_script", {"code": "x"})
            forged = await client.call_tool("run_script", {"code": "1", "session_id": "abc"})
            return first.structured_content, second.structured_content, forged.structured_content

    with Runtime([], backend="inprocess") as rt:
        server = build_server(rt)
        first, second, forged = anyio.run(scenario, server)
        assert len(server.sessions) == 0
        server.sessions.close_all()
    assert first["value"] == 1 and first["session_id"] is None and first["new_session"]
    assert second["error"]["exception"] == "NameError"
    assert forged["error"]["type"] == "unknown_session"
    assert "no transport session" in forged["error"]["message"]


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
