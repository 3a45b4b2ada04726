"""toolscript as the Agents SDK's code tool: ``run_script_tool`` in a real
``Runner`` against the fake OpenAI server on 127.0.0.1 (Responses and Chat
Completions wire formats), on every backend. The SDK's tracing export is off:
nothing leaves the machine."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, RunConfig, Runner
from fakes.model_server import Call, FakeModelServer, Turn, say, script
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
from openai import AsyncOpenAI

from toolscript import ApprovalRequired, ConfigurationError, Session
from toolscript.integrations.common import script_tool_spec
from toolscript.integrations.openai_agents import run_script_tool

NO_TRACING = RunConfig(tracing_disabled=True)
MODELS = {"responses": OpenAIResponsesModel, "chat": OpenAIChatCompletionsModel}


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


def agent_for(server: FakeModelServer, session: Session, wire: str = "responses") -> Agent:
    client = AsyncOpenAI(base_url=server.openai_base_url, api_key="test", max_retries=0)
    model = MODELS[wire](model="fake-model", openai_client=client)
    return Agent(name="analyst", tools=[run_script_tool(session)], model=model)


def drive(server: FakeModelServer, agent: Agent, scripts: list[str]) -> list[str]:
    """Run the agent once: one ``run_script`` call per script, then an answer; the
    tool outputs the SDK sent back to the model, in order."""
    server.script(*[script(code) for code in scripts], say("done"))
    result = Runner.run_sync(agent, "work", run_config=NO_TRACING)
    assert result.final_output == "done"
    return [item.output for item in result.new_items if item.type == "tool_call_output_item"]


@pytest.mark.parametrize("wire", ["responses", "chat"])
def test_description_stubs_result_text_and_variables(make_runtime, server, wire):
    runtime = make_runtime(TOOLS)
    with runtime.session() as session:
        check_persist_texts(drive(server, agent_for(server, session, wire), PERSIST_SCRIPTS))
    spec = script_tool_spec(runtime)
    body = server.bodies()[0]
    (sent,) = body["tools"]
    if wire == "chat":
        sent = sent["function"]
    assert sent["name"] == "run_script"
    assert sent["description"] == spec.description
    assert "def add(a: int, b: int) -> int:" in sent["description"]
    assert sent["parameters"]["properties"] == spec.parameters["properties"]


def test_variables_persist_across_runner_runs(make_runtime, server):
    runtime = make_runtime(TOOLS)
    with runtime.session() as session:
        agent = agent_for(server, session)
        drive(server, agent, ["total = add(20, 22)"])
        assert drive(server, agent, ["total"]) == ["value:\n42"]


def test_async_runner(make_runtime, server):
    runtime = make_runtime(TOOLS)

    async def main() -> list[str]:
        async with runtime.session() as session:
            server.script(script("add(2, 3)"), say("done"))
            result = await Runner.run(agent_for(server, session), "work", run_config=NO_TRACING)
            return [i.output for i in result.new_items if i.type == "tool_call_output_item"]

    assert asyncio.run(main()) == ["value:\n5"]


def test_approval_limits_audit_telemetry_and_context(make_runtime, server, tmp_path):
    governed = governed_runtime(make_runtime, tmp_path)
    with governed.runtime.session() as session:
        texts = drive(server, agent_for(server, session), GOVERNED_SCRIPTS)
    check_governed(governed, texts)


def test_an_approval_hook_that_stops_the_run_ends_the_runner(make_runtime, server):
    runtime = make_runtime(TOOLS, approve=stop_on_delete)
    with runtime.session() as session, pytest.raises(Exception) as caught:
        drive(server, agent_for(server, session), [APPROVAL_STOP_SCRIPT])
    assert any(isinstance(e, ApprovalRequired) for e in exception_chain(caught.value))


def test_arguments_that_are_not_code_get_toolscripts_error_text(make_runtime, server):
    runtime = make_runtime(TOOLS)
    with runtime.session() as session:
        tool = run_script_tool(session)
        server.script(Turn(tool_calls=[Call("run_script", '{"code": 3}')]), say("done"))
        agent = agent_for(server, session)
        agent.tools = [tool]
        result = Runner.run_sync(agent, "work", run_config=NO_TRACING)
    (output,) = [i.output for i in result.new_items if i.type == "tool_call_output_item"]
    assert output.startswith('error: invalid_arguments: run_script takes a JSON object')


def test_takes_a_session_not_a_runtime(make_runtime):
    with pytest.raises(ConfigurationError, match="Session"):
        run_script_tool(make_runtime(TOOLS))


def test_streamed_runner(make_runtime, server):
    runtime = make_runtime(TOOLS)

    async def main() -> list[str]:
        async with runtime.session() as session:
            server.script(script("add(40, 2)"), say("done"))
            streamed = Runner.run_streamed(agent_for(server, session), "work",
                                           run_config=NO_TRACING)
            outputs = [event.item.output async for event in streamed.stream_events()
                       if event.type == "run_item_stream_event"
                       and event.item.type == "tool_call_output_item"]
            assert streamed.final_output == "done"
            return outputs

    assert asyncio.run(main()) == ["value:\n42"]
