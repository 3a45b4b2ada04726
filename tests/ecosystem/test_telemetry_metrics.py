"""Host tool call metrics of an instrumented runtime (the SDK's in-memory metric
reader, every backend), and the install hint when the ``otel`` extra is missing."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

from eco_batch_tools import fail_on, slow_square
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from toolscript.runtime.integrations import telemetry_names as N
from toolscript.runtime.integrations.telemetry import instrument

from toolscript import Runtime


def _points(reader: InMemoryMetricReader, name: str) -> list[Any]:
    data = reader.get_metrics_data()
    return [point for resource in (data.resource_metrics if data else ())
            for scope in resource.scope_metrics for metric in scope.metrics
            if metric.name == name for point in metric.data.data_points]


def test_tool_calls_record_durations_and_count_errors(
    make_runtime: Callable[..., Runtime],
) -> None:
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    runtime = make_runtime([slow_square, fail_on])
    instrument(runtime, tracer_provider=TracerProvider(), meter_provider=meters)
    result = runtime.run(
        "parallel(slow_square, [{'n': 1}, {'n': 2}])\n"
        "try:\n"
        "    fail_on(1, 1)\n"
        "except ToolError:\n"
        "    pass\n"
        "fail_on('x', 1)\n"
    )
    assert not result.ok
    with runtime.session() as session:
        session.call_tool("slow_square", {"n": 3})

    durations = _points(reader, N.METRIC_TOOL_DURATION)
    ok = [p for p in durations if N.ERROR_TYPE not in p.attributes]
    assert {(p.attributes[N.TOOL_NAME], p.attributes[N.TOOL_SOURCE], p.count) for p in ok} == {
        ("slow_square", "script", 2), ("slow_square", "direct", 1)}
    errors = {p.attributes[N.ERROR_TYPE]: p for p in _points(reader, N.METRIC_TOOL_ERRORS)}
    assert set(errors) == {"tool_exception", "invalid_arguments"}
    assert all(p.value == 1 and p.attributes[N.TOOL_NAME] == "fail_on" for p in errors.values())
    assert all(p.sum >= 0 for p in durations)
    meters.shutdown()


def test_a_missing_otel_extra_gives_an_install_hint() -> None:
    code = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None  # as if opentelemetry-sdk were not installed\n"
        "from toolscript.errors import ConfigurationError\n"
        "try:\n"
        "    import toolscript.runtime.integrations.telemetry\n"
        "except ConfigurationError as exc:\n"
        "    print(type(exc.__cause__).__name__, exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ModuleNotFoundError ")
    assert "pip install 'toolscript[otel]'" in proc.stdout


def test_a_chat_span_of_ones_own_model_call_records_tokens_and_duration() -> None:
    from toolscript.runtime.integrations.telemetry import Telemetry

    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    telemetry = Telemetry(TracerProvider(), meter_provider=meters)
    with telemetry.chat_span("m", "gemini", server_address="127.0.0.1") as chat:
        chat.record(input_tokens=3, output_tokens=5, response_model="m-001")
    try:
        with telemetry.chat_span("m", "gemini"):
            raise TimeoutError("no answer")
    except TimeoutError:
        pass
    tokens = {p.attributes[N.TOKEN_TYPE]: p for p in _points(reader, N.METRIC_TOKEN_USAGE)}
    assert (tokens["input"].sum, tokens["output"].sum) == (3, 5)
    assert tokens["input"].attributes[N.RESPONSE_MODEL] == "m-001"
    assert tokens["input"].attributes[N.PROVIDER_NAME] == "gcp.gemini"
    assert tokens["input"].attributes[N.SERVER_ADDRESS] == "127.0.0.1"
    durations = _points(reader, N.METRIC_OPERATION_DURATION)
    assert sorted(p.attributes.get(N.ERROR_TYPE, "") for p in durations) == ["", "TimeoutError"]
    meters.shutdown()
