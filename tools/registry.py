"""The set of tools one runtime exposes: :class:`ToolRegistry`."""

from __future__ import annotations

import builtins
import difflib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from toolscript.errors import ToolDefinitionError

from .definition import Tool
from .frameworks import as_tool
from .twophase import TwoPhase

__all__ = ["RESERVED_NAMES", "ToolRegistry"]

RESERVED_NAMES: frozenset[str] = frozenset(n for n in dir(builtins) if not n.startswith("_"))
"""Names a tool may not take: Python builtins (a tool would shadow them in scripts)."""


class ToolRegistry:
    """An immutable, name-sorted set of tools (the whitelist of one runtime).

    Plain functions are wrapped with :meth:`Tool.from_function`.  Names must be
    valid tool names, unique, and must not shadow a reserved name (Python's
    builtins plus ``reserved``, e.g. the sandbox's own helpers).
    """

    def __init__(
        self,
        tools: Iterable[Tool | TwoPhase | Callable[..., Any]] = (),
        *,
        reserved: Iterable[str] = (),
    ) -> None:
        """Register ``tools`` (a :class:`TwoPhase` pair registers both its tools; a
        tool source — an object with a ``tools()`` method returning tools, such as
        ``MCPToolSource`` or ``OpenAPISource`` — registers what ``tools()`` returns;
        a pydantic-ai ``Tool``, Agents SDK ``FunctionTool``, LangChain ``BaseTool`` or
        smolagents ``Tool`` is converted: see :mod:`toolscript.tools.frameworks`).

        Raises:
            ToolDefinitionError: a bad or reserved name, or a duplicate.
            SchemaError: a plain function's annotations cannot become JSON Schema.
        """
        reserved_names = RESERVED_NAMES | frozenset(reserved)
        by_name: dict[str, Tool] = {}
        for item in _flatten(tools):
            t = as_tool(item)
            if t.name in reserved_names:
                raise ToolDefinitionError(
                    f"tool name {t.name!r} is reserved: it would shadow "
                    f"{'the builtin' if t.name in RESERVED_NAMES else 'the sandbox name'} "
                    f"{t.name!r} in scripts; pass name= to choose another"
                )
            other = by_name.get(t.name)
            if other is not None:
                if other is t:
                    raise ToolDefinitionError(f"tool {t.name!r} is registered twice")
                raise ToolDefinitionError(
                    f"duplicate tool name {t.name!r}: {_origin(other)} and {_origin(t)}; "
                    "pass name= to rename one of them"
                )
            by_name[t.name] = t
        self._tools: dict[str, Tool] = {name: by_name[name] for name in sorted(by_name)}

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or None."""
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        """The tool called ``name``; KeyError with the known names otherwise."""
        try:
            return self._tools[name]
        except KeyError:
            raise KeyError(self.unknown_tool_message(name)) from None

    def __contains__(self, name: object) -> bool:
        """True if a tool is registered under ``name``."""
        return name in self._tools

    def __len__(self) -> int:
        """The number of tools."""
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        """The tools, sorted by name."""
        return iter(self._tools.values())

    def names(self) -> list[str]:
        """The tool names, sorted."""
        return list(self._tools)

    def unknown_tool_message(self, name: str) -> str:
        """A message for a call to an unregistered tool, naming close or all tools."""
        close = difflib.get_close_matches(name, list(self._tools), n=3)
        if close:
            hint = "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
        elif self._tools:
            hint = "available tools: " + ", ".join(self._tools)
        else:
            hint = "no tools are available"
        return f"unknown tool '{name}': {hint}"

    def describe_for_sandbox(self) -> list[dict[str, Any]]:
        """What the sandbox needs to build call stubs (the ``configure`` message).

        ``[{"name", "params": [{"name", "kind", "required"}], "read_only", "doc"}]``
        where ``doc`` is the first line of the description.
        """
        return [
            {
                "name": t.name,
                "params": [
                    {"name": p.name, "kind": p.kind, "required": p.required} for p in t.params
                ],
                "read_only": t.read_only,
                "doc": t.description.splitlines()[0] if t.description else "",
            }
            for t in self._tools.values()
            if "script" in t.allowed_callers
        ]

    def function_specs(self) -> list[dict[str, Any]]:
        """``[{"name", "description", "parameters"}]`` for classic function calling."""
        return [t.function_spec() for t in self._tools.values()]

    def render_stubs(self) -> str:
        """All tools as Python stubs for the model's prompt (deterministic)."""
        from .stubs import render_stubs

        return render_stubs(self._tools.values())

    def __repr__(self) -> str:
        """``ToolRegistry(['a', 'b'])``."""
        return f"ToolRegistry({self.names()!r})"


def _flatten(
    items: Iterable[Tool | TwoPhase | Callable[..., Any]],
) -> Iterator[Tool | Callable[..., Any]]:
    for item in items:
        if isinstance(item, TwoPhase):
            yield from item
        elif not callable(item) and callable(getattr(item, "tools", None)):
            yield from _flatten(item.tools())  # a tool source (MCP, OpenAPI ...)
        else:
            yield item


def _origin(t: Tool) -> str:
    module = getattr(t.func, "__module__", None) or "?"
    qualname = getattr(t.func, "__qualname__", None) or t.name
    return f"{module}.{qualname}"
