"""toolscript as pydantic-ai's code tool: ``ToolscriptToolset`` driven by pydantic-ai's
own ``FunctionModel`` (scripted model turns) and ``TestModel``, on every backend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from framework_helpers import (
    APPROVAL_STOP_SCRIPT,
    GOVERNED_SCRIPTS,
    PERSIST_SCRIPTS,
    TOOLS,
    check_governed,
    check_persist_texts,
    exception_chain,
    governed_runtime,
    stop_on_delete,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.test import TestModel
from toolscript.runtime.integrations.telemetry import instrument

from toolscript import ApprovalRequired, ConfigurationError
from toolscript.integrations.common import script_tool_spec
from toolscript.integrations.pydantic_ai import ToolscriptToolset


@dataclass
class ScriptedModel:
    """A ``FunctionModel`` body: one ``run_script`` call per script, then "done";
    keeps what the model was shown (tool definitions, instructions, tool results)."""

    scripts: list[str]
    infos: list[AgentInfo]

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.infos.append(info)
        turn = sum(isinstance(m, ModelRequest) for m in messages) - 1
        if turn < len(self.scripts):
            return ModelResponse(parts=[ToolCallPart("run_script", {"code": self.scripts[turn]})])
        return ModelResponse(parts=[TextPart("done")])


def returned(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """The tool results the model read, in order."""
    return [p for m in messages if isinstance(m, ModelRequest) for p in m.parts
            if isinstance(p, ToolReturnPart)]


def drive(toolset: ToolscriptToolset, scripts: list[str], **run: Any) -> tuple[list[str], Any]:
    model = ScriptedModel(scripts, [])
    agent = Agent(FunctionModel(model), toolsets=[toolset])
    result = agent.run_sync("work", **run)
    return [str(p.content) for p in returned(result.all_messages())], (model, result)


def test_toolscript_description_stubs_and_result_text(make_runtime):
    runtime = make_runtime(TOOLS)
    texts, (model, result) = drive(ToolscriptToolset(runtime), PERSIST_SCRIPTS)
    check_persist_texts(texts)
    spec = script_tool_spec(runtime)
    (definition,) = model.infos[0].function_tools
    assert definition.name == "run_script"
    assert definition.description == spec.description
    assert "def add(a: int, b: int) -> int:" in definition.description
    assert definition.parameters_json_schema == spec.parameters
    assert spec.instructions in (model.infos[0].instructions or "")
    failed = returned(result.all_messages())[2]
    assert failed.outcome == "failed"  # a failed script is a failed tool result
    assert texts[2] in failed.model_response_str()  # what the model reads
    assert result.output == "done"


def test_each_run_has_its_own_session(make_runtime):
    runtime = make_runtime(TOOLS)
    sessions: list[str] = []
    runtime.events.add("run_start", lambda event: sessions.append(event.session_id))
    toolset = ToolscriptToolset(runtime)
    drive(toolset, ["y = 5", "y"])
    texts, _ = drive(toolset, ["y"])  # a new run: a new session, y is gone
    assert "name 'y' is not defined" in texts[0]
    assert len(sessions) == 3 and sessions[0] == sessions[1] != sessions[2]


def test_a_given_session_is_shared_by_runs(make_runtime):
    runtime = make_runtime(TOOLS)
    with runtime.session() as session:
        toolset = ToolscriptToolset(session)
        drive(toolset, ["y = 5"])
        texts, _ = drive(toolset, ["y + 1"])
        assert texts == ["value:\n6"]
        assert not session.closed  # the toolset never closes a session it was given


def test_approval_limits_audit_telemetry_and_context(make_runtime, tmp_path):
    governed = governed_runtime(make_runtime, tmp_path)
    texts, _ = drive(ToolscriptToolset(governed.runtime), GOVERNED_SCRIPTS)
    check_governed(governed, texts)


def test_context_from_the_runs_deps(make_runtime, tmp_path):
    governed = governed_runtime(make_runtime, tmp_path, user="host-default")
    toolset = ToolscriptToolset(governed.runtime, context=lambda ctx: {"user_id": ctx.deps})
    texts, _ = drive(toolset, ["whoami()"], deps="grace")
    assert texts == ['value:\n"grace"']


def test_an_approval_hook_that_stops_the_run_ends_the_agent_run(make_runtime):
    runtime = make_runtime(TOOLS, approve=stop_on_delete)
    with pytest.raises(Exception) as caught:
        drive(ToolscriptToolset(runtime), [APPROVAL_STOP_SCRIPT])
    assert any(isinstance(e, ApprovalRequired) for e in exception_chain(caught.value))


def test_bad_arguments_get_pydantic_ai_retry(make_runtime):
    runtime = make_runtime(TOOLS)
    calls = iter([{"script": "1"}, {"code": "2 + 2"}])

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        arguments = next(calls, None)
        if arguments is None:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("run_script", arguments)])

    result = Agent(FunctionModel(model), toolsets=[ToolscriptToolset(runtime)]).run_sync("go")
    parts = [p for m in result.all_messages() for p in m.parts]
    retried, answered = [p for p in parts if isinstance(p, ToolReturnPart)]
    assert retried.outcome == "retried"  # pydantic-ai's validation asked the model again
    assert answered.content == "value:\n4"


def test_pydantic_ai_test_model_calls_run_script(make_runtime):
    runtime = make_runtime(TOOLS)
    result = Agent(TestModel(), toolsets=[ToolscriptToolset(runtime)]).run_sync("go")
    (part,) = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert part.tool_name == "run_script"
    assert part.content.startswith(("value:", "ok", "error:"))  # TestModel writes "a" as code


def test_a_given_session_refuses_context(make_runtime):
    runtime = make_runtime(TOOLS)
    with runtime.session() as session, pytest.raises(ConfigurationError):
        ToolscriptToolset(session, context={"user_id": "x"})


def test_script_spans_nest_under_pydantic_ais_own_trace(make_runtime):
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    runtime = make_runtime(TOOLS)
    instrument(runtime, tracer_provider=provider)
    model = ScriptedModel(["add(1, 2)"], [])
    traced = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    agent = Agent(FunctionModel(model), toolsets=[ToolscriptToolset(runtime)],
                  capabilities=[traced])
    agent.run_sync("work")
    spans = exporter.get_finished_spans()
    by_id = {span.context.span_id: span for span in spans}

    def parent(name: str) -> str:
        (span,) = [s for s in spans if s.name == name]
        assert span.parent is not None, name
        return by_id[span.parent.span_id].name

    assert parent("execute_script") == "execute_tool run_script"  # pydantic-ai's tool span
    assert parent("execute_tool add") == "execute_script"
    assert len({span.context.trace_id for span in spans}) == 1  # one trace per agent run


class RecordingToolset(ToolscriptToolset):
    """Keeps the per-run copies pydantic-ai asks for."""

    copies: list[ToolscriptToolset]

    async def for_run(self, ctx: Any) -> Any:
        copy = await super().for_run(ctx)
        self.copies.append(copy)
        return copy


def test_the_per_run_session_closes_with_the_run(make_runtime):
    runtime = make_runtime(TOOLS)
    toolset = RecordingToolset(runtime)
    toolset.copies = []
    opened: list[Any] = []
    runtime.events.add("run_start", lambda event: opened.append(
        toolset.copies[-1].script_session.current))
    drive(toolset, ["1 + 1"])
    (copy,) = toolset.copies
    assert opened[0] is not None and opened[0].closed  # it ran, then the run closed it
    assert copy.script_session.current is None
    assert toolset.script_session is None  # the template never opened one
