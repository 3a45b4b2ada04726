"""LangChain tools passed straight to ``Runtime(tools=[...])``: ``tool_call_schema``
becomes the JSON Schema, the ``Args:`` text stays out of the description, async
tools are awaited, ``ToolException`` is a structured tool error, on every backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool, ToolException, tool
from pydantic import BaseModel, Field
from toolscript.tools import ToolRegistry, render_stub

from toolscript import Runtime


@tool
def search(query: str, limit: int = 2, trace: Annotated[str, InjectedToolArg] = "-") -> list[str]:
    """Search the index.

    Args:
        query: what to look for
        limit: how many results
    """
    if query == "offline":
        raise ToolException("the index is offline")
    return [f"{query}-{i}" for i in range(limit)]


async def shout(word: str) -> str:
    """Shout a word."""
    return word.upper() + "!"


SHOUT = StructuredTool.from_function(coroutine=shout, metadata={"readOnlyHint": True})


class RateArgs(BaseModel):
    base: str = Field(description="ISO currency code", min_length=3, max_length=3)


class Rate(BaseTool):
    name: str = "rate"
    description: str = "Exchange rate to EUR."
    args_schema: type[BaseModel] = RateArgs

    def _run(self, base: str) -> float:
        return {"USD": 0.9}.get(base, 1.0)


def test_args_text_stays_out_of_the_description_and_describes_the_properties() -> None:
    registry = ToolRegistry([search, SHOUT, Rate()])
    converted = registry["search"]
    assert converted.description == "Search the index."
    props = converted.parameters_schema["properties"]
    assert props["query"]["description"] == "what to look for"
    assert "trace" not in props  # injected arguments are not the model's
    assert registry["shout"].read_only and not converted.read_only
    assert registry["rate"].parameters_schema["properties"]["base"]["maxLength"] == 3
    assert "Args:" not in render_stub(converted).split("Args:", 1)[0]


def test_a_script_calls_sync_async_and_subclassed_tools(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([search, SHOUT, Rate()])
    result = runtime.run("[search('cat'), shout('hi'), rate(base='USD')]")
    assert result.ok, result.error
    assert result.value == [["cat-0", "cat-1"], "HI!", 0.9]


def test_bad_arguments_are_invalid_arguments(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime([Rate(), search])
    for script in ("rate(base='EURO')", "search('x', extra=1)"):
        result = runtime.run(script)
        assert result.error is not None, script
        assert result.error.details["tool_error_type"] == "invalid_arguments", script


def test_tool_exception_is_a_structured_tool_error(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime([search])
    result = runtime.run("search('offline')")
    record = result.tool_calls[0]
    assert record.error is not None and record.error.type == "tool_exception"
    assert record.error.details.get("exception") == "ToolException"
    assert result.error is not None and "the index is offline" in result.error.message
