"""What every converted framework tool shares: :class:`FrameworkTool`.

A framework tool is a :class:`~toolscript.tools.schematool.SchemaTool`: the
framework's own JSON Schema of the arguments is validated by toolscript
before approval (so a bad argument is ``invalid_arguments``, never a call),
its description and flags carry over, and the call goes to the framework's
own entry point (``forward``, ``invoke``, ``on_invoke_tool``, the pydantic-ai
function schema) with the validated arguments.

A framework whose tools take a context object (pydantic-ai's ``RunContext``,
the Agents SDK's ``ToolContext``) gets it built on the host for each call from
one *injected* value: the run's context value ``deps``
(``Runtime(context={"deps": ...})``), or None when the run has none. Like any
injected parameter it is never seen by the script or the model, and approval
hooks see it in ``ToolCallRequest.injected``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Unpack

from toolscript.errors import ToolDefinitionError

from ..asynctools import run_coroutine
from ..definition import MISSING, HostSupplied, InjectedParam, check_tool_name
from ..options import ToolFlagArgs
from ..schematool import SchemaTool, python_identifier

__all__ = ["CONTEXT_KEY", "CONTEXT_PARAM", "FrameworkTool", "mcp_read_only", "tool_name"]

CONTEXT_KEY = "deps"
"""The run-context key whose value becomes a framework context's dependencies."""

CONTEXT_PARAM = "deps"
"""The name of the injected parameter (what approval hooks and the audit show);
``_deps`` for a tool that has an argument called ``deps`` of its own."""

Invoke = Callable[[dict[str, Any], Any], Any]
"""``invoke(arguments, deps)``: runs the framework tool; may return an awaitable."""


class FrameworkTool(SchemaTool):
    """A tool of another framework, called through that framework's entry point.

    Args:
        invoke: ``invoke(arguments, deps)`` with the validated arguments (under
            the framework's own property names) and the injected ``deps`` (None
            unless ``takes_context``); an awaitable result is awaited on the
            host's loop.
        framework: the framework's name, for messages (``"smolagents"``, ...).
        source: the original tool object (kept as :attr:`source`).
        name: the tool name.
        description: what the model sees.
        input_schema: JSON Schema of the arguments object.
        output_schema: JSON Schema of the result, if known.
        takes_context: the call needs the run's ``deps`` context value.
        **options: the flags of :class:`~toolscript.tools.ToolOptions`.
    """

    source: Any
    framework: str

    def __init__(
        self,
        invoke: Invoke,
        *,
        framework: str,
        source: Any,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        output_schema: Mapping[str, Any] | None = None,
        takes_context: bool = False,
        **options: Unpack[ToolFlagArgs],
    ) -> None:
        self.framework = framework
        self.source = source
        self._invoke = invoke
        super().__init__(
            _unused, name=name, description=description, input_schema=input_schema,
            output_schema=output_schema, **options,
        )
        self._context_param: str | None = None
        if takes_context:
            taken = set(self.parameters_schema.get("properties", {}))
            param = CONTEXT_PARAM
            while param in taken:  # a model-facing argument called "deps" keeps its name
                param = "_" + param
            self._context_param = param
            self.host_supplied = HostSupplied((InjectedParam(param, CONTEXT_KEY, None),))

    def _call_remote(self, **kwargs: Any) -> Any:
        param = self._context_param
        deps = kwargs.pop(param, None) if param is not None else None
        result = self._invoke(self.to_wire(kwargs), deps)
        if inspect.isawaitable(result):
            return run_coroutine(_awaited(result))
        return result

    def __repr__(self) -> str:
        """``FrameworkTool(name='x', framework='langchain', ...)``."""
        head = f"FrameworkTool(framework={self.framework!r}, "
        return super().__repr__().replace("Tool(", head, 1)


def _unused(**kwargs: Any) -> Any:  # pragma: no cover - FrameworkTool overrides _call_remote
    raise AssertionError("FrameworkTool calls its framework through _call_remote")


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def tool_name(framework: str, name: Any) -> str:
    """``name`` as a toolscript tool name: kept when valid, else made an identifier
    (scripts call tools as Python functions)."""
    if not isinstance(name, str) or not name:
        raise ToolDefinitionError(f"a {framework} tool needs a name, got {name!r}")
    try:
        return check_tool_name(name)
    except ToolDefinitionError:
        return check_tool_name(python_identifier(name)[:64])


def mcp_read_only(hints: Any) -> bool:
    """True when MCP-style annotations (a mapping or an object) say ``readOnlyHint``
    and not ``destructiveHint`` (destructive wins), as for MCP tool sources."""
    if hints is None:
        return False
    if isinstance(hints, Mapping):
        read_only = hints.get("readOnlyHint", hints.get("read_only_hint"))
        destructive = hints.get("destructiveHint", hints.get("destructive_hint"))
    else:
        read_only = getattr(hints, "readOnlyHint", getattr(hints, "read_only_hint", None))
        destructive = getattr(hints, "destructiveHint", getattr(hints, "destructive_hint", None))
    return read_only is True and destructive is not True


def signature_defaults(func: Any) -> dict[str, Any]:
    """The JSON-able default of each parameter of ``func`` that has one."""
    from ..schema import to_json_default

    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return {}
    out: dict[str, Any] = {}
    for p in params:
        if p.default is not p.empty:
            value = to_json_default(p.default)
            if value is not MISSING:
                out[p.name] = value
    return out
