"""smolagents ``Tool`` objects passed straight to ``Runtime(tools=[...])``:
their ``inputs`` become JSON Schema, ``output_type`` the result schema, calls
go through the tool itself (``setup()`` first), on every backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from smolagents import Tool as SmolTool
from smolagents import tool
from toolscript.tools import ToolRegistry, render_stub

from toolscript import Runtime


@tool
def add(a: int, b: int = 3) -> int:
    """Add two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


class Lookup(SmolTool):  # type: ignore[misc]
    name = "lookup_user"
    description = "Look a user up by id."
    inputs: ClassVar[dict[str, Any]] = {
        "user_id": {"type": "integer", "description": "the user's id"},
        "fields": {"type": "array", "description": "fields to return", "nullable": True},
    }
    output_type = "object"

    def setup(self) -> None:
        self.users = {7: {"name": "ada", "team": "core"}}
        self.is_initialized = True

    def forward(self, user_id: int, fields: list[str] | None = None) -> dict[str, Any]:
        if user_id not in self.users:
            raise KeyError(f"no user {user_id}")
        user = self.users[user_id]
        return {k: v for k, v in user.items() if fields is None or k in fields}


class Picture(SmolTool):  # type: ignore[misc]
    name = "show"
    description = "Show a picture."
    inputs: ClassVar[dict[str, Any]] = {"image": {"type": "image", "description": "the picture"}}
    output_type = "string"

    def forward(self, image: Any) -> str:
        return "ok"


def test_inputs_become_the_json_schema_and_output_type_the_result() -> None:
    registry = ToolRegistry([add, Lookup()])
    converted = registry["add"]
    assert converted.parameters_schema["properties"]["a"] == {
        "type": "integer", "description": "the first number"}
    assert converted.parameters_schema["required"] == ["a"]
    assert converted.parameters_schema["properties"]["b"]["default"] == 3
    assert converted.returns_schema == {"type": "integer"}
    assert converted.description == "Add two numbers."
    lookup = registry["lookup_user"]
    assert lookup.returns_schema == {"type": "object"}
    assert "def lookup_user(user_id: int, fields: list[Any] | None = None) -> dict" in (
        render_stub(lookup))


def test_a_script_calls_smolagents_tools_on_every_backend(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([add, Lookup()])
    result = runtime.run("[add(a=2), add(2, 5), lookup_user(7, fields=['name'])]")
    assert result.ok, result.error
    assert result.value == [5, 7, {"name": "ada"}]


def test_bad_arguments_are_invalid_arguments_before_the_tool_runs(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([add])
    result = runtime.run("add(a='two')")
    assert not result.ok
    assert result.error is not None and result.error.type == "tool_error"
    assert result.error.details["tool_error_type"] == "invalid_arguments"
    assert "expected an integer" in result.error.message
    record = result.tool_calls[0]
    assert record.error is not None and record.error.type == "invalid_arguments"


def test_the_tools_own_error_is_a_structured_tool_error(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime([Lookup()])
    result = runtime.run(
        "try:\n    lookup_user(99)\nexcept Exception as e:\n    r = type(e).__name__, str(e)\nr"
    )
    assert result.ok, result.error
    record = result.tool_calls[0]
    assert record.error is not None and record.error.type == "tool_exception"
    assert record.error.details.get("exception") == "KeyError"
    assert "no user 99" in result.value[1]


def test_an_input_that_is_not_json_data_is_refused_with_the_reason() -> None:
    with pytest.raises(Exception, match=r"'image'.*not JSON data"):
        ToolRegistry([Picture()])
