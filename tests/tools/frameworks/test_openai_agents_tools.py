"""Agents SDK ``FunctionTool`` objects passed straight to ``Runtime(tools=[...])``:
``on_invoke_tool`` is awaited with a ``ToolContext`` holding the run's ``deps``,
``needs_approval`` reaches the approval hook, the tool's exceptions are structured
tool errors (not the SDK's default error text), on every backend."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from agents import FunctionTool, RunContextWrapper, function_tool
from agents.tool_context import ToolContext
from toolscript.tools import ToolRegistry

from toolscript import Runtime, ToolCallRequest


@function_tool
async def transfer(ctx: RunContextWrapper[dict[str, str]], amount: int, to: str) -> dict[str, Any]:
    """Move money.

    Args:
        amount: in cents
        to: the receiving account
    """
    if amount <= 0:
        raise ValueError("amount must be positive")
    return {"amount": amount, "to": to, "by": ctx.context["user"]}


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


async def _maybe(ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
    return True


@function_tool(needs_approval=_maybe)
def archive(path: str) -> str:
    """Archive a file."""
    return f"archived {path}"


@function_tool(failure_error_function=lambda ctx, exc: f"sorry: {exc}")
def fragile(x: int) -> str:
    """Fail on purpose."""
    raise RuntimeError("broken")


async def _echo(ctx: ToolContext[Any], arguments: str) -> str:
    return f"{ctx.tool_name}:{json.loads(arguments)['word']}:{ctx.context}"


ECHO = FunctionTool(
    name="echo", description="Echo a word.", on_invoke_tool=_echo,
    params_json_schema={"type": "object", "properties": {"word": {"type": "string"}},
                        "required": ["word"], "additionalProperties": False},
)


def test_schema_description_and_approval_marks_carry_over() -> None:
    registry = ToolRegistry([transfer, delete_file, archive, ECHO])
    assert registry["transfer"].parameters_schema["properties"]["amount"]["description"] == (
        "in cents")
    assert registry["transfer"].description == "Move money."
    assert registry["delete_file"].requires_approval
    assert registry["archive"].requires_approval  # a per-call policy: every call is asked
    assert not registry["transfer"].requires_approval


def test_a_script_awaits_on_invoke_tool_with_the_runs_deps(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([transfer, ECHO], context={"deps": {"user": "u-9"}})
    result = runtime.run("[transfer(amount=5, to='acc-1'), echo('hi')]")
    assert result.ok, result.error
    assert result.value == [{"amount": 5, "to": "acc-1", "by": "u-9"},
                            "echo:hi:{'user': 'u-9'}"]


def test_needs_approval_reaches_the_hook(make_runtime: Callable[..., Runtime]) -> None:
    seen: list[tuple[str, bool]] = []

    def approve(request: ToolCallRequest) -> bool:
        seen.append((request.tool, request.requires_approval))
        return request.tool == "archive"

    runtime = make_runtime([delete_file, archive], approve=approve)
    result = runtime.run(
        "out = []\nfor f in (delete_file, archive):\n    try:\n        out.append(f('/tmp/x'))\n"
        "    except Exception as e:\n        out.append(type(e).__name__)\nout")
    assert result.ok, result.error
    assert result.value[1] == "archived /tmp/x" and result.value[0] != "deleted /tmp/x"
    assert seen == [("delete_file", True), ("archive", True)]
    assert [c.approved for c in result.tool_calls] == [False, True]


def test_bad_arguments_are_invalid_arguments(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime([transfer], context={"deps": {"user": "u"}})
    result = runtime.run("transfer(amount='five', to='acc')")
    assert result.error is not None
    assert result.error.details["tool_error_type"] == "invalid_arguments"


def test_the_tools_exception_is_a_structured_tool_error(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([transfer, fragile], context={"deps": {"user": "u"}})
    result = runtime.run("transfer(amount=-1, to='acc')")
    record = result.tool_calls[0]
    assert record.error is not None and record.error.type == "tool_exception"
    assert record.error.details.get("exception") == "ValueError"
    assert "amount must be positive" in (result.error.message if result.error else "")
    # the original tool still formats its errors for SDK runs
    ctx = ToolContext(context={"user": "u"}, tool_name="transfer", tool_call_id="c",
                      tool_arguments="{}")
    text = asyncio.run(transfer.on_invoke_tool(ctx, json.dumps({"amount": -1, "to": "a"})))
    assert "error" in str(text).lower()
    # an author's own failure_error_function is kept: its text is the result
    assert runtime.run("fragile(1)").value == "sorry: broken"


def test_a_disabled_tool_is_refused() -> None:
    disabled = FunctionTool(name="off", description="Off.", on_invoke_tool=_echo,
                            params_json_schema={"type": "object", "properties": {}},
                            is_enabled=False)
    with pytest.raises(Exception, match="disabled"):
        ToolRegistry([disabled])
