"""The parts of the core runtime the agent relies on, as structural types.

The agent needs only these methods and attributes of ``Runtime``, ``Session``,
``RunResult`` and ``ToolCallRecord``; typing against protocols keeps the agent
testable on its own and documents the contract with the core.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

__all__ = [
    "ErrorLike",
    "RegistryLike",
    "RunResultLike",
    "RuntimeLike",
    "SessionLike",
    "ToolCallRecordLike",
    "ToolLike",
]


class ErrorLike(Protocol):
    """A structured error: a stable ``type`` string, a ``message``, the script
    ``line`` it points at (if any) and further ``details`` (``column``...)."""

    @property
    def type(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def line(self) -> int | None: ...
    @property
    def details(self) -> dict[str, Any]: ...


class ToolCallRecordLike(Protocol):
    """One attempted tool call (audited by the core)."""

    @property
    def name(self) -> str: ...
    @property
    def args(self) -> Any: ...
    @property
    def approved(self) -> bool | None: ...
    @property
    def ok(self) -> bool: ...
    @property
    def value(self) -> Any: ...
    @property
    def error(self) -> ErrorLike | None: ...
    @property
    def duration_s(self) -> float: ...


class RunResultLike(Protocol):
    """The outcome of one script run."""

    @property
    def ok(self) -> bool: ...
    @property
    def value(self) -> Any: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stdout_truncated(self) -> bool: ...
    @property
    def error(self) -> ErrorLike | None: ...
    @property
    def tool_calls(self) -> Sequence[ToolCallRecordLike]: ...


class SessionLike(Protocol):
    """A sandbox session: scripts share variables; direct calls share the dispatcher."""

    def run(self, code: str) -> RunResultLike: ...
    def call_tool(self, name: str, args: dict[str, Any] | str) -> ToolCallRecordLike: ...
    def call_tools(
        self, calls: Sequence[tuple[str, dict[str, Any] | str]]
    ) -> Sequence[ToolCallRecordLike]: ...


class ToolLike(Protocol):
    """A registered tool."""

    name: str
    description: str
    parameters_schema: dict[str, Any]
    read_only: bool


class RegistryLike(Protocol):
    """The runtime's tool registry."""

    def __iter__(self) -> Iterator[Any]: ...
    def get(self, name: str) -> Any: ...
    def render_stubs(self) -> str: ...


class RuntimeLike(Protocol):
    """What the agent needs of a ``Runtime``."""

    @property
    def registry(self) -> RegistryLike: ...
    def session(self) -> AbstractContextManager[Any]: ...


def names(tools: Iterable[Any]) -> list[str]:
    """The ``name`` of each tool."""
    return [t.name for t in tools]
