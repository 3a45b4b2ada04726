"""LangChain ``BaseTool`` / ``StructuredTool`` objects as toolscript tools.

The JSON Schema is the tool's ``tool_call_schema`` (its ``args_schema``
without the injected arguments: a pydantic model's JSON Schema, or the dict a
tool was given), validated by toolscript before approval. The description is
the tool's ``description`` without its ``Args:`` section (what ``@tool``
copies from the docstring when ``parse_docstring`` is off); the section's
texts describe the properties that have no description of their own. MCP-style
annotations in ``metadata`` (``readOnlyHint`` without ``destructiveHint``, as
``langchain-mcp-adapters`` sets them) make the tool read-only.

A call runs ``tool.invoke(arguments)``, or ``await tool.ainvoke(arguments)``
for a tool that is only asynchronous (a ``coroutine`` and no ``func``, or an
``_arun`` without a ``_run``). A ``ToolException`` (with ``handle_tool_error``
off, LangChain's default) is the call's ``tool_exception``.

Not carried over: arguments marked ``InjectedToolArg`` / ``InjectedToolCallId``
are not supplied (give them defaults), ``return_direct`` (a script always gets
the value) and the artifact of ``response_format="content_and_artifact"`` (the
content is the result).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..docstrings import parse_docstring
from .base import FrameworkTool, mcp_read_only, tool_name

__all__ = ["from_langchain", "input_schema"]

_DROPPED_ROOT = ("title", "description")


def input_schema(tool: Any, doc_params: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The JSON Schema of the arguments a LangChain tool takes from a model."""
    raw = tool.tool_call_schema
    if isinstance(raw, Mapping):
        schema = dict(raw)
    else:  # a pydantic model: closed, like toolscript's own tools (LangChain drops extras)
        schema = dict(raw.model_json_schema())
        schema.setdefault("additionalProperties", False)
    for key in _DROPPED_ROOT:
        schema.pop(key, None)
    schema.setdefault("type", "object")
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and doc_params:
        filled: dict[str, Any] = {}
        for key, prop in properties.items():
            text = doc_params.get(key)
            if isinstance(prop, Mapping) and text and "description" not in prop:
                prop = {**prop, "description": text}
            filled[key] = prop
        schema["properties"] = filled
    return schema


def _only_async(tool: Any) -> bool:
    if getattr(tool, "func", None) is not None:
        return False
    if getattr(tool, "coroutine", None) is not None:
        return True
    from langchain_core.tools import BaseTool

    kind = type(tool)
    return kind._arun is not BaseTool._arun and kind._run is BaseTool._run


def from_langchain(tool: Any) -> FrameworkTool:
    """A toolscript tool that calls the LangChain tool ``tool``."""
    name = tool_name("LangChain", tool.name)
    doc = parse_docstring(str(tool.description or ""))
    only_async = _only_async(tool)

    def invoke(args: dict[str, Any], deps: Any) -> Any:
        if only_async:
            return tool.ainvoke(args)
        return tool.invoke(args)

    metadata = tool.metadata if isinstance(tool.metadata, Mapping) else {}
    return FrameworkTool(
        invoke,
        framework="LangChain",
        source=tool,
        name=name,
        description=doc.description.strip(),
        input_schema=input_schema(tool, doc.params),
        read_only=mcp_read_only(metadata.get("annotations", metadata)),
        blocking=only_async,
    )
