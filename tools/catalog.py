"""Namespaces and deferred loading: how a large tool set is grouped and shown.

A :class:`Namespace` groups tools under a name (``github``): each tool is
registered as ``github.list_prs``, a script calls it as ``github.list_prs(...)``,
approval hooks, policies, audit records and statistics see the qualified name,
and a classic function call uses the wire name ``github__list_prs`` (providers
allow no dots in function names). ``deferred=True`` keeps the namespace's tools
out of the prompt: the model sees one line for the namespace and finds its tools
with ``search_tools`` / ``describe_tool`` (:mod:`.toolsearch`). :class:`Deferred`
defers tools without a namespace.
"""

from __future__ import annotations

import copy
import keyword
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from toolscript.errors import ToolDefinitionError

from .definition import Tool

__all__ = [
    "WIRE_SEPARATOR",
    "Deferred",
    "Namespace",
    "NamespaceInfo",
    "check_namespace_name",
    "qualified",
    "short_name",
    "wire_name",
]

WIRE_SEPARATOR = "__"
"""What stands for the dot of ``namespace.tool`` in a function name sent to a model."""


def check_namespace_name(name: object) -> str:
    """Return ``name`` if it can name a namespace (a Python identifier without
    ``__``, not a keyword, at most 30 characters), else raise ToolDefinitionError."""
    if (not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name)
            or WIRE_SEPARATOR in name or name.startswith("_") or len(name) > 30):
        raise ToolDefinitionError(
            f"invalid namespace name {name!r}: use a Python identifier of at most 30 "
            "characters that does not start with '_' and has no '__'"
        )
    return name


def qualified(namespace: str | None, name: str) -> str:
    """``github.list_prs`` (or ``name`` alone without a namespace)."""
    return f"{namespace}.{name}" if namespace else name


def short_name(name: str) -> str:
    """The tool's own name without its namespace (``github.list_prs`` -> ``list_prs``)."""
    return name.rsplit(".", 1)[-1]


def wire_name(name: str) -> str:
    """The function name a model calls for tool ``name`` (``github__list_prs``)."""
    return name.replace(".", WIRE_SEPARATOR)


@dataclass(frozen=True)
class NamespaceInfo:
    """What the registry knows of one namespace (for prompts and search)."""

    name: str
    description: str
    deferred: bool
    size: int


class Namespace:
    """Tools grouped under ``name``, optionally deferred (loaded on demand).

    ``tools`` may hold anything a runtime accepts: functions, :class:`Tool`\\ s,
    tool sources (``MCPToolSource``, ``OpenAPISource``) and framework tools.
    The tools are registered under ``name.<tool name>``; the originals are not
    changed (the namespace holds renamed copies).
    """

    def __init__(
        self,
        name: str | None,
        tools: Iterable[Any],
        *,
        description: str = "",
        deferred: bool = False,
    ) -> None:
        """Group ``tools`` under ``name`` (None: no namespace, for :class:`Deferred`).

        Raises:
            ToolDefinitionError: a bad namespace name, or a tool name with a dot.
        """
        self.name = None if name is None else check_namespace_name(name)
        self.description = " ".join(str(description).split())
        self.deferred = bool(deferred)
        self._items = list(tools)
        self._tools: list[Tool] | None = None

    def tools(
        self,
        convert: Callable[[Any], Tool] | None = None,
        flatten: Callable[[Iterable[Any]], Iterable[Any]] | None = None,
    ) -> list[Tool]:
        """The tools, renamed into the namespace (built once); ``flatten`` opens tool
        sources and TwoPhase pairs (the registry passes its own)."""
        if self._tools is None:
            out: list[Tool] = []
            for item in (flatten(self._items) if flatten is not None else self._items):
                tool = convert(item) if convert is not None else _as_tool(item)
                out.append(_renamed(tool, self.name) if self.name else tool)
            self._tools = out
        return list(self._tools)

    def __repr__(self) -> str:
        """``Namespace('github', deferred=True)``."""
        return f"{type(self).__name__}({self.name!r}, deferred={self.deferred})"


class Deferred(Namespace):
    """Tools without a namespace that are loaded on demand (found with ``search_tools``)."""

    def __init__(self, tools: Iterable[Any]) -> None:
        """Defer ``tools`` (anything a runtime accepts)."""
        super().__init__(None, tools, deferred=True)

    def __repr__(self) -> str:
        """``Deferred(3 tools)``."""
        return f"Deferred({len(self._items)} items)"


def _as_tool(item: Any) -> Tool:
    from .frameworks import as_tool

    return as_tool(item)


def _renamed(tool: Tool, namespace: str) -> Tool:
    """A copy of ``tool`` registered as ``namespace.<name>``."""
    if "." in tool.name:
        raise ToolDefinitionError(
            f"tool {tool.name!r} is already in a namespace; a namespace holds plain tools"
        )
    name = qualified(namespace, tool.name)
    if len(wire_name(name)) > 64:
        raise ToolDefinitionError(
            f"tool {name!r}: its function name {wire_name(name)!r} is longer than the 64 "
            "characters providers accept; choose a shorter namespace or tool name"
        )
    renamed = copy.copy(tool)
    renamed.name = name
    renamed.options = tool.options.replace(name=name)
    return renamed
