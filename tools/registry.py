"""The set of tools one runtime exposes: :class:`ToolRegistry`."""

from __future__ import annotations

import builtins
import difflib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from toolscript.errors import ToolDefinitionError

from .catalog import Namespace, NamespaceInfo, wire_name
from .definition import Tool
from .frameworks import as_tool
from .toolsearch import ToolSearch
from .twophase import TwoPhase

__all__ = ["RESERVED_NAMES", "ToolRegistry", "flatten_items"]

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
        items: list[Any] = list(tools)
        searches = [i for i in items if isinstance(i, ToolSearch)]
        if len(searches) > 1:
            raise ToolDefinitionError("give at most one ToolSearch among the tools")
        groups = [i for i in items if isinstance(i, Namespace)]
        deferred: set[str] = set()
        namespaces: dict[str, NamespaceInfo] = {}
        loose = [i for i in items if not isinstance(i, (Namespace, ToolSearch))]
        staged: list[Tool] = [as_tool(item) for item in _flatten(loose)]
        for group in groups:
            members = group.tools(as_tool, _flatten)
            staged.extend(members)
            if group.deferred:
                deferred.update(t.name for t in members)
            if group.name is not None:
                if group.name in namespaces:
                    raise ToolDefinitionError(f"namespace {group.name!r} is given twice")
                if group.name in reserved_names:
                    raise ToolDefinitionError(
                        f"namespace name {group.name!r} is reserved: it would shadow that "
                        "name in scripts")
                namespaces[group.name] = NamespaceInfo(
                    group.name, group.description, group.deferred, len(members))
        self._search: ToolSearch | None = searches[0] if searches else (
            ToolSearch() if deferred else None)
        if self._search is not None:
            listing = namespace_listing(sorted(namespaces.values(), key=lambda n: n.name),
                                        sum(1 for n in deferred if "." not in n))
            staged.extend(self._search.tools(listing))
        for t in staged:
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
        for name in namespaces:
            if name in by_name:
                raise ToolDefinitionError(
                    f"namespace {name!r} has the name of a tool; rename one of them")
        self._tools: dict[str, Tool] = {name: by_name[name] for name in sorted(by_name)}
        self._wire: dict[str, Tool] = {}
        for t in self._tools.values():
            wire = wire_name(t.name)
            clash = self._wire.get(wire)
            if clash is not None:
                raise ToolDefinitionError(
                    f"tools {clash.name!r} and {t.name!r} have the same function name "
                    f"{wire!r}; rename one of them")
            self._wire[wire] = t
        self._namespaces = {n: namespaces[n] for n in sorted(namespaces)}
        self._deferred = frozenset(deferred)
        if self._search is not None:
            self._search.bind(self)

    # -- namespaces and deferred loading -------------------------------------------------

    def namespaces(self) -> list[NamespaceInfo]:
        """The declared namespaces, sorted by name."""
        return list(self._namespaces.values())

    def is_deferred(self, name: str) -> bool:
        """True if tool ``name`` is loaded on demand (not shown in the prompt)."""
        return name in self._deferred

    def deferred_names(self) -> list[str]:
        """The deferred tools' names, sorted."""
        return sorted(self._deferred)

    def loaded(self) -> list[Tool]:
        """The tools shown to the model from the start (all but the deferred), by name."""
        return [t for t in self._tools.values() if t.name not in self._deferred]

    def by_wire_name(self, name: str) -> Tool | None:
        """The tool whose function name (``github__list_prs``) or name is ``name``."""
        return self._wire.get(name) or self._tools.get(name)

    @property
    def search(self) -> ToolSearch | None:
        """The tool search of this registry (None without deferred tools or a ToolSearch)."""
        return self._search

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or None."""
        return self._tools.get(name)

    @property
    def lookup(self) -> Callable[[str], Tool | None]:
        """:meth:`get` as the mapping's own bound ``get`` (a registry never changes
        after it is made): the lookup on every call's path, with no Python frame."""
        return self._tools.get

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
        """``[{"name", "description", "parameters"}]`` for classic function calling:
        the loaded tools, under their function names (``github__list_prs``)."""
        return [{**t.function_spec(), "name": wire_name(t.name)} for t in self.loaded()]

    def render_stubs(self, tools: Iterable[Tool] | None = None) -> str:
        """Python stubs for the model's prompt (deterministic): the loaded tools (or
        ``tools``), namespaced ones as ``class ns:`` blocks."""
        from .stubs import render_stubs

        described = {n.name: n.description for n in self._namespaces.values()}
        return render_stubs(self.loaded() if tools is None else tools, described)

    def __repr__(self) -> str:
        """``ToolRegistry(['a', 'b'])``."""
        return f"ToolRegistry({self.names()!r})"


MAX_LISTED_NAMESPACES = 12
"""Deferred namespaces named one line each in the prompt; the rest are counted."""


def namespace_listing(namespaces: list[NamespaceInfo], loose_deferred: int) -> str:
    """The lines the model reads about deferred namespaces (in ``search_tools``' text):
    one line each, so the prompt stays the same size as the namespaces grow."""
    shown = [n for n in namespaces if n.deferred]
    lines = [f"- {n.name}: {n.description or 'tools'} ({n.size} tools)"
             for n in shown[:MAX_LISTED_NAMESPACES]]
    if len(shown) > MAX_LISTED_NAMESPACES:  # the prompt stays bounded as sources are added
        lines.append(f"- and {len(shown) - MAX_LISTED_NAMESPACES} more namespaces "
                     f"({sum(n.size for n in shown[MAX_LISTED_NAMESPACES:])} tools)")
    if loose_deferred:
        lines.append(f"- (no namespace): {loose_deferred} more tools")
    if not lines:
        return ""
    return ("Tools loaded on demand (not listed elsewhere; find them here), by "
            "namespace:\n" + "\n".join(lines))


def flatten_items(
    items: Iterable[Any],
) -> Iterator[Tool | Callable[..., Any]]:
    """Tools, callables and framework tools out of ``items`` (TwoPhase pairs and tool
    sources opened up)."""
    return _flatten(items)


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
