"""The ``@tool`` decorator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Unpack, overload

from .definition import Tool
from .options import ToolOptionArgs, ToolOptions

__all__ = ["tool"]


@overload
def tool(func: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *, options: ToolOptions | None = None, **kwargs: Unpack[ToolOptionArgs]
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    options: ToolOptions | None = None,
    **kwargs: Unpack[ToolOptionArgs],
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a function into a :class:`Tool`; usable bare or with options.

    Example::

        @tool
        def add(a: int, b: int) -> int: ...

        @tool(read_only=True, timeout_s=5)
        def get_daily_revenue(store_id: str, date: str) -> dict: ...

    The decorated name is the :class:`Tool`; calling it still calls the function.

    Args:
        func: the function (when used bare as ``@tool``).
        options: a ready :class:`~toolscript.tools.options.ToolOptions`.
        **kwargs: the options as keyword arguments (they override ``options``):
            ``name``, ``description``, ``read_only``, ``requires_approval``,
            ``timeout_s``, ``allowed_callers``, ``examples``, ``inject``,
            ``idempotent``; each is described on
            :class:`~toolscript.tools.options.ToolOptions`.

    Raises:
        ToolDefinitionError: bad name or options.
        SchemaError: an annotation cannot be expressed as JSON Schema.
    """

    def decorate(f: Callable[..., Any]) -> Tool:
        return Tool.from_function(f, options=options, **kwargs)

    if func is not None:
        return decorate(func)
    return decorate
