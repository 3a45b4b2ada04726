"""``Tool.from_schema`` over an ``async def`` function: the coroutine is awaited
(as for ``Tool.from_function``), on every backend, sync and async runs alike."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from toolscript.tools import Tool

from toolscript import Runtime

SCHEMA = {
    "type": "object",
    "properties": {"user-id": {"type": "integer"}},
    "required": ["user-id"],
}
LOOPS: list[asyncio.AbstractEventLoop] = []


async def lookup(**kwargs: Any) -> dict[str, Any]:
    await asyncio.sleep(0)
    LOOPS.append(asyncio.get_running_loop())
    if kwargs["user-id"] < 0:
        raise ValueError("no such user")
    return {"id": kwargs["user-id"], "name": "ada"}


def lookup_later(**kwargs: Any) -> Any:
    """A sync proxy that hands back a coroutine (what some SDK wrappers do)."""
    return lookup(**kwargs)


def _tool(func: Callable[..., Any], name: str = "lookup") -> Tool:
    return Tool.from_schema(func, name=name, description="Look a user up.",
                            input_schema=SCHEMA)


def test_an_async_schema_tool_is_blocking_like_an_async_function_tool() -> None:
    assert _tool(lookup).blocking


def test_a_script_gets_the_awaited_value_of_an_async_schema_tool(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([_tool(lookup), _tool(lookup_later, "lookup_later")])
    result = runtime.run("[lookup(user_id=7)['name'], lookup_later(user_id=8)['id']]")
    assert result.ok, result.error
    assert result.value == ["ada", 8]
    assert [call.ok for call in result.tool_calls] == [True, True]


def test_an_async_schema_tool_error_is_the_tool_error_not_an_invalid_result(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([_tool(lookup)])
    result = runtime.run("lookup(user_id=-1)")
    assert not result.ok
    assert "no such user" in result.error.message
    record = result.tool_calls[0]
    assert record.error is not None and record.error.type != "invalid_result"


def test_run_async_awaits_an_async_schema_tool_on_the_host_loop(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([_tool(lookup)])
    LOOPS.clear()

    async def main() -> tuple[asyncio.AbstractEventLoop, Any]:
        result = await runtime.run_async("lookup(user_id=3)")
        return asyncio.get_running_loop(), result

    loop, result = asyncio.run(main())
    assert result.ok, result.error
    assert result.value == {"id": 3, "name": "ada"}
    assert [loop] == LOOPS


def test_a_direct_call_awaits_an_async_schema_tool(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([_tool(lookup)])
    with runtime.session() as session:
        direct = session.call_tool("lookup", {"user_id": 5})
    assert direct.ok, direct.error
    assert direct.value == {"id": 5, "name": "ada"}
