"""The ``@tool`` decorator."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, overload

from .definition import IdempotencyScope, Tool

__all__ = ["tool"]


@overload
def tool(func: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    requires_approval: bool = False,
    timeout_s: float | None = None,
    allowed_callers: Iterable[str] | None = None,
    examples: Sequence[Mapping[str, Any]] | None = None,
    inject: Mapping[str, str] | Iterable[str] | None = None,
    idempotent: bool | IdempotencyScope = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    requires_approval: bool = False,
    timeout_s: float | None = None,
    allowed_callers: Iterable[str] | None = None,
    examples: Sequence[Mapping[str, Any]] | None = None,
    inject: Mapping[str, str] | Iterable[str] | None = None,
    idempotent: bool | IdempotencyScope = False,
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
        name: the tool name (default: the function's name).
        description: overrides the docstring-derived description.
        read_only: the tool has no side effects (may run in parallel).
        requires_approval: each call must be approved by the host's hook.
        timeout_s: per-call timeout in seconds.
        allowed_callers: who may call it: ``"script"`` (scripts),
            ``"direct"`` (the model, as a classic function call); default both.
        examples: example argument dicts, validated against the schema now,
            shown in stubs and sent to dialects that accept examples.
        inject: parameters filled by the host from the run's context
            (names, or ``{param: context_key}``); like ``Injected[T]``.
        idempotent: ``True`` (per run), ``"session"`` or ``"global"``: repeats
            of a call in that scope return the first result instead of acting.

    Raises:
        ToolDefinitionError: bad name or options.
        SchemaError: an annotation cannot be expressed as JSON Schema.
    """

    def decorate(f: Callable[..., Any]) -> Tool:
        return Tool.from_function(
            f,
            name=name,
            description=description,
            read_only=read_only,
            requires_approval=requires_approval,
            timeout_s=timeout_s,
            allowed_callers=allowed_callers,
            examples=examples,
            inject=inject,
            idempotent=idempotent,
        )

    if func is not None:
        return decorate(func)
    return decorate
