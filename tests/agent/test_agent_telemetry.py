"""One trace per agent run: ``invoke_agent`` -> ``chat`` / ``execute_tool`` (the model's
call ids) -> ``execute_script`` -> host ``execute_tool`` spans, for sync, async and
streamed runs (OpenTelemetry SDK, in-memory exporter)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_helpers import DIALECTS, make_runtime
from fakes.model_server import Call, Turn, say
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from toolscript.runtime.integrations import telemetry_names as N
from toolscript.runtime.integrations.telemetry import instrument_agent
from toolscript.runtime.providers import ModelEndpointError


@pytest.fixture
def exporter() -> Any:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    exporter.provider = provider  # type: ignore[attr-defined]
    return exporter


def _run(agent: Any, how: str, prompt: str) -> Any:
    if how == "sync":
        return agent.run(prompt)
    if how == "async":
        return asyncio.run(agent.run_async(prompt))
    if how == "stream":
        return list(agent.stream(prompt))[-1].result

    async def collect() -> Any:
        return [event async for event in agent.stream_async(prompt)][-1].result

    return asyncio.run(collect())


def _by_parent(spans: list[Any]) -> dict[int | None, list[Any]]:
    children: dict[int | None, list[Any]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent, []).append(span)
    return children


@pytest.mark.parametrize("how", ["sync", "async", "stream", "stream_async"])
@pytest.mark.parametrize("provider", DIALECTS)
def test_an_agent_run_is_one_trace(server, make_agent, exporter, provider, how):
    server.script(
        Turn(tool_calls=[Call("run_script", {"code": "rows = parallel(get_daily_revenue, "
                                             "[('ST001', 'd'), ('ST002', 'd')])\nlen(rows)"})]),
        Turn(tool_calls=[Call("get_daily_revenue", {"store_id": "ST003", "date": "d"}),
                         Call("get_daily_revenue", {"store_id": "ST004", "date": "d"}),
                         Call("add_note", {"text": "done"})]),
        say("ok"),
    )
    agent = make_agent(provider, mode="mixed", runtime=make_runtime(tools=None))
    instrument_agent(agent, tracer_provider=exporter.provider)
    result = _run(agent, how, "go")
    spans = exporter.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 1  # one trace
    [root] = [s for s in spans if s.parent is None]
    assert root.name == "invoke_agent toolscript"
    assert root.attributes[N.OPERATION_NAME] == "invoke_agent"
    assert root.attributes[N.REQUEST_MODEL] == "fake-model"
    assert root.attributes[N.PROVIDER_NAME] == N.PROVIDER_NAMES[provider]
    assert root.attributes[N.USAGE_INPUT_TOKENS] == result.usage.input_tokens
    assert root.attributes[N.USAGE_OUTPUT_TOKENS] == result.usage.output_tokens
    assert root.attributes[N.AGENT_TURNS] == 3

    children = _by_parent(spans)
    under_root = children[root.context.span_id]
    chats = [s for s in under_root if s.name == "chat fake-model"]
    calls = [s for s in under_root if s.name.startswith("execute_tool ")]
    assert len(chats) == 3 and len(under_root) == 3 + 4
    # every call the model made, with the model's own call id, in call order
    model_ids = [step.call_id for step in result.steps]
    by_id = {s.attributes[N.TOOL_CALL_ID]: s for s in calls}
    assert sorted(by_id) == sorted(model_ids)
    script_span = by_id[model_ids[0]]
    assert script_span.name == "execute_tool run_script"
    [run] = children[script_span.context.span_id]
    assert run.name == "execute_script"
    host = children[run.context.span_id]
    assert [s.name for s in host] == ["execute_tool get_daily_revenue"] * 2
    assert {s.attributes[N.TOOL_RECORD_ID] for s in host} == {
        r.id for r in result.steps[0].records}
    for step in result.steps[1:]:  # direct calls: the host's span carries the model's id
        span = by_id[step.call_id]
        assert span.attributes[N.TOOL_SOURCE] == "direct"
        assert span.attributes[N.TOOL_RECORD_ID] == step.records[0].id
    stores = {by_id[s.call_id].attributes[N.TOOL_RECORD_ID]: s.arguments for s in result.steps[1:3]}
    records = {r.id: r.args for s in result.steps[1:3] for r in s.records}
    for record_id, arguments in stores.items():
        sent = arguments if isinstance(arguments, dict) else __import__("json").loads(arguments)
        assert records[record_id]["store_id"] == sent["store_id"]  # ids matched to their call


def test_two_runs_are_two_traces_and_failures_are_marked(server, make_agent, exporter):
    server.script(Turn(tool_calls=[Call("run_script", {"code": "1/0"})]), say("failed"),
                  Turn(tool_calls=[Call("nope", {})]), say("unknown"))
    agent = make_agent("openai", mode="mixed")
    instrument_agent(agent, tracer_provider=exporter.provider, capture_content=True)
    agent.run("first")
    agent.run("second")
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.parent is None]
    assert len(roots) == 2 and len({s.context.trace_id for s in spans}) == 2
    script = next(s for s in spans if s.name == "execute_tool run_script")
    assert script.status.status_code == StatusCode.ERROR
    assert script.attributes[N.ERROR_TYPE] == "script_error"
    assert script.attributes[N.TOOL_CALL_ARGUMENTS]  # content opted in
    unknown = next(s for s in spans if s.name == "execute_tool nope")
    assert unknown.attributes[N.ERROR_TYPE] == "unknown_tool"
    assert unknown.attributes[N.TOOL_EXECUTED] is False
    assert "first" in roots[0].attributes[N.INPUT_MESSAGES]
    assert "failed" in roots[0].attributes[N.OUTPUT_MESSAGES]


@pytest.mark.parametrize("how", ["sync", "async", "stream", "stream_async"])
def test_an_endpoint_failure_ends_the_trace_marked_as_an_error(server, make_agent, exporter,
                                                               how):
    """A model request that fails after a script ran: the error reaches the
    caller, and every span of the run is ended, the failed chat and the root
    marked with the error."""
    server.script(Turn(tool_calls=[Call("run_script", {"code": "21 * 2"})]))
    # nothing scripted after it: the second request is answered 400
    agent = make_agent("openai", mode="mixed", runtime=make_runtime(tools=None))
    instrument_agent(agent, tracer_provider=exporter.provider)
    with pytest.raises(ModelEndpointError) as raised:
        _run(agent, how, "go")
    spans = exporter.get_finished_spans()
    [root] = [s for s in spans if s.parent is None]
    chats = [s for s in spans if s.name == "chat fake-model"]
    assert [s.status.status_code for s in chats] == [StatusCode.UNSET, StatusCode.ERROR]
    assert root.status.status_code == StatusCode.ERROR
    assert root.attributes[N.ERROR_TYPE] == type(raised.value).__name__
    assert any(s.name == "execute_tool run_script" for s in spans)
