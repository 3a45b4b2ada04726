"""The hooks an agent run calls for tracing; :class:`NoTrace` when none is set.

:func:`toolscript.runtime.integrations.telemetry.instrument_agent` gives an agent a
telemetry object whose ``agent_trace(agent, session)`` returns a
:class:`RunTrace` (OpenTelemetry spans); the run drivers call it at each
point below, for sync, async and streamed runs alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from ..providers.base import Message, ModelTurn, Request
from .executor import Group, Step

__all__ = ["NoTrace", "RunTrace"]


class RunTrace(Protocol):
    """What a driver reports about one run."""

    def start(self, prompt: str) -> None:
        """The run begins."""

    def chat(self, request: Request, turn_no: int, messages: list[Message]) -> Any:
        """A context manager around one model request (``messages``: what it sends),
        yielding a callable to record the :class:`ModelTurn` it returned."""

    def group(self, group: Group) -> Any:
        """A context manager around one group of calls, yielding a callable to
        record their :class:`Step` s."""

    def end(self, result: Any, error: BaseException | None = None) -> None:
        """The run ended with ``result`` (an ``AgentResult``) or ``error``."""


class NoTrace:
    """A :class:`RunTrace` that records nothing."""

    def start(self, prompt: str) -> None:
        """Nothing."""

    @contextmanager
    def chat(
        self, request: Request, turn_no: int, messages: list[Message]
    ) -> Iterator[Callable[[ModelTurn], None]]:
        """Nothing."""
        yield _ignore

    @contextmanager
    def group(self, group: Group) -> Iterator[Callable[[list[Step]], None]]:
        """Nothing."""
        yield _ignore

    def end(self, result: Any, error: BaseException | None = None) -> None:
        """Nothing."""


def _ignore(_: Any) -> None:
    return None
