"""OpenTelemetry metrics of agent runs (GenAI semantic conventions) and the status
of the top-level span, with the SDK's in-memory metric reader and span exporter."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from agent_helpers import DIALECTS, make_runtime
from fakes.model_server import Call, Turn, say
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from toolscript.runtime.integrations import telemetry_names as N
from toolscript.runtime.integrations.telemetry import instrument_agent
from toolscript.runtime.providers import ModelEndpointError


class Telemetry:
    """A tracer provider and a meter provider, both in memory."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def points(self, name: str) -> list[Any]:
        """Every data point of the metric ``name`` (empty if it has none)."""
        data = self.reader.get_metrics_data()
        found: list[Any] = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found.extend(metric.data.data_points)
        return found

    def instrument(self, agent: Any) -> None:
        instrument_agent(agent, tracer_provider=self.tracer_provider,
                         meter_provider=self.meter_provider)


@pytest.fixture
def otel() -> Iterator[Telemetry]:
    telemetry = Telemetry()
    yield telemetry
    telemetry.meter_provider.shutdown()


def _by(points: list[Any], key: str) -> dict[Any, Any]:
    return {point.attributes.get(key): point for point in points}


@pytest.mark.parametrize("provider", DIALECTS)
def test_an_agent_run_records_the_genai_metrics_and_ends_ok(server, make_agent, otel,
                                                            provider):
    server.script(
        Turn(tool_calls=[Call("run_script", {"code": "get_daily_revenue('ST001', 'd')"})]),
        Turn(tool_calls=[Call("get_daily_revenue", {"store_id": "ST404", "date": "d"})]),
        say("done"),
    )
    agent = make_agent(provider, mode="mixed", runtime=make_runtime(tools=None))
    otel.instrument(agent)
    result = agent.run("go")

    [root] = [s for s in otel.spans.get_finished_spans() if s.parent is None]
    assert root.status.status_code == StatusCode.OK

    tokens = otel.points(N.METRIC_TOKEN_USAGE)
    by_type = _by(tokens, N.TOKEN_TYPE)
    assert set(by_type) == {N.TOKEN_TYPE_INPUT, N.TOKEN_TYPE_OUTPUT}
    assert by_type[N.TOKEN_TYPE_INPUT].sum == result.usage.input_tokens > 0
    assert by_type[N.TOKEN_TYPE_OUTPUT].sum == result.usage.output_tokens > 0
    assert by_type[N.TOKEN_TYPE_INPUT].count == 3  # one per model call
    for point in tokens:
        assert point.attributes[N.OPERATION_NAME] == "chat"
        assert point.attributes[N.PROVIDER_NAME] == N.PROVIDER_NAMES[provider]
        assert point.attributes[N.REQUEST_MODEL] == "fake-model"

    durations = _by(otel.points(N.METRIC_OPERATION_DURATION), N.OPERATION_NAME)
    assert durations["chat"].count == 3
    assert durations["invoke_agent"].count == 1
    assert N.ERROR_TYPE not in durations["invoke_agent"].attributes
    assert durations["invoke_agent"].sum >= durations["chat"].sum > 0

    tool_points = otel.points(N.METRIC_TOOL_DURATION)
    calls = sum(p.count for p in tool_points
                if p.attributes[N.TOOL_NAME] == "get_daily_revenue")
    assert calls == 2  # the script's call and the model's direct call
    sources = {p.attributes[N.TOOL_SOURCE] for p in tool_points}
    assert sources == {"script", "direct"}


def test_failed_tool_calls_are_counted_by_error_type(server, make_agent, otel):
    server.script(
        Turn(tool_calls=[Call("run_script", {"code": "send_email('a@b', 's', 'b')"})]),
        Turn(tool_calls=[Call("add_note", {"text": "x", "priority": "urgent"})]),
        say("done"),
    )
    agent = make_agent("openai", mode="mixed", runtime=make_runtime(tools=None))
    otel.instrument(agent)
    agent.run("go")
    errors = otel.points(N.METRIC_TOOL_ERRORS)
    by_tool = {p.attributes[N.TOOL_NAME]: p for p in errors}
    assert by_tool["send_email"].attributes[N.ERROR_TYPE] == "denied"
    assert by_tool["send_email"].value == 1
    assert by_tool["add_note"].attributes[N.ERROR_TYPE] == "invalid_arguments"
    failed = [p for p in otel.points(N.METRIC_TOOL_DURATION) if N.ERROR_TYPE in p.attributes]
    assert {p.attributes[N.TOOL_NAME] for p in failed} == {"send_email", "add_note"}


@pytest.mark.parametrize("how", ["sync", "async"])
def test_an_endpoint_failure_is_recorded_with_its_error_type(server, make_agent, otel, how):
    server.script(Turn(tool_calls=[Call("run_script", {"code": "21 * 2"})]))
    agent = make_agent("openai", mode="mixed", runtime=make_runtime(tools=None))
    otel.instrument(agent)
    with pytest.raises(ModelEndpointError) as raised:
        if how == "sync":
            agent.run("go")
        else:
            asyncio.run(agent.run_async("go"))
    [root] = [s for s in otel.spans.get_finished_spans() if s.parent is None]
    assert root.status.status_code == StatusCode.ERROR
    failed = [p for p in otel.points(N.METRIC_OPERATION_DURATION)
              if N.ERROR_TYPE in p.attributes]
    kinds = {p.attributes[N.OPERATION_NAME] for p in failed}
    assert kinds == {"chat", "invoke_agent"}
    assert {p.attributes[N.ERROR_TYPE] for p in failed} == {type(raised.value).__name__}
    tokens = otel.points(N.METRIC_TOKEN_USAGE)
    assert sum(p.count for p in tokens if p.attributes[N.TOKEN_TYPE] == "input") == 1
