"""Event hooks: what a Runtime tells its observers about runs, tool calls and model calls.

In the spirit of httpx's ``event_hooks``: give a Runtime callables per event
name, or add and remove them later::

    runtime = Runtime(tools, event_hooks={"tool_call": [count_calls], "run_end": [log_run]})
    runtime.events.add("run_start", show_script)
    runtime.events.remove("tool_call", count_calls)

Each hook is called with one frozen event object:

* ``run_start`` (:class:`RunStartEvent`): a script run begins
  (:meth:`Session.run <toolscript.runtime.session.Session.run>`, before its
  sandbox is started or taken from the pool);
* ``run_end`` (:class:`RunEndEvent`): that run ended, with its ``RunResult``,
  or with the exception :meth:`Session.run` raises; exactly one per
  ``run_start``, on the same thread (the thread that called ``run``);
* ``tool_call`` (:class:`ToolCallEvent`): one attempted tool call finished —
  denied, refused and failed calls included, from scripts and direct
  (classic-mode) calls alike — on the thread that served it (a run's serving
  thread, or a worker thread of a ``parallel()`` batch: several may fire at
  once);
* ``model_call`` (:class:`ModelCallEvent`): one model request of an
  :class:`~toolscript.runtime.agent.Agent` run returned or failed.

Hooks run inline, on the thread that fires the event: keep them short (hand
slow work to a queue). **A hook that raises an** ``Exception`` **is logged
(logger** ``toolscript`` **) and ignored: the run goes on.** ``KeyboardInterrupt``
and ``SystemExit`` propagate. With no hook registered for an event, firing it
costs one tuple check.

The ``audit`` callback of a Runtime is not such a hook: it is the record of
every call and must succeed. It receives ``(record, event)`` — the
:class:`~toolscript.runtime.results.ToolCallRecord` and this call's
:class:`ToolCallEvent` — before the ``tool_call`` hooks, and an exception it
raises is not swallowed: it leaves the dispatcher, so the run fails (the
hooks of that call still fire).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from toolscript.errors import ConfigurationError

from .results import RunResult, ToolCallRecord

if TYPE_CHECKING:
    from .providers.base import Usage

__all__ = [
    "EVENT_NAMES",
    "AuditCallback",
    "Event",
    "EventHook",
    "EventHooks",
    "EventName",
    "ModelCallEvent",
    "RunEndEvent",
    "RunStartEvent",
    "ToolCallEvent",
    "emit",
]

_log = logging.getLogger("toolscript")

EventName = Literal["run_start", "run_end", "tool_call", "model_call"]
EVENT_NAMES: tuple[EventName, ...] = ("run_start", "run_end", "tool_call", "model_call")
"""The events a hook can be registered for, in the order a run meets them."""


@dataclass(frozen=True, slots=True)
class RunStartEvent:
    """A script run begins.

    Attributes:
        session_id: the session running it.
        run_id: the run's id (``RunResult.run_id``).
        agent_run_id: the ``Agent.run()`` driving the session, or None.
        backend: the runtime's backend name (``"inprocess"``, ``"subprocess"``, ...).
        script: the script's text.
    """

    name: ClassVar[EventName] = "run_start"
    session_id: str
    run_id: str
    agent_run_id: str | None
    backend: str
    script: str


@dataclass(frozen=True, slots=True)
class RunEndEvent:
    """A script run ended: the fields of its :class:`RunStartEvent`, and how it ended.

    Attributes:
        result: the run's result, or None when :meth:`Session.run` raised.
        error: what :meth:`Session.run` raised (a stopped run, an approval hook's
            ``ApprovalRequired``, a backend that could not start), else None.
    """

    name: ClassVar[EventName] = "run_end"
    session_id: str
    run_id: str
    agent_run_id: str | None
    backend: str
    script: str
    result: RunResult | None
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """One attempted tool call, finished (what the ``audit`` callback and the
    ``tool_call`` hooks receive).

    Attributes:
        record: the call's :class:`~toolscript.runtime.results.ToolCallRecord`
            (its arguments whole, before the run's retention budget may shorten
            them in ``RunResult.tool_calls``).
        session_id: the session that made the call.
        run_id: the run it belongs to (``"<session id>-direct"`` for direct calls).
        agent_run_id: the ``Agent.run()`` driving the session, or None.
    """

    name: ClassVar[EventName] = "tool_call"
    record: ToolCallRecord
    session_id: str
    run_id: str
    agent_run_id: str | None


@dataclass(frozen=True, slots=True)
class ModelCallEvent:
    """One model request of an agent run, after it returned or failed.

    Attributes:
        provider: the agent's dialect (``"openai"``, ``"anthropic"``, ...).
        model: the model requested.
        session_id: the session the agent run drives, or None.
        agent_run_id: the agent run's id, or None.
        turn: the request's number in the run (1 for the first).
        duration_s: how long the request took (a streamed one: until its last part).
        usage: the response's token counts (None when the request failed).
        finish_reason: the response's stop/finish reason, or None.
        error: what the request raised (after the provider's retries), else None.
    """

    name: ClassVar[EventName] = "model_call"
    provider: str
    model: str
    session_id: str | None
    agent_run_id: str | None
    turn: int
    duration_s: float
    usage: Usage | None = None
    finish_reason: str | None = None
    error: BaseException | None = None


Event = RunStartEvent | RunEndEvent | ToolCallEvent | ModelCallEvent
EventHook = Callable[[Any], object]
"""A hook: called with the event object of the event it is registered for."""
AuditCallback = Callable[[ToolCallRecord, ToolCallEvent], object]
"""The ``audit`` callback of a Runtime: ``(record, event)`` for every attempted call."""


def emit(hooks: tuple[EventHook, ...], event: Event) -> None:
    """Call each hook with ``event``; a hook's ``Exception`` is logged, not raised.

    Call sites check the tuple first (``if hooks: emit(hooks, make_event())``),
    so an event nobody listens to is never built.
    """
    for hook in hooks:
        try:
            hook(event)
        except Exception:
            _log.exception("toolscript: a %s event hook (%r) failed; the run goes on",
                           event.name, hook)


class EventHooks:
    """The hooks registered per event name (``Runtime.events``).

    The attributes ``run_start``, ``run_end``, ``tool_call`` and ``model_call``
    are the registered hooks as tuples, in registration order: read them, and
    change them with :meth:`add` and :meth:`remove` (thread-safe; a change
    applies to the next event fired).

    Args:
        hooks: ``{event name: [hook, ...]}`` (a single callable is accepted too).

    Raises:
        ConfigurationError: an unknown event name, or a hook that is not callable.
    """

    __slots__ = ("_lock", "model_call", "run_end", "run_start", "tool_call")

    def __init__(self, hooks: Mapping[str, Iterable[EventHook] | EventHook] | None = None
                 ) -> None:
        self._lock = threading.Lock()
        self.run_start: tuple[EventHook, ...] = ()
        self.run_end: tuple[EventHook, ...] = ()
        self.tool_call: tuple[EventHook, ...] = ()
        self.model_call: tuple[EventHook, ...] = ()
        if hooks is None:
            return
        if not isinstance(hooks, Mapping):
            raise ConfigurationError(
                "event_hooks must be a mapping of event name to a list of hooks, e.g. "
                "{'tool_call': [hook]}")
        for name, value in hooks.items():
            for hook in [value] if callable(value) else list(value):
                self.add(name, hook)

    def get(self, event: str) -> tuple[EventHook, ...]:
        """The hooks registered for ``event``.

        Raises:
            ConfigurationError: ``event`` is not one of :data:`EVENT_NAMES`.
        """
        hooks: tuple[EventHook, ...] = getattr(self, _checked_name(event))
        return hooks

    def add(self, event: str, hook: EventHook) -> None:
        """Call ``hook`` for every ``event`` from now on (after the hooks already there).

        Raises:
            ConfigurationError: an unknown event name, or ``hook`` is not callable.
        """
        name = _checked_name(event)
        if not callable(hook):
            raise ConfigurationError(
                f"a hook for {name!r} must be callable, got {type(hook).__name__}")
        with self._lock:
            setattr(self, name, (*getattr(self, name), hook))

    def remove(self, event: str, hook: EventHook) -> None:
        """Stop calling ``hook`` for ``event`` (its last registration, if added twice).

        Raises:
            ConfigurationError: an unknown event name, or ``hook`` is not registered
                for ``event``.
        """
        name = _checked_name(event)
        with self._lock:
            hooks: tuple[EventHook, ...] = getattr(self, name)
            for index in range(len(hooks) - 1, -1, -1):
                if hooks[index] == hook:
                    setattr(self, name, hooks[:index] + hooks[index + 1:])
                    return
        raise ConfigurationError(f"{hook!r} is not registered for {name!r}")

    def __repr__(self) -> str:
        counts = ", ".join(f"{name}={len(getattr(self, name))}" for name in EVENT_NAMES)
        return f"EventHooks({counts})"


def _checked_name(event: Any) -> EventName:
    if event not in EVENT_NAMES:
        raise ConfigurationError(
            f"unknown event {event!r}; the events are {', '.join(EVENT_NAMES)}")
    name: EventName = event
    return name
