"""``run_script`` over MCP when the approval hook defers: the SDK's real client against
our real server (in memory). A paused result names its pending calls; the person
decides through MCP elicitation (the client's form), or elsewhere (the journal
store, as ``toolscript approvals`` does) and the client calls ``resume_run``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
import refund_tools
from mcp import Client
from refund_tools import executions
from toolscript.runtime.approval.hooks import defer_all
from toolscript.runtime.integrations.mcp import build_server

from toolscript import Decision, Runtime

REFUND = ('order = get_order("A-1042")\n'
          'issue_refund(order["order_id"], order["amount_eur"], note="late")')


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("REFUND_LOG", str(tmp_path / "executions.jsonl"))
    monkeypatch.setenv("TOOLSCRIPT_CONTINUATION_KEY", "mcp-test-key-" * 3)
    monkeypatch.setenv("TOOLSCRIPT_JOURNAL", str(tmp_path / "journal.sqlite3"))
    return str(tmp_path / "executions.jsonl")


def serve(**options: Any) -> tuple[Runtime, Any]:
    runtime = Runtime(tools=[refund_tools.get_order, refund_tools.issue_refund],
                      approve=defer_all, backend="subprocess")
    return runtime, build_server(runtime, single_client=True, **options)


def tools_of(log: str) -> list[object]:
    return [e["tool"] for e in executions(log)]


def test_elicitation_asks_the_person_and_resumes(log: str) -> None:
    asked: list[str] = []

    async def person(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True,
                                                            "reason": "ok by phone"})

    async def scenario(server: Any) -> None:
        async with Client(server, elicitation_callback=person, mode="legacy") as client:
            result = await client.call_tool("run_script", {"code": REFUND})
            payload = result.structured_content
            assert not result.is_error and payload["status"] == "ok", payload
            assert payload["value"] == "refund of 1250.00 EUR for A-1042 issued"

    runtime, server = serve()
    try:
        anyio.run(scenario, server)
    finally:
        server.sessions.close_all()
        runtime.close()
    [message] = asked
    assert "issue_refund" in message and '"amount_eur": 1250.0' in message
    assert tools_of(log) == ["get_order", "issue_refund"]  # get_order answered from the journal


def test_a_declined_form_leaves_the_run_paused(log: str) -> None:
    async def person(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async def scenario(server: Any) -> None:
        async with Client(server, elicitation_callback=person, mode="legacy") as client:
            result = await client.call_tool("run_script", {"code": REFUND})
            payload = result.structured_content
            assert payload["status"] == "paused" and not result.is_error
            assert payload["pending"][0]["tool"] == "issue_refund"

    runtime, server = serve()
    try:
        anyio.run(scenario, server)
    finally:
        server.sessions.close_all()
        runtime.close()
    assert tools_of(log) == ["get_order"]


def test_without_elicitation_a_person_decides_elsewhere_then_resume_run(log: str) -> None:
    async def scenario(server: Any, runtime: Runtime) -> None:
        async with Client(server) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"run_script", "reset_session", "resume_run"}
            paused = (await client.call_tool("run_script", {"code": REFUND})).structured_content
            assert paused["status"] == "paused"
            [pending] = paused["pending"]
            assert pending["arguments"] == {"order_id": "A-1042", "amount_eur": 1250.0,
                                            "note": "late"}
            early = await client.call_tool("resume_run", {"run_id": paused["run_id"]})
            assert early.structured_content["error"]["type"] == "undecided"
            assert tools_of(log) == ["get_order"]
            # the person decides (toolscript approvals / the inbox write the same store)
            runtime.durability.store.decide(pending["id"], Decision.allow("checked"), by="cli")
            done = await client.call_tool("resume_run", {"run_id": paused["run_id"]})
            assert done.structured_content["status"] == "ok", done.structured_content
            again = await client.call_tool("resume_run", {"run_id": paused["run_id"]})
            assert again.structured_content["error"]["type"] == "unknown_run"

    runtime, server = serve(approvals=True)
    try:
        anyio.run(scenario, server, runtime)
    finally:
        server.sessions.close_all()
        runtime.close()
    assert tools_of(log) == ["get_order", "issue_refund"]


def test_decide_pending_only_when_the_client_decides(log: str) -> None:
    async def scenario(server: Any) -> None:
        async with Client(server) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "decide_pending" in names
            paused = (await client.call_tool("run_script", {"code": REFUND})).structured_content
            pending_id = paused["pending"][0]["id"]
            denied = await client.call_tool("decide_pending", {
                "pending_id": pending_id, "approve": False, "reason": "not now"})
            payload = denied.structured_content
            assert payload["status"] == "error" and "not now" in payload["error"]["message"]

    runtime, server = serve(client_decides=True)
    try:
        anyio.run(scenario, server)
    finally:
        server.sessions.close_all()
        runtime.close()
    assert tools_of(log) == ["get_order"]
