"""OpenTelemetry spans, collected with the SDK's in-memory exporter."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from eco_batch_tools import fail_on, record_write, slow_square
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode
from toolscript.runtime.integrations import telemetry_names as N
from toolscript.runtime.integrations.telemetry import instrument, instrument_agent

from toolscript import Decision, Runtime

TOOLS = [slow_square, record_write, fail_on]


@pytest.fixture
def exporter():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    exporter.provider = provider
    return exporter


@pytest.mark.parametrize("backend", ["inprocess", "subprocess"])
def test_run_and_tool_spans_follow_the_conventions(exporter, backend):
    audited = []

    def deny_writes(request):
        return Decision.deny("read-only run") if not request.read_only else Decision.allow()

    with Runtime(
        TOOLS,
        backend=backend,
        approve=deny_writes,
        audit=lambda record, ctx: audited.append(record.name),
    ) as rt:
        instrumentation = instrument(rt, tracer_provider=exporter.provider)
        assert instrument(rt) is instrumentation
        result = rt.run(
            "a = slow_square(3)\n"
            "b = parallel(slow_square, [{'n': 1}, {'n': 2}])\n"
            "try:\n"
            "    record_write('x')\n"
            "except ToolDenied:\n"
            "    pass\n"
            "fail_on(1, 1)\n"
        )
        assert not result.ok
        instrumentation.uninstrument()
        rt.run("slow_square(1)")
    assert audited == ["slow_square"] * 3 + ["record_write", "fail_on", "slow_square"]

    spans = exporter.get_finished_spans()
    runs = [s for s in spans if s.name == "execute_script"]
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    assert len(runs) == 1 and len(tools) == 5  # nothing after uninstrument()
    run = runs[0]
    assert run.attributes[N.RUN_ID] == result.run_id
    assert run.attributes[N.BACKEND] == backend
    assert run.attributes[N.RUN_OK] is False
    assert run.attributes[N.RUN_TOOL_CALLS] == 5
    assert run.attributes[N.ERROR_TYPE] == "tool_error"
    assert run.status.status_code == StatusCode.ERROR
    assert N.SCRIPT_CODE not in run.attributes  # content is opt-in

    by_id = {s.attributes[N.TOOL_CALL_ID]: s for s in tools}
    for record in result.tool_calls:
        span = by_id[record.id]
        assert span.name == f"execute_tool {record.name}"
        assert span.parent.span_id == run.context.span_id
        assert span.context.trace_id == run.context.trace_id
        assert span.attributes[N.OPERATION_NAME] == "execute_tool"
        assert span.attributes[N.TOOL_NAME] == record.name
        assert span.attributes[N.TOOL_TYPE] == "function"
        assert N.TOOL_CALL_ARGUMENTS not in span.attributes
        assert run.start_time <= span.start_time <= span.end_time <= run.end_time
    denied = next(s for s in tools if s.attributes[N.TOOL_NAME] == "record_write")
    assert denied.attributes[N.TOOL_APPROVED] is False
    assert denied.attributes[N.ERROR_TYPE] == "denied"
    failed = next(s for s in tools if s.attributes[N.TOOL_NAME] == "fail_on")
    assert failed.attributes[N.ERROR_TYPE] == "tool_exception"
    assert failed.status.status_code == StatusCode.ERROR
    assert tools[0].attributes[N.TOOL_DESCRIPTION].startswith("n squared")


def test_content_is_recorded_only_when_opted_in(exporter, monkeypatch):
    monkeypatch.setenv(N.CAPTURE_CONTENT_ENV, "true")
    with Runtime(TOOLS, backend="inprocess") as rt:
        instrument(rt, tracer_provider=exporter.provider)
        with rt.session() as session:
            session.run("x = slow_square(4)")
            session.run("x + 1")
            session.call_tool("slow_square", {"n": 5})
    spans = exporter.get_finished_spans()
    tool = next(s for s in spans if s.attributes.get(N.TOOL_CALL_ARGUMENTS)
                == '{"n": 4, "delay_s": 0.0}')  # the final arguments, default included
    assert tool.attributes[N.TOOL_CALL_RESULT] == "16"
    runs = [s for s in spans if s.name == "execute_script"]
    assert [r.attributes[N.SCRIPT_CODE] for r in runs] == ["x = slow_square(4)", "x + 1"]
    assert runs[1].attributes[N.SCRIPT_VALUE] == "17"
    assert len({r.attributes[N.SESSION_ID] for r in runs}) == 1
    direct = next(s for s in spans if s.attributes.get(N.TOOL_SOURCE) == "direct")
    assert direct.parent is None  # a classic-mode call outside any run


def test_agent_model_calls_get_chat_spans(exporter):
    import openai

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from fakes.model_server import FakeModelServer, say, script
    from toolscript.runtime.agent import Agent, Endpoint

    with FakeModelServer() as server, Runtime(TOOLS, backend="inprocess") as rt:
        server.script(script("slow_square(7)"), say("49"))
        agent = Agent(
            rt,
            provider="openai",
            model="fake-model",
            mode="programmatic", endpoint=Endpoint(client=openai.OpenAI(api_key="k",
                                                                        base_url=server.openai_base_url)))
        instrument_agent(agent, tracer_provider=exporter.provider, capture_content=True)
        out = agent.run("What is 7 squared?")
    assert out.answer == "49"
    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name == "chat fake-model"]
    assert len(chats) == 2
    first = chats[0]
    assert first.attributes[N.OPERATION_NAME] == "chat"
    assert first.attributes[N.PROVIDER_NAME] == "openai"
    assert first.attributes[N.REQUEST_MODEL] == "fake-model"
    assert first.attributes[N.USAGE_INPUT_TOKENS] > 0
    assert first.attributes[N.RESPONSE_FINISH_REASONS] == ("tool_calls",)
    assert "What is 7 squared?" in first.attributes[N.INPUT_MESSAGES]
    assert json.loads(first.attributes[N.OUTPUT_MESSAGES])
    run = next(s for s in spans if s.name == "execute_script")
    tool = next(s for s in spans if s.name == "execute_tool slow_square")
    assert tool.parent.span_id == run.context.span_id
    assert first.end_time <= run.start_time <= chats[1].start_time
