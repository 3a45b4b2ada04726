"""The hooks an agent run calls for tracing; :class:`NoTrace` when none is set.

:func:`toolscript.runtime.integrations.telemetry.instrument_agent` gives an agent a
telemetry object whose ``agent_trace(agent, session)`` returns a
:class:`RunTrace` (OpenTelemetry spans); the run drivers call it at each
point below, for sync, async and streamed runs alike. :class:`ModelCallEvents`
wraps that trace to fire the runtime's ``model_call`` event hooks
(:mod:`toolscript.runtime.events`) for each model request.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from ..events import EventHooks, ModelCallEvent, emit
from ..providers.base import Message, ModelTurn, Request
from .executor import Group, Step

__all__ = ["ModelCallEvents", "NoTrace", "RunTrace"]


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


class ModelCallEvents:
    """A :class:`RunTrace` that fires ``model_call`` events around ``inner``'s.

    One :class:`~toolscript.runtime.events.ModelCallEvent` per model request,
    after it returned (with its usage and finish reason) or failed (with the
    error), when hooks are registered for it at that moment; everything else
    is ``inner``'s.
    """

    def __init__(self, inner: RunTrace, events: EventHooks, provider: str,
                 session: Any) -> None:
        self.inner = inner
        self.events = events
        self.provider = provider
        self.session = session

    def start(self, prompt: str) -> None:
        """``inner``'s."""
        self.inner.start(prompt)

    @contextmanager
    def chat(
        self, request: Request, turn_no: int, messages: list[Message]
    ) -> Iterator[Callable[[ModelTurn], None]]:
        """``inner``'s, then the ``model_call`` event."""
        turns: list[ModelTurn] = []
        with self.inner.chat(request, turn_no, messages) as record:

            def record_turn(turn: ModelTurn) -> None:
                turns.append(turn)
                record(turn)

            started = time.perf_counter()
            try:
                yield record_turn
            except BaseException as exc:
                self._fire(request, turn_no, started, None, exc)
                raise
            self._fire(request, turn_no, started, turns[-1] if turns else None, None)

    def _fire(self, request: Request, turn_no: int, started: float, turn: ModelTurn | None,
              error: BaseException | None) -> None:
        hooks = self.events.model_call
        if not hooks:
            return
        session = self.session
        session_id = getattr(session, "id", None)
        emit(hooks, ModelCallEvent(
            provider=self.provider, model=request.model,
            session_id=session_id if isinstance(session_id, str) else None,
            agent_run_id=getattr(session, "agent_run_id", None), turn=turn_no,
            duration_s=time.perf_counter() - started,
            usage=turn.usage if turn is not None else None,
            finish_reason=turn.stop_reason if turn is not None else None, error=error,
        ))

    def group(self, group: Group) -> Any:
        """``inner``'s."""
        return self.inner.group(group)

    def end(self, result: Any, error: BaseException | None = None) -> None:
        """``inner``'s."""
        self.inner.end(result, error)


def _ignore(_: Any) -> None:
    return None
