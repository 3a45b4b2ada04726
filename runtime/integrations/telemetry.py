"""OpenTelemetry traces and metrics (the ``otel`` extra: ``opentelemetry-sdk``).

Spans follow the GenAI semantic conventions (names in
:mod:`toolscript.runtime.integrations.telemetry_names`):

* ``invoke_agent toolscript`` per agent run: the parent of everything the run
  does, so one run is one trace, with the provider, model, mode, turns, stop
  reason and summed token usage;
* ``chat {gen_ai.request.model}`` per model call, with the provider, the
  response id and model, finish reasons and token usage;
* ``execute_tool {gen_ai.tool.name}`` per call the model made, with the
  model's call id as ``gen_ai.tool.call.id`` (a ``run_script`` call's span is
  the parent of its script run), and per host tool execution, a child of its
  run, with the approval decision and ``error.type`` (the record's own id is
  ``toolscript.tool.record_id``);
* ``execute_script`` per script run (``Session.run``), with the run and
  session ids, the backend, the outcome and the error type.

The top-level ``invoke_agent`` span ends with status OK, or ERROR with the
exception that ended the run. Metrics go to the global meter provider, or
``meter_provider=``: the GenAI conventions' ``gen_ai.client.token.usage`` and
``gen_ai.client.operation.duration``, and host tool call durations and errors
(see :mod:`~toolscript.runtime.integrations.telemetry_metrics`).

Arguments, results, scripts and messages are recorded only when content
capture is on (``capture_content=True`` or the conventions' environment
variable ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``).

Everything goes through the runtime's own hooks, nothing is wrapped or
replaced: :func:`instrument` registers ``run_start``, ``run_end`` and
``tool_call`` event hooks on ``runtime.events`` (see
:mod:`toolscript.runtime.events`; :meth:`Instrumentation.uninstrument`
removes them), and :func:`instrument_agent` gives an Agent the tracing
object its run drivers call (sync, async and streamed runs alike; see
:mod:`toolscript.runtime.agent.tracing`)::

    from toolscript.runtime.integrations.telemetry import instrument, instrument_agent

    instrument(runtime)                  # global tracer and meter providers, no content
    instrument_agent(agent)              # chat spans too (and the agent's runtime)

Host tool spans are written when the call finishes (from its record, with
the call's own start time and duration), so they appear after their
run's children that finished earlier, with correct timestamps. Their parent is
found by session (the run, or the agent run, that session is serving), not by
thread, so calls on worker threads and async runs stay in their trace.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import Token
from typing import TYPE_CHECKING, Any, NamedTuple

from toolscript.errors import ConfigurationError

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, SpanKind, Status, StatusCode
except ImportError as _missing:  # the hint every other missing extra gives
    raise ConfigurationError(
        "OpenTelemetry tracing needs the OpenTelemetry SDK: pip install 'toolscript[otel]'"
    ) from _missing

from toolscript.runtime.events import RunEndEvent, RunStartEvent, ToolCallEvent
from toolscript.runtime.integrations import telemetry_names as N
from toolscript.runtime.integrations.telemetry_metrics import Meters, metric_attributes
from toolscript.runtime.results import RunResult, ToolCallRecord

if TYPE_CHECKING:
    from toolscript.runtime.runtime import Runtime

__all__ = [
    "AgentTrace",
    "ChatSpan",
    "Instrumentation",
    "Telemetry",
    "instrument",
    "instrument_agent",
]



class _OpenRun(NamedTuple):
    """A run between its ``run_start`` and ``run_end`` events."""

    span: Span
    token: Token[Context]
    previous: Context | None


def _capture_default() -> bool:
    return os.environ.get(N.CAPTURE_CONTENT_ENV, "").strip().lower() in ("1", "true", "yes")


class Telemetry:
    """Makes toolscript's spans with one tracer, and its metrics with one meter.

    Args:
        tracer_provider: where spans go (default: the global provider).
        meter_provider: where metrics go (default: the global provider).
        capture_content: record arguments, results, scripts and messages
            (default: the ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` env var).
        max_content_chars: content attributes are cut to this length.
    """

    def __init__(
        self,
        tracer_provider: Any = None,
        *,
        meter_provider: Any = None,
        capture_content: bool | None = None,
        max_content_chars: int = 8192,
    ) -> None:
        from toolscript import __version__

        self.tracer = trace.get_tracer("toolscript", __version__, tracer_provider=tracer_provider)
        self.meters = Meters(meter_provider)
        self.capture_content = _capture_default() if capture_content is None else capture_content
        self.max_content_chars = max_content_chars
        self._lock = threading.Lock()
        self._parents: dict[str, Context] = {}
        self._expected: dict[str, list[tuple[str, str, str]]] = {}
        self._runs: dict[str, _OpenRun] = {}

    # --- where a session's spans go --------------------------------------------------
    def parent_of(self, session_id: str) -> Context | None:
        """The context the spans of ``session_id`` hang under (its current run or
        agent run), or None: the caller's current context."""
        with self._lock:
            return self._parents.get(session_id)

    def set_parent(self, session_id: str, context: Context | None) -> Context | None:
        """Make ``context`` the parent of ``session_id``'s spans; returns the previous."""
        with self._lock:
            previous = self._parents.pop(session_id, None)
            if context is not None:
                self._parents[session_id] = context
            return previous

    def expect_direct_calls(self, session_id: str, calls: list[tuple[str, Any, str]]) -> None:
        """The model's direct calls ``(name, arguments, call id)`` about to run in
        ``session_id``: their tool spans carry the model's call ids."""
        with self._lock:
            self._expected[session_id] = [
                (name, _canonical(arguments), call_id) for name, arguments, call_id in calls
            ]

    def forget_direct_calls(self, session_id: str) -> None:
        """Drop what :meth:`expect_direct_calls` registered and was not claimed."""
        with self._lock:
            self._expected.pop(session_id, None)

    def _claim_call_id(self, session_id: str, record: ToolCallRecord) -> str | None:
        with self._lock:
            expected = self._expected.get(session_id)
            if not expected:
                return None
            arguments = _canonical(record.args)
            for same_arguments in (True, False):  # the exact call first, then by name
                for index, (name, sent, call_id) in enumerate(expected):
                    if name == record.name and (sent == arguments or not same_arguments):
                        del expected[index]
                        return call_id
            return None

    def content(self, value: Any) -> str:
        """``value`` as JSON text for a content attribute (cut to the maximum)."""
        text = (
            value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        )
        if len(text) > self.max_content_chars:
            text = text[: self.max_content_chars] + "...(truncated)"
        return text

    # --- tool executions -------------------------------------------------------------
    def tool_span(
        self,
        record: ToolCallRecord,
        description: str = "",
        *,
        parent: Context | None = None,
        call_id: str | None = None,
    ) -> None:
        """Write the ``execute_tool`` span of one finished call, a child of
        ``parent`` (default: the current span). ``call_id`` is the model's id of a
        direct call; else the record's id is the call id."""
        start_ns = int(record.started_at * 1e9)
        end_ns = start_ns + int(record.duration_s * 1e9)
        attributes: dict[str, Any] = {
            N.OPERATION_NAME: N.OPERATION_EXECUTE_TOOL,
            N.TOOL_NAME: record.name,
            N.TOOL_CALL_ID: call_id or record.id,
            N.TOOL_RECORD_ID: record.id,
            N.TOOL_TYPE: N.TOOL_TYPE_FUNCTION,
            N.TOOL_SOURCE: record.source,
        }
        if description:
            attributes[N.TOOL_DESCRIPTION] = description
        if record.approved is not None:
            attributes[N.TOOL_APPROVED] = record.approved
        if record.decided_by:
            attributes[N.TOOL_DECIDED_BY] = record.decided_by
        if self.capture_content:
            attributes[N.TOOL_CALL_ARGUMENTS] = self.content(record.args)
            if record.ok:
                attributes[N.TOOL_CALL_RESULT] = self.content(record.value)
        span = self.tracer.start_span(
            N.SPAN_EXECUTE_TOOL.format(tool=record.name),
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=start_ns,
        )
        if not record.ok and record.error is not None:
            span.set_attribute(N.ERROR_TYPE, record.error.type)
            span.set_status(Status(StatusCode.ERROR, record.error.message[:500]))
        span.end(end_time=end_ns)

    def record_tool_call(self, event: ToolCallEvent, description: str = "") -> None:
        """Write the ``execute_tool`` span of the call of ``event`` (a ``tool_call``
        hook), under its session's run or agent run; a direct call the model made
        gets the model's call id."""
        record = event.record
        call_id = (self._claim_call_id(event.session_id, record)
                   if record.source == "direct" else None)
        self.tool_span(record, description, parent=self.parent_of(event.session_id),
                       call_id=call_id)
        self.meters.tool_call(record)

    # --- script runs -----------------------------------------------------------------
    def start_run(self, event: RunStartEvent) -> None:
        """Open the ``execute_script`` span of a run (a ``run_start`` hook): the
        current span of the run's thread and the parent of its session's spans
        until :meth:`end_run` (hooks of one run fire on one thread)."""
        attributes: dict[str, Any] = {
            N.SESSION_ID: event.session_id,
            N.BACKEND: event.backend,
            N.RUN_ID: event.run_id,
        }
        if self.capture_content:
            attributes[N.SCRIPT_CODE] = self.content(event.script)
        span = self.tracer.start_span(
            N.SPAN_RUN_SCRIPT, context=self.parent_of(event.session_id),
            kind=SpanKind.INTERNAL, attributes=attributes,
        )
        current = trace.set_span_in_context(span)
        token = otel_context.attach(current)
        previous = self.set_parent(event.session_id, current)
        with self._lock:
            self._runs[event.run_id] = _OpenRun(span, token, previous)

    def end_run(self, event: RunEndEvent) -> None:
        """Close the span :meth:`start_run` opened (a ``run_end`` hook), with the
        run's outcome, or the exception the run raised."""
        with self._lock:
            run = self._runs.pop(event.run_id, None)
        if run is None:  # instrumented while the run was under way
            return
        span = run.span
        try:
            if event.result is not None:
                self.record_run(span, event.result)
            error = event.error
            if error is not None:
                span.record_exception(error)
                span.set_attribute(N.ERROR_TYPE, type(error).__name__)
                span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"[:500]))
        finally:
            self.set_parent(event.session_id, run.previous)
            otel_context.detach(run.token)
            span.end()

    def record_run(self, span: Span, result: RunResult) -> None:
        """Put a run's outcome on its span."""
        span.set_attribute(N.RUN_ID, result.run_id)
        span.set_attribute(N.RUN_OK, result.ok)
        span.set_attribute(N.RUN_TOOL_CALLS, len(result.tool_calls))
        if result.session_restarted:
            span.set_attribute(N.RUN_SESSION_RESTARTED, True)
        if self.capture_content and result.ok:
            span.set_attribute(N.SCRIPT_VALUE, self.content(result.value))
        if result.error is not None:
            span.set_attribute(N.ERROR_TYPE, result.error.type)
            span.set_status(Status(StatusCode.ERROR, result.error.message[:500]))

    # --- model calls -----------------------------------------------------------------
    @contextmanager
    def chat_span(
        self,
        model: str,
        provider: str = "",
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        server_address: str | None = None,
        server_port: int | None = None,
    ) -> Iterator[ChatSpan]:
        """The ``chat {model}`` span of one model call; record the response on the
        yielded :class:`ChatSpan`. An exception marks the span as an error."""
        attributes = chat_attributes(model, provider, max_tokens=max_tokens,
                                     temperature=temperature)
        if server_address:
            attributes[N.SERVER_ADDRESS] = server_address
        if server_port:
            attributes[N.SERVER_PORT] = server_port
        started = time.perf_counter()
        error: BaseException | None = None
        with self.tracer.start_as_current_span(
            N.SPAN_CHAT.format(model=model), kind=SpanKind.CLIENT, attributes=attributes
        ) as span:
            chat = ChatSpan(self, span, metric_attributes(attributes))
            try:
                yield chat
            except BaseException as exc:
                error = exc
                span.set_attribute(N.ERROR_TYPE, type(exc).__name__)
                raise
            finally:
                self.meters.operation(chat.metric_attributes, time.perf_counter() - started,
                                      error)


    # --- agent runs -------------------------------------------------------------------
    def agent_trace(self, agent: Any, session: Any) -> AgentTrace:
        """The hooks of one run of ``agent`` in ``session`` (see :class:`AgentTrace`)."""
        return AgentTrace(self, agent, session)


def chat_attributes(
    model: str, provider: str = "", *, max_tokens: int | None = None,
    temperature: float | None = None,
) -> dict[str, Any]:
    """The request attributes of a ``chat`` span."""
    attributes: dict[str, Any] = {N.OPERATION_NAME: N.OPERATION_CHAT, N.REQUEST_MODEL: model}
    if provider:
        attributes[N.PROVIDER_NAME] = N.PROVIDER_NAMES.get(provider, provider)
    if max_tokens is not None:
        attributes[N.REQUEST_MAX_TOKENS] = max_tokens
    if temperature is not None:
        attributes[N.REQUEST_TEMPERATURE] = temperature
    return attributes


def _canonical(value: Any) -> str:
    """Arguments (a dict or JSON text) as comparable text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
    return json.dumps(value, sort_keys=True, default=str)


class ChatSpan:
    """What a caller records on a ``chat`` span (and the call's token metrics).

    ``metric_attributes`` are those of the call's metrics (operation, provider,
    request model); :meth:`record` adds the response model to them.
    """

    def __init__(self, telemetry: Telemetry, span: Span,
                 metric_attributes: dict[str, Any] | None = None) -> None:
        self.telemetry = telemetry
        self.span = span
        self.metric_attributes = dict(metric_attributes or {})

    def record(
        self,
        *,
        response_id: str | None = None,
        response_model: str | None = None,
        finish_reasons: list[str] | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cache_read_tokens: int | None = None,
    ) -> None:
        """Record the response's facts (any subset); token counts go to the
        ``gen_ai.client.token.usage`` metric too."""
        values = {
            N.RESPONSE_ID: response_id,
            N.RESPONSE_MODEL: response_model,
            N.RESPONSE_FINISH_REASONS: finish_reasons,
            N.USAGE_INPUT_TOKENS: input_tokens,
            N.USAGE_OUTPUT_TOKENS: output_tokens,
            N.USAGE_CACHE_READ_TOKENS: cache_read_tokens,
        }
        for key, value in values.items():
            if value is not None:
                self.span.set_attribute(key, value)
        if response_model is not None:
            self.metric_attributes[N.RESPONSE_MODEL] = response_model
        self.telemetry.meters.tokens(self.metric_attributes, input_tokens, output_tokens)

    def record_messages(self, input_messages: Any = None, output_messages: Any = None) -> None:
        """Record the messages, only when content capture is on."""
        if not self.telemetry.capture_content:
            return
        if input_messages is not None:
            self.span.set_attribute(N.INPUT_MESSAGES, self.telemetry.content(input_messages))
        if output_messages is not None:
            self.span.set_attribute(N.OUTPUT_MESSAGES, self.telemetry.content(output_messages))

    def record_turn(self, turn: Any) -> None:
        """Record a :class:`~toolscript.runtime.providers.base.ModelTurn`."""
        raw = getattr(turn, "raw", None) or {}
        usage = getattr(turn, "usage", None)
        stop = getattr(turn, "stop_reason", None)
        self.record(
            response_id=raw.get("id") if isinstance(raw.get("id"), str) else None,
            response_model=raw.get("model") if isinstance(raw.get("model"), str) else None,
            finish_reasons=[stop] if stop else None,
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
            cache_read_tokens=getattr(usage, "cache_read_tokens", None) or None,
        )
        self.record_messages(output_messages=getattr(turn, "history", None))


# --- wiring ------------------------------------------------------------------------------
class Instrumentation:
    """The event hooks :func:`instrument` registers on a runtime (``run_start``,
    ``run_end``, ``tool_call``); :meth:`uninstrument` removes them."""

    def __init__(self, runtime: Runtime, telemetry: Telemetry) -> None:
        self.runtime = runtime
        self.telemetry = telemetry
        events = runtime.events
        events.add("run_start", self.run_start)
        events.add("run_end", self.run_end)
        events.add("tool_call", self.tool_call)

    def run_start(self, event: RunStartEvent) -> None:
        """The ``run_start`` hook: open the run's span."""
        self.telemetry.start_run(event)

    def run_end(self, event: RunEndEvent) -> None:
        """The ``run_end`` hook: close the run's span."""
        self.telemetry.end_run(event)

    def tool_call(self, event: ToolCallEvent) -> None:
        """The ``tool_call`` hook: write the call's span."""
        tool = self.runtime.registry.get(event.record.name)
        description = tool.description.splitlines()[0] if tool and tool.description else ""
        self.telemetry.record_tool_call(event, description)

    def uninstrument(self) -> None:
        """Stop making spans for this runtime (call it between runs: a run under way
        when the hooks go keeps its span open)."""
        events = self.runtime.events
        for name, hook in (("run_start", self.run_start), ("run_end", self.run_end),
                           ("tool_call", self.tool_call)):
            with suppress(ConfigurationError):  # already removed
                events.remove(name, hook)


def instrument(
    runtime: Runtime, *, tracer_provider: Any = None, meter_provider: Any = None,
    capture_content: bool | None = None,
) -> Instrumentation:
    """Trace ``runtime`` through its event hooks: a run span for every script run
    (its sessions, open ones included), a tool span and tool metrics for every
    call. Idempotent per runtime: while instrumented, returns the same
    :class:`Instrumentation`."""
    for hook in runtime.events.tool_call:
        existing = getattr(hook, "__self__", None)
        if isinstance(existing, Instrumentation) and existing.runtime is runtime:
            return existing
    return Instrumentation(runtime, Telemetry(tracer_provider, meter_provider=meter_provider,
                                              capture_content=capture_content))


def instrument_agent(
    agent: Any, *, tracer_provider: Any = None, meter_provider: Any = None,
    capture_content: bool | None = None,
) -> Telemetry:
    """Trace an :class:`~toolscript.runtime.agent.Agent`: each run is one trace — an
    ``invoke_agent`` span with a ``chat`` span per model call and an
    ``execute_tool`` span per call the model made (its scripts' runs and host
    tool calls below them) — and its runtime's runs and tools outside agent runs."""
    instrumentation = instrument(
        agent.runtime, tracer_provider=tracer_provider, meter_provider=meter_provider,
        capture_content=capture_content,
    )
    agent.telemetry = instrumentation.telemetry
    return instrumentation.telemetry


class AgentTrace:
    """The spans of one agent run (the agent's drivers call these hooks; see
    :class:`toolscript.runtime.agent.tracing.RunTrace`).

    Spans are made with explicit parents and never made current, so a run
    streamed through a generator, or driven by an event loop, keeps its tree.
    """

    def __init__(self, telemetry: Telemetry, agent: Any, session: Any) -> None:
        self.telemetry = telemetry
        self.agent = agent
        self.session = session
        self.session_id = str(getattr(session, "id", id(session)))
        self.span: Span | None = None
        self.context: Context | None = None
        self._previous: Context | None = None
        self._measured: dict[str, Any] = {}
        self._started = 0.0

    def start(self, prompt: str) -> None:
        """Open the ``invoke_agent`` span; the session's spans go under it."""
        agent, telemetry = self.agent, self.telemetry
        provider = getattr(agent.provider, "name", "")
        attributes: dict[str, Any] = {
            N.OPERATION_NAME: N.OPERATION_INVOKE_AGENT,
            N.AGENT_NAME: N.AGENT_NAME_VALUE,
            N.PROVIDER_NAME: N.PROVIDER_NAMES.get(provider, provider),
            N.REQUEST_MODEL: agent.request.model,
            N.AGENT_MODE: agent.mode,
            N.SESSION_ID: self.session_id,
        }
        run_id = getattr(self.session, "agent_run_id", None)
        if run_id:
            attributes[N.AGENT_RUN_ID] = run_id
        if telemetry.capture_content:
            attributes[N.INPUT_MESSAGES] = telemetry.content([{"role": "user", "content": prompt}])
        self.span = telemetry.tracer.start_span(
            N.SPAN_INVOKE_AGENT.format(agent=N.AGENT_NAME_VALUE), kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        self._measured = metric_attributes(attributes)
        self._started = time.perf_counter()
        self.context = trace.set_span_in_context(self.span)
        self._previous = telemetry.set_parent(self.session_id, self.context)

    @contextmanager
    def chat(self, request: Any, turn_no: int, messages: Any = None) -> Iterator[Any]:
        """A ``chat`` span around one model request."""
        telemetry = self.telemetry
        attributes = chat_attributes(
            request.model, getattr(self.agent.provider, "name", ""),
            max_tokens=request.max_tokens, temperature=request.temperature,
        )
        span = telemetry.tracer.start_span(
            N.SPAN_CHAT.format(model=request.model), context=self.context,
            kind=SpanKind.CLIENT, attributes=attributes,
        )
        measured = metric_attributes(attributes)
        chat = ChatSpan(telemetry, span, measured)
        if messages is not None:
            chat.record_messages(input_messages=messages)
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            yield chat.record_turn
        except BaseException as exc:
            error = exc
            span.set_attribute(N.ERROR_TYPE, type(exc).__name__)
            span.set_status(Status(StatusCode.ERROR, str(exc)[:500]))
            raise
        finally:
            telemetry.meters.operation(chat.metric_attributes, time.perf_counter() - started,
                                       error)
            span.end()

    @contextmanager
    def group(self, group: Any) -> Iterator[Callable[[Any], None]]:
        """Spans for one group of the model's calls: a ``run_script`` call's span
        is the parent of its run; direct calls are claimed by their records."""
        telemetry = self.telemetry
        if group.kind in ("write", "read"):
            telemetry.expect_direct_calls(
                self.session_id, [(c.name, c.arguments, c.id) for c in group.calls]
            )
            try:
                yield _ignore
            finally:
                telemetry.forget_direct_calls(self.session_id)
            return
        spans = [self._call_span(call) for call in group.calls]
        previous = None
        if group.kind == "script":
            previous = telemetry.set_parent(self.session_id, trace.set_span_in_context(spans[0]))

        def record(steps: Any) -> None:
            for span, step in zip(spans, steps, strict=False):
                span.set_attribute(N.TOOL_EXECUTED, bool(step.executed))
                if telemetry.capture_content:
                    span.set_attribute(N.TOOL_CALL_RESULT, telemetry.content(step.output))
                if not step.ok:
                    span.set_attribute(N.ERROR_TYPE, _error_type(step.output))
                    span.set_status(Status(StatusCode.ERROR, step.output[:500]))

        try:
            yield record
        except BaseException as exc:
            for span in spans:
                span.set_attribute(N.ERROR_TYPE, type(exc).__name__)
            raise
        finally:
            if group.kind == "script":
                telemetry.set_parent(self.session_id, previous)
            for span in spans:
                span.end()

    def _call_span(self, call: Any) -> Span:
        telemetry = self.telemetry
        attributes: dict[str, Any] = {
            N.OPERATION_NAME: N.OPERATION_EXECUTE_TOOL,
            N.TOOL_NAME: call.name,
            N.TOOL_CALL_ID: call.id,
            N.TOOL_TYPE: N.TOOL_TYPE_FUNCTION,
        }
        if telemetry.capture_content:
            attributes[N.TOOL_CALL_ARGUMENTS] = telemetry.content(call.arguments)
        return telemetry.tracer.start_span(
            N.SPAN_EXECUTE_TOOL.format(tool=call.name), context=self.context,
            kind=SpanKind.INTERNAL, attributes=attributes,
        )

    def end(self, result: Any, error: BaseException | None = None) -> None:
        """Close the ``invoke_agent`` span with the run's totals (or its error)."""
        span = self.span
        if span is None:
            return
        self.telemetry.set_parent(self.session_id, self._previous)
        if result is not None:
            span.set_attribute(N.USAGE_INPUT_TOKENS, result.usage.input_tokens)
            span.set_attribute(N.USAGE_OUTPUT_TOKENS, result.usage.output_tokens)
            span.set_attribute(N.AGENT_TURNS, result.turns)
            span.set_attribute(N.AGENT_STOPPED_BY, result.stopped_by)
            if self.telemetry.capture_content:
                span.set_attribute(N.OUTPUT_MESSAGES, self.telemetry.content(
                    [{"role": "assistant", "content": result.answer}]))
        if error is not None:
            span.set_attribute(N.ERROR_TYPE, type(error).__name__)
            span.set_status(Status(StatusCode.ERROR, str(error)[:500]))
        else:
            span.set_status(Status(StatusCode.OK))
        self.telemetry.meters.operation(self._measured, time.perf_counter() - self._started,
                                        error)
        span.end()


def _error_type(output: str) -> str:
    """``TYPE`` of an ``error: TYPE: message`` reply."""
    parts = output.split(":", 2)
    return parts[1].strip() if len(parts) > 2 and parts[0] == "error" else "error"


def _ignore(_: Any) -> None:
    return None
