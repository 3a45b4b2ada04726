"""MCP tools as an attacker would use them, against the real MCP server of
``eco_mcp_server.py`` over stdio: hints that contradict each other, and a
renamed property passed under both spellings."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from toolscript.runtime.integrations.mcp import MCPToolSource

from toolscript import Decision, Runtime

SERVER = str(Path(__file__).with_name("eco_mcp_server.py"))


@pytest.fixture(scope="module")
def source():
    with MCPToolSource.stdio(sys.executable, [SERVER], prefix="wx") as connected:
        yield connected


def _seen(rt: Runtime) -> list[str]:
    result = rt.run("wx_calls_seen()")
    assert result.ok, result.error
    return [c for c in result.value if c.startswith(("bank-transfer", "purge", "unmarked"))]


def test_destructive_wins_over_read_only(source, backend_name):
    tools = {t.name: t for t in source.tools()}
    purge = tools["wx_purge"]  # readOnlyHint and destructiveHint both set
    assert not purge.read_only and purge.requires_approval
    unmarked = tools["wx_unmarked"]  # no hints: a write, like the MCP spec's defaults
    assert not unmarked.read_only and unmarked.requires_approval
    forecast = tools["wx_forecast"]
    assert forecast.read_only and not forecast.requires_approval
    with Runtime(source.tools(), backend=backend_name) as rt:
        before = _seen(rt)
        denied = rt.run(
            "out = []\n"
            "for call in (wx_purge, wx_unmarked):\n"
            "    try:\n"
            "        call('Oslo')\n"
            "        out.append('ran')\n"
            "    except ToolDenied as exc:\n"
            "        out.append(exc.type)\n"
            "out"
        )
        # A deny-writes policy lets read-only tools through and nothing else.
        rt.approve = lambda request: request.read_only
        parallel_purge = rt.run(
            "try:\n"
            "    out = parallel(wx_purge, [{'city': 'a'}, {'city': 'b'}])\n"
            "except ToolDenied as exc:\n"
            "    out = exc.type\n"
            "out"
        )
        after = _seen(rt)
    assert denied.value == ["denied", "denied"]
    assert parallel_purge.value == "denied"
    assert after == before  # nothing destructive reached the server


def test_a_renamed_property_cannot_be_passed_twice(source, backend_name):
    tool = {t.name: t for t in source.tools()}["wx_bank_transfer"]
    assert set(tool.parameters_schema["properties"]) == {"to", "amount_cents"}
    assert tool.parameters_schema["additionalProperties"] is False
    approved: list[dict] = []

    def approve(request):
        if request.tool != "wx_bank_transfer":
            return True
        approved.append(dict(request.args))
        amount = request.args.get("amount_cents", 0)
        return Decision.allow() if amount <= 1000 else Decision.deny("too much")

    attacks = [
        "wx_bank_transfer(to='mallory', amount_cents=500, **{'amount-cents': 100000})",
        "wx_bank_transfer(to='mallory', **{'amount-cents': 100000})",
        "wx_bank_transfer('mallory', 500, **{'amount-cents': 100000})",
        "wx_bank_transfer(**{'to': 'mallory', 'amount_cents': 5, 'amount-cents': 100000})",
        "wx_bank_transfer(to='mallory', amount_cents=500, amount_cents_2=100000)",
        "parallel(wx_bank_transfer, [{'to': 'm', 'amount_cents': 1, 'amount-cents': 100000}])",
    ]
    with Runtime(source.tools(), backend=backend_name, approve=approve) as rt:
        before = _seen(rt)
        results = [rt.run(code) for code in attacks]
        honest = rt.run("wx_bank_transfer(to='bob', amount_cents=500)")
        classic = rt.session().call_tool(
            "wx_bank_transfer", {"to": "m", "amount_cents": 5, "amount-cents": 100000}
        )
        after = _seen(rt)
    for code, result in zip(attacks, results, strict=True):
        assert not result.ok, code
        assert result.error.details["tool_error_type"] == "invalid_arguments", code
    assert not classic.ok and classic.error.type == "invalid_arguments"
    assert "amount_cents" in results[1].error.message  # names the spelling to use
    assert honest.ok and honest.value == "sent 500 to bob"
    # What the approver saw is what the server received; nothing else got there.
    assert approved == [{"to": "bob", "amount_cents": 500}]
    assert after[len(before):] == ["bank-transfer bob 500"]
