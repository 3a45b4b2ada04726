"""What ``Runtime(tools=[...])`` accepts: framework tools are recognised by their
classes' names without importing any framework, and anything else is refused
with a message naming every accepted kind."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from toolscript.tools import ToolRegistry

from toolscript import Runtime
from toolscript.errors import ToolDefinitionError

ACCEPTED = ("a function", "@tool", "a Tool", "Tool.from_schema(...)", "a tool source",
            "pydantic-ai Tool", "Agents SDK FunctionTool", "LangChain BaseTool",
            "StructuredTool", "smolagents Tool")


@pytest.mark.parametrize("thing", [42, "search", {"name": "search"}, object()])
def test_an_object_that_is_no_tool_gets_an_error_naming_what_is_accepted(thing: object) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        Runtime(tools=[thing], backend="inprocess")
    message = str(caught.value)
    assert type(thing).__qualname__ in message
    for kind in ACCEPTED:
        assert kind in message, kind
    assert "must wrap a callable" not in message


def test_the_tool_constructor_names_what_is_accepted_too() -> None:
    from toolscript.tools import Tool

    with pytest.raises(ToolDefinitionError, match="LangChain BaseTool"):
        Tool(42)  # type: ignore[arg-type]


def test_detection_imports_no_framework() -> None:
    code = textwrap.dedent("""
        import sys
        from toolscript.tools import ToolRegistry
        from toolscript.tools.frameworks import framework_of

        def plain(x: int) -> int:
            return x

        class Tool:  # same class name as pydantic-ai's and smolagents', other module
            pass

        ToolRegistry([plain])
        assert framework_of(Tool()) is None
        loaded = sorted(m for m in ("pydantic_ai", "agents", "langchain_core", "smolagents")
                        if m in sys.modules)
        print(loaded)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_a_class_from_a_framework_package_is_recognised_by_its_mro() -> None:
    from smolagents import Tool as SmolTool
    from toolscript.tools.frameworks import framework_of

    class Mine(SmolTool):  # type: ignore[misc]
        name = "mine"
        description = "Mine."
        inputs: dict[str, object] = {}  # noqa: RUF012
        output_type = "string"

        def forward(self) -> str:
            return "ok"

    assert framework_of(Mine()) == "smolagents"
    assert ToolRegistry([Mine()])["mine"].invoke({}) == "ok"
