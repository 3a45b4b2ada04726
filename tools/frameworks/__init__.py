"""Other frameworks' tool objects as toolscript tools.

``Runtime(tools=[...])`` accepts a pydantic-ai ``Tool``, an Agents SDK
``FunctionTool``, a LangChain ``BaseTool`` or a smolagents ``Tool``; each
module here converts one of them. An object is recognised by the module and
name of the classes in its MRO, so detection imports no framework: a
framework's converter is imported only when one of its tools is passed.
:func:`as_tool` is what :class:`~toolscript.tools.ToolRegistry` applies to
each item it is given.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from toolscript.errors import ToolDefinitionError

from ..definition import Tool, not_a_tool_message
from .base import FrameworkTool

__all__ = ["FrameworkTool", "as_tool", "framework_of", "from_framework"]

_KINDS: tuple[tuple[str, str, str, str], ...] = (
    ("pydantic_ai", "Tool", "pydantic_ai_tool", "from_pydantic_ai"),
    ("agents", "FunctionTool", "openai_agents_tool", "from_openai_agents"),
    ("langchain_core", "BaseTool", "langchain_tool", "from_langchain"),
    ("smolagents", "Tool", "smolagents_tool", "from_smolagents"),
)
"""(top-level package, class name, converter module, converter function)."""


def framework_of(obj: object) -> str | None:
    """The framework package whose tool class ``obj`` is an instance of, or None.

    Reads only the names of ``type(obj).__mro__``: nothing is imported.
    """
    for cls in type(obj).__mro__:
        root = str(getattr(cls, "__module__", "") or "").split(".", 1)[0]
        for package, name, _module, _func in _KINDS:
            if root == package and cls.__name__ == name:
                return package
    return None


def _converter(package: str) -> Callable[[Any], FrameworkTool]:
    for pkg, _name, module, func in _KINDS:
        if pkg == package:
            converter: Callable[[Any], FrameworkTool] = getattr(
                importlib.import_module(f"{__name__}.{module}"), func
            )
            return converter
    raise KeyError(package)  # pragma: no cover - framework_of returns only known packages


def from_framework(obj: object) -> FrameworkTool | None:
    """``obj`` converted to a toolscript tool if it is a tool of a known
    framework, else None.

    Raises:
        ToolDefinitionError: the framework tool cannot be expressed (its schema
            or a type is not JSON data).
        SchemaError: its JSON Schema is invalid.
    """
    package = framework_of(obj)
    if package is None:
        return None
    return _converter(package)(obj)


def as_tool(item: Any) -> Tool:
    """``item`` as a toolscript :class:`~toolscript.tools.Tool`: a Tool as is, a
    framework tool converted, a plain callable through :meth:`Tool.from_function`.

    Raises:
        ToolDefinitionError: ``item`` is none of these; the message names what
            is accepted.
    """
    if isinstance(item, Tool):
        return item
    converted = from_framework(item)
    if converted is not None:
        return converted
    if not callable(item):
        raise ToolDefinitionError(not_a_tool_message(item))
    return Tool.from_function(item)
