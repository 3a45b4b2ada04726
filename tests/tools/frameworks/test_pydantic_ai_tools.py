"""pydantic-ai ``Tool`` objects passed straight to ``Runtime(tools=[...])``: its
function schema, description and ``requires_approval`` carry over, a
``RunContext`` is built on the host with the run's ``deps``, async functions
are awaited, ``ModelRetry`` is a structured tool error, on every backend."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import ModelRetry, RunContext, Tool
from toolscript.tools import ToolRegistry

from toolscript import Runtime, ToolCallRequest


class Query(BaseModel):
    city: str
    days: int = 1


async def forecast(
    ctx: RunContext[dict[str, str]], query: Query, unit: str = "C"
) -> dict[str, Any]:
    """Forecast for a city.

    Args:
        query: where and for how long
        unit: C or F
    """
    await asyncio.sleep(0)
    if query.city == "Atlantis":
        raise ModelRetry("unknown city: try a real one")
    return {"city": query.city, "days": query.days, "unit": unit, "user": ctx.deps["user"],
            "tool": ctx.tool_name}


def double(x: int) -> int:
    """Double a number."""
    return 2 * x


def test_the_function_schema_and_description_carry_over() -> None:
    registry = ToolRegistry([Tool(forecast, requires_approval=True, timeout=7), Tool(double)])
    converted = registry["forecast"]
    schema = converted.parameters_schema
    assert schema["required"] == ["query"]
    assert schema["properties"]["unit"]["description"] == "C or F"
    assert schema["$defs"]["Query"]["required"] == ["city"]
    assert converted.description == "Forecast for a city."
    assert converted.requires_approval and converted.timeout_s == 7
    assert not registry["double"].requires_approval
    assert registry["double"].host_supplied is None  # no RunContext: nothing injected


def test_a_script_calls_them_and_the_run_context_holds_the_runs_deps(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([Tool(forecast), Tool(double)], context={"deps": {"user": "u-1"}})
    result = runtime.run("[forecast({'city': 'Paris', 'days': 2}, unit='F'), double(21)]")
    assert result.ok, result.error
    assert result.value == [
        {"city": "Paris", "days": 2, "unit": "F", "user": "u-1", "tool": "forecast"}, 42]


def test_requires_approval_reaches_the_hook_with_the_injected_deps(
    make_runtime: Callable[..., Runtime],
) -> None:
    seen: list[ToolCallRequest] = []

    def approve(request: ToolCallRequest) -> bool:
        seen.append(request)
        return request.args["query"]["city"] != "Oslo"

    runtime = make_runtime([Tool(forecast, requires_approval=True)], approve=approve,
                           context={"deps": {"user": "u-2"}})
    assert runtime.run("forecast({'city': 'Rome'})").ok
    refused = runtime.run("forecast({'city': 'Oslo'})")
    assert not refused.ok and refused.tool_calls[0].approved is False
    assert [r.requires_approval for r in seen] == [True, True]
    assert dict(seen[0].injected) == {"deps": {"user": "u-2"}}
    unhooked = make_runtime([Tool(forecast, requires_approval=True)],
                            context={"deps": {"user": "u-3"}})
    assert unhooked.run("forecast({'city': 'Rome'})").tool_calls[0].approved is False


def test_bad_arguments_are_invalid_arguments(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime([Tool(forecast)], context={"deps": {"user": "u"}})
    result = runtime.run("forecast({'days': 2})")
    assert result.error is not None
    assert result.error.details["tool_error_type"] == "invalid_arguments"
    assert "city" in result.error.message


def test_model_retry_is_a_structured_tool_error(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime([Tool(forecast)], context={"deps": {"user": "u"}})
    result = runtime.run(
        "try:\n    forecast({'city': 'Atlantis'})\nexcept Exception as e:\n    r = str(e)\nr")
    assert result.ok, result.error
    record = result.tool_calls[0]
    assert record.error is not None and record.error.type == "tool_exception"
    assert record.error.details.get("exception") == "ModelRetry"
    assert "try a real one" in result.value


def test_args_validator_runs_with_the_context(make_runtime: Callable[..., Runtime]) -> None:
    def no_zero(ctx: RunContext[Any], x: int) -> None:
        if x == 0:
            raise ModelRetry(f"zero is not allowed for {ctx.deps}")

    runtime = make_runtime([Tool(double, args_validator=no_zero)], context={"deps": "ada"})
    assert runtime.run("double(4)").value == 8
    result = runtime.run("double(0)")
    assert result.error is not None and "zero is not allowed for ada" in result.error.message


def test_a_prepare_function_is_not_applied_and_says_so() -> None:
    async def hide(ctx: RunContext[Any], tool_def: Any) -> None:
        return None

    with pytest.warns(UserWarning, match="prepare function is not applied"):
        ToolRegistry([Tool(double, prepare=hide)])
