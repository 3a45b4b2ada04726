"""The options of a tool, declared once: :class:`ToolOptions`.

``@tool``, :class:`~toolscript.tools.Tool`, :meth:`Tool.from_function`,
:meth:`Tool.from_schema` and every wrapper take the same keyword arguments;
this module is where they are spelled out. :class:`ToolOptions` holds the
values and their defaults; :class:`ToolOptionArgs` is the same set as a
``TypedDict`` so that signatures can say ``**options: Unpack[ToolOptionArgs]``
and type checkers still know every keyword (a test keeps the two in step).
A tool keeps the options it was built with in ``Tool.options``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

__all__ = [
    "IDEMPOTENCY_SCOPES",
    "IdempotencyScope",
    "ToolFlagArgs",
    "ToolOptionArgs",
    "ToolOptions",
    "option_names",
]

IdempotencyScope = Literal["run", "session", "global"]
IDEMPOTENCY_SCOPES: tuple[str, ...] = ("run", "session", "global")


@dataclass(frozen=True)
class ToolOptions:
    """Every option a tool can be declared with, and its default.

    Attributes:
        name: the tool name (default: the function's name).
        description: overrides the docstring-derived description.
        read_only: the tool has no side effects (may run in parallel).
        requires_approval: each call must be approved by the host's hook.
        timeout_s: per-call timeout in seconds (None: the runtime's default).
        blocking: the tool may block (network, locks, subprocesses). On the
            inprocess backend its calls run on a worker thread, so a call past
            its timeout is answered ``timeout`` and the script goes on; other
            calls run inline in the script's thread, where a call past its
            timeout ends the run. The process backends answer every timed-out
            call and ignore the flag. ``async def`` tools are always blocking.
        allowed_callers: who may call it: ``"script"`` (scripts), ``"direct"``
            (the model, as a classic function call); default both.
        examples: example argument dicts, validated against the schema when the
            tool is built, shown in stubs and sent to dialects that accept them.
        inject: parameters filled by the host from the run's context (names, or
            ``{param: context_key}``); the same as annotating them ``Injected[T]``.
        idempotent: ``True`` (per run), ``"session"`` or ``"global"``: repeats of
            a call in that scope return the first result instead of acting.
        returns: with provenance labels on (``Runtime(provenance=...)``), whether
            the tool's results are ``"trusted"`` or ``"untrusted"`` (emails, web
            pages, files, tickets); None: untrusted unless the runtime's
            provenance config names the tool trusted.
    """

    name: str | None = None
    description: str | None = None
    read_only: bool = False
    requires_approval: bool = False
    timeout_s: float | None = None
    blocking: bool = False
    allowed_callers: Iterable[str] | None = None
    examples: Sequence[Mapping[str, Any]] | None = None
    inject: Mapping[str, str] | Iterable[str] | None = None
    idempotent: bool | IdempotencyScope = False
    returns: Literal["trusted", "untrusted"] | None = None

    def replace(self, **changes: Any) -> ToolOptions:
        """A copy with ``changes`` applied (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    def keywords(self) -> dict[str, Any]:
        """The options as keyword arguments (shallow: values are not copied)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


class ToolFlagArgs(TypedDict, total=False):
    """The options that apply to every kind of tool, as keyword arguments."""

    read_only: bool
    requires_approval: bool
    timeout_s: float | None
    blocking: bool
    allowed_callers: Iterable[str] | None
    examples: Sequence[Mapping[str, Any]] | None
    returns: Literal["trusted", "untrusted"] | None


class ToolOptionArgs(ToolFlagArgs, total=False):
    """Every :class:`ToolOptions` field as a keyword argument (for ``Unpack``)."""

    name: str | None
    description: str | None
    inject: Mapping[str, str] | Iterable[str] | None
    idempotent: bool | IdempotencyScope


def option_names() -> frozenset[str]:
    """The names of every tool option."""
    return frozenset(f.name for f in dataclasses.fields(ToolOptions))
