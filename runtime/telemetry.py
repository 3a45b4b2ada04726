"""OpenTelemetry traces (the ``otel`` extra: ``opentelemetry-sdk``).

Spans follow the GenAI semantic conventions (names in
:mod:`toolscript.runtime.telemetry_names`):

* ``execute_script`` per script run (``Session.run``), with the run and
  session ids, the backend, the outcome and the error type;
* ``execute_tool {gen_ai.tool.name}`` per tool execution, a child of its run,
  with ``gen_ai.tool.call.id``, the approval decision and ``error.type``;
* ``chat {gen_ai.request.model}`` per model call, with the provider, the
  response id and model, finish reasons and token usage.

Arguments, results, scripts and messages are recorded only when content
capture is on (``capture_content=True`` or the conventions' environment
variable ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``).

Nothing in the runtime changes: :func:`instrument` wraps a Runtime from
outside (its audit hook and the ``run`` of the sessions it creates), and
:func:`instrument_agent` wraps an Agent's provider::

    from toolscript.runtime.telemetry import instrument, instrument_agent

    instrument(runtime)                  # global tracer provider, no content
    instrument_agent(agent)              # chat spans too (and the agent's runtime)

Tool spans are written when the call finishes (from its audit record, with
the call's own start time and duration), so they appear after their run's
children that finished earlier, with correct timestamps.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from . import telemetry_names as N
from .dispatch import RunContext
from .results import RunResult, ToolCallRecord

if TYPE_CHECKING:
    from .runtime import Runtime
    from .session import Session

__all__ = ["ChatSpan", "Instrumentation", "Telemetry", "instrument", "instrument_agent"]

AuditHook = Callable[[ToolCallRecord, RunContext], None]


def _capture_default() -> bool:
    return os.environ.get(N.CAPTURE_CONTENT_ENV, "").strip().lower() in ("1", "true", "yes")


class Telemetry:
    """Makes toolscript's spans with one tracer.

    Args:
        tracer_provider: where spans go (default: the global provider).
        capture_content: record arguments, results, scripts and messages
            (default: the ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` env var).
        max_content_chars: content attributes are cut to this length.
    """

    def __init__(
        self,
        tracer_provider: Any = None,
        *,
        capture_content: bool | None = None,
        max_content_chars: int = 8192,
    ) -> None:
        from toolscript import __version__

        self.tracer = trace.get_tracer("toolscript", __version__, tracer_provider=tracer_provider)
        self.capture_content = _capture_default() if capture_content is None else capture_content
        self.max_content_chars = max_content_chars

    def content(self, value: Any) -> str:
        """``value`` as JSON text for a content attribute (cut to the maximum)."""
        text = (
            value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        )
        if len(text) > self.max_content_chars:
            text = text[: self.max_content_chars] + "...(truncated)"
        return text

    # --- tool executions -------------------------------------------------------------
    def tool_span(self, record: ToolCallRecord, description: str = "") -> None:
        """Write the ``execute_tool`` span of one finished call (a child of the
        current span, normally its run's)."""
        start_ns = int(record.started_at * 1e9)
        end_ns = start_ns + int(record.duration_s * 1e9)
        attributes: dict[str, Any] = {
            N.OPERATION_NAME: N.OPERATION_EXECUTE_TOOL,
            N.TOOL_NAME: record.name,
            N.TOOL_CALL_ID: record.id,
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
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=start_ns,
        )
        if not record.ok and record.error is not None:
            span.set_attribute(N.ERROR_TYPE, record.error.type)
            span.set_status(Status(StatusCode.ERROR, record.error.message[:500]))
        span.end(end_time=end_ns)

    def audit_hook(
        self, runtime: Runtime | None = None, then: AuditHook | None = None
    ) -> AuditHook:
        """An audit callback (``Runtime(audit=...)``) writing tool spans, then calling ``then``."""

        def describe(name: str) -> str:
            tool = runtime.registry.get(name) if runtime is not None else None
            return tool.description.splitlines()[0] if tool and tool.description else ""

        def audit(record: ToolCallRecord, ctx: RunContext) -> None:
            try:
                self.tool_span(record, describe(record.name))
            finally:
                if then is not None:
                    then(record, ctx)

        return audit

    # --- script runs -----------------------------------------------------------------
    @contextmanager
    def run_span(self, session: Session, code: str) -> Iterator[Span]:
        """The ``execute_script`` span around one run (current while it runs)."""
        attributes: dict[str, Any] = {
            N.SESSION_ID: session.id,
            N.BACKEND: session.runtime.backend_name,
        }
        if self.capture_content:
            attributes[N.SCRIPT_CODE] = self.content(code)
        with self.tracer.start_as_current_span(
            N.SPAN_RUN_SCRIPT, kind=SpanKind.INTERNAL, attributes=attributes
        ) as span:
            yield span

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

    def traced_run(
        self, session: Session, run: Callable[..., RunResult]
    ) -> Callable[..., RunResult]:
        """``run`` (a session's ``run``) wrapped in a run span."""

        def traced(code: str, *args: Any, **kwargs: Any) -> RunResult:
            with self.run_span(session, code) as span:
                result = run(code, *args, **kwargs)
                self.record_run(span, result)
                return result

        return traced

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
        attributes: dict[str, Any] = {N.OPERATION_NAME: N.OPERATION_CHAT, N.REQUEST_MODEL: model}
        if provider:
            attributes[N.PROVIDER_NAME] = N.PROVIDER_NAMES.get(provider, provider)
        if max_tokens is not None:
            attributes[N.REQUEST_MAX_TOKENS] = max_tokens
        if temperature is not None:
            attributes[N.REQUEST_TEMPERATURE] = temperature
        if server_address:
            attributes["server.address"] = server_address
        if server_port:
            attributes["server.port"] = server_port
        with self.tracer.start_as_current_span(
            N.SPAN_CHAT.format(model=model), kind=SpanKind.CLIENT, attributes=attributes
        ) as span:
            try:
                yield ChatSpan(self, span)
            except BaseException as exc:
                span.set_attribute(N.ERROR_TYPE, type(exc).__name__)
                raise


class ChatSpan:
    """What a caller records on a ``chat`` span."""

    def __init__(self, telemetry: Telemetry, span: Span) -> None:
        self.telemetry = telemetry
        self.span = span

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
        """Record the response's facts (any subset)."""
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
    """The wrapping done by :func:`instrument`; :meth:`uninstrument` undoes it."""

    def __init__(self, runtime: Runtime, telemetry: Telemetry) -> None:
        self.runtime = runtime
        self.telemetry = telemetry
        dispatcher = runtime.dispatcher
        self._previous_audit = dispatcher.audit
        dispatcher.audit = telemetry.audit_hook(runtime, then=dispatcher.audit)
        make_session = runtime.session

        def session(*args: Any, **kwargs: Any) -> Session:
            new = make_session(*args, **kwargs)
            new.run = telemetry.traced_run(new, new.run)  # type: ignore[method-assign]
            return new

        runtime.session = session  # type: ignore[method-assign]
        runtime._toolscript_instrumentation = self  # type: ignore[attr-defined]

    def uninstrument(self) -> None:
        """Stop making spans for this runtime (sessions already open keep theirs)."""
        self.runtime.dispatcher.audit = self._previous_audit
        vars(self.runtime).pop("session", None)
        vars(self.runtime).pop("_toolscript_instrumentation", None)


def instrument(
    runtime: Runtime, *, tracer_provider: Any = None, capture_content: bool | None = None
) -> Instrumentation:
    """Trace ``runtime``: run spans for every session it creates from now on, and
    tool spans for every call. Idempotent per runtime."""
    existing = getattr(runtime, "_toolscript_instrumentation", None)
    if isinstance(existing, Instrumentation):
        return existing
    return Instrumentation(runtime, Telemetry(tracer_provider, capture_content=capture_content))


def instrument_agent(
    agent: Any, *, tracer_provider: Any = None, capture_content: bool | None = None
) -> Telemetry:
    """Trace an :class:`~toolscript.runtime.agent.Agent`: a ``chat`` span per model
    call (wrapping its provider's ``complete``), and its runtime's runs and tools."""
    instrumentation = instrument(
        agent.runtime, tracer_provider=tracer_provider, capture_content=capture_content
    )
    telemetry = instrumentation.telemetry
    provider = agent.provider
    complete = provider.complete

    def traced_complete(messages: list[dict[str, Any]], request: Any) -> Any:
        with telemetry.chat_span(
            request.model,
            getattr(provider, "name", ""),
            max_tokens=getattr(request, "max_tokens", None),
            temperature=getattr(request, "temperature", None),
        ) as chat:
            chat.record_messages(input_messages=messages)
            turn = complete(messages, request)
            chat.record_turn(turn)
            return turn

    provider.complete = traced_complete
    return telemetry
