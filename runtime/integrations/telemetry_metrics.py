"""OpenTelemetry metrics of toolscript (the ``otel`` extra), beside its spans.

* ``gen_ai.client.token.usage`` (histogram, ``{token}``): per model call, once
  with ``gen_ai.token.type=input`` and once with ``output``;
* ``gen_ai.client.operation.duration`` (histogram, ``s``): per model call
  (``gen_ai.operation.name=chat``) and per agent run (``invoke_agent``), with
  ``error.type`` when it failed;
* ``toolscript.tool.call.duration`` (histogram, ``s``) and
  ``toolscript.tool.call.errors`` (counter): per host tool call, by
  ``gen_ai.tool.name``, ``toolscript.tool.source`` and ``error.type``.

Names and bucket boundaries are those of the GenAI semantic conventions (see
:mod:`~toolscript.runtime.integrations.telemetry_names`). Attributes never
carry content (arguments, results, messages): only names, models and error types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import metrics
from toolscript.runtime.integrations import telemetry_names as N
from toolscript.runtime.results import ToolCallRecord

__all__ = ["Meters", "metric_attributes"]


class Meters:
    """The instruments of one :class:`~toolscript.runtime.integrations.telemetry.Telemetry`.

    Args:
        meter_provider: where measurements go (default: the global provider).
    """

    def __init__(self, meter_provider: Any = None) -> None:
        from toolscript import __version__

        meter = metrics.get_meter("toolscript", __version__, meter_provider=meter_provider)
        self.token_usage = meter.create_histogram(
            N.METRIC_TOKEN_USAGE, unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=list(N.TOKEN_USAGE_BUCKETS),
        )
        self.operation_duration = meter.create_histogram(
            N.METRIC_OPERATION_DURATION, unit="s", description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=list(N.DURATION_BUCKETS),
        )
        self.tool_duration = meter.create_histogram(
            N.METRIC_TOOL_DURATION, unit="s", description="Duration of host tool calls.",
            explicit_bucket_boundaries_advisory=list(N.DURATION_BUCKETS),
        )
        self.tool_errors = meter.create_counter(
            N.METRIC_TOOL_ERRORS, unit="{call}", description="Host tool calls that failed.",
        )

    def tokens(self, attributes: Mapping[str, Any], input_tokens: int | None,
               output_tokens: int | None) -> None:
        """Record one model call's token counts (a missing count is not recorded)."""
        for kind, count in ((N.TOKEN_TYPE_INPUT, input_tokens),
                            (N.TOKEN_TYPE_OUTPUT, output_tokens)):
            if count is not None:
                self.token_usage.record(count, {**attributes, N.TOKEN_TYPE: kind})

    def operation(self, attributes: Mapping[str, Any], seconds: float,
                  error: BaseException | None = None) -> None:
        """Record the duration of one model call or agent run."""
        measured = dict(attributes)
        if error is not None:
            measured[N.ERROR_TYPE] = type(error).__name__
        self.operation_duration.record(max(seconds, 0.0), measured)

    def tool_call(self, record: ToolCallRecord) -> None:
        """Record one finished host tool call (and count it if it failed)."""
        attributes: dict[str, Any] = {N.TOOL_NAME: record.name, N.TOOL_SOURCE: record.source}
        if not record.ok:
            attributes[N.ERROR_TYPE] = record.error.type if record.error else "error"
        self.tool_duration.record(max(record.duration_s, 0.0), attributes)
        if not record.ok:
            self.tool_errors.add(1, attributes)


def metric_attributes(span_attributes: Mapping[str, Any]) -> dict[str, Any]:
    """What of a span's request attributes a GenAI metric carries (no content)."""
    keys = (N.OPERATION_NAME, N.PROVIDER_NAME, N.REQUEST_MODEL, N.SERVER_ADDRESS,
            N.SERVER_PORT)
    return {key: span_attributes[key] for key in keys if key in span_attributes}
