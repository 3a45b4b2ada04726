"""Plugging in a model: Provider objects, the scripted test models, model strings,
agents that build their own runtime, ``toolscript --version``."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sample_tools
from agent_helpers import client_for, make_runtime
from backend_marks import host_backends
from fakes.model_server import say, script
from toolscript.runtime.agent import Agent, Endpoint, ScriptFinished, TextDelta
from toolscript.runtime.providers import (
    ModelRequestError,
    ModelTurn,
    Provider,
    Request,
    ToolCall,
    Usage,
    assistant_message,
)

from toolscript.errors import ConfigurationError
from toolscript.testing import FunctionModel, ModelReply, TestModel, TurnInfo, call, run_script


# ------------------------------------------------------------------ the test model
@host_backends  # not about the backend: docker runs in the wire, async and loop tests
def test_test_model_drives_tools_without_a_runtime(backend):
    model = TestModel(
        run_script("total = sum(get_daily_revenue(s, '2026-08-24')['revenue_yuan'] "
                   "for s in list_stores())\ntotal"),
        run_script("round(total / 5, 1)"),
        "Average 3010.0",
    )
    with Agent(model, tools=sample_tools.TOOLS, runtime_options={"backend": backend}) as agent:
        result = agent.run("average revenue on 2026-08-24?")
        runtime = agent.runtime
    assert result.answer == "Average 3010.0" and result.turns == 3
    assert [s.output for s in result.steps] == ["value:\n15050.0", "value:\n3010.0"]
    assert [r.name for r in result.tool_calls][:2] == ["list_stores", "get_daily_revenue"]
    with pytest.raises(RuntimeError, match="closed"):  # the agent closed the runtime it built
        runtime.session()
    first, second, _ = model.requests
    assert "def get_daily_revenue(" in first.tool("run_script").description
    assert "run_script" in first.system and first.tool_names == ["run_script"]
    assert first.prompt == "average revenue on 2026-08-24?"
    [reply] = second.tool_results
    assert reply.name == "run_script" and reply.content == "value:\n15050.0"
    assert not reply.is_error
    assert model.remaining == 0


def test_classic_mode_errors_and_approval_through_the_test_model():
    model = TestModel(
        [call("get_daily_revenue", store_id="nope", date="d"),
         call("send_email", to="a@b.c", subject="s", body="b")],
        "could not",
    )
    agent = Agent(model, runtime=make_runtime(), mode="classic")
    result = agent.run("go")
    unknown, denied = model.requests[1].tool_results
    assert unknown.is_error and "unknown store nope" in unknown.content
    assert denied.is_error and "denied" in denied.content
    assert sample_tools.SENT == []
    assert [(r.name, r.approved) for r in result.tool_calls] == [
        ("get_daily_revenue", True), ("send_email", False)]


def test_function_model_reacts_to_tool_results():
    def model(info: TurnInfo) -> Any:
        if info.number == 1:
            return ModelReply("Counting.", [run_script("len(list_stores())")])
        count = info.tool_results[0].content.removeprefix("value:\n")
        return f"There are {count} stores."

    fn = FunctionModel(model)
    result = Agent(fn, runtime=make_runtime()).run("how many stores?")
    assert result.answer == "There are 5 stores."
    call_id = result.steps[0].call_id
    assert result.messages[1] == {"role": "assistant", "content": "Counting.", "tool_calls": [
        {"id": call_id, "name": "run_script", "arguments": {"code": "len(list_stores())"}}]}
    assert fn.requests[1].messages == result.messages[:3]


def test_running_out_of_scripted_turns_is_an_endpoint_error():
    agent = Agent(TestModel(run_script("1")), runtime=make_runtime())
    with pytest.raises(ModelRequestError, match="no scripted turn left for request 2"):
        agent.run("go")


def test_streaming_a_test_model_yields_text_pieces_and_script_events():
    model = TestModel(run_script("6 * 7"), "The answer is 42.")
    events = list(Agent(model, runtime=make_runtime()).stream("go"))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == ["The ", "answer ", "is ", "42."]
    [finished] = [e for e in events if isinstance(e, ScriptFinished)]
    assert finished.output == "value:\n42"


# ------------------------------------------------------------------ a custom provider
class EchoProvider(Provider):
    """A minimal provider: lists the stores once, then answers with the reply."""

    name = "echo"

    def complete(self, messages: list[dict[str, Any]], request: Request) -> ModelTurn:
        if messages[-1]["role"] == "tool":
            return ModelTurn(text="stores: " + messages[-1]["content"],
                             history=[assistant_message("stores: ...")])
        calls = [ToolCall("e1", "list_stores", {})]
        return ModelTurn(text="", tool_calls=calls, usage=Usage(3, 1),
                         history=[assistant_message("", calls)])


@host_backends  # not about the backend: docker runs in the wire, async and loop tests
def test_a_provider_object_needs_only_complete(backend):
    agent = Agent(make_runtime(backend), provider=EchoProvider(), mode="classic")
    result = agent.run("list")
    assert result.answer.startswith("stores: ") and "ST005" in result.answer
    assert result.messages[2] == {"role": "tool", "tool_call_id": "e1", "name": "list_stores",
                                  "content": json.dumps(sample_tools.STORES).replace(" ", ""),
                                  "is_error": False}
    assert result.provider == "echo" and agent.request.model == "echo"
    assert result.usage.input_tokens == 3


# ------------------------------------------------------------------ model strings
@pytest.mark.parametrize(("spec", "dialect", "model"), [
    ("openai:gpt-4.1", "chat", "gpt-4.1"),
    ("openai-responses:gpt-5", "responses", "gpt-5"),
    ("anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
    ("gemini:gemini-2.5-flash", "gemini", "gemini-2.5-flash"),
    ("qwen3:8b", "chat", "qwen3:8b"),  # not a provider prefix: the model name as given
])
def test_model_string_with_provider_prefix(server, spec, dialect, model):
    server.script(say("hi"))
    provider = spec.split(":")[0] if dialect != "chat" or spec.startswith("openai") else "openai"
    with Agent(spec, tools=sample_tools.TOOLS, runtime_options={"backend": "inprocess"},
               endpoint=Endpoint(client=client_for(provider, server))) as agent:
        assert agent.run("go").answer == "hi"
    request = server.requests[0]
    assert request.dialect == dialect
    sent = request.body.get("model") or request.path.split("/models/")[1].split(":")[0]
    assert sent == model


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    (("openai:gpt-4.1",), {"provider": "anthropic"}, "names provider 'openai'"),
    (("openai:gpt-4.1",), {"model": "x"}, "given twice"),
    ((), {"model": "m", "provider": "palm"}, "unknown provider 'palm'"),
    ((), {"provider": "openai"}, "Agent needs model="),
])
def test_model_string_errors(args, kwargs, match):
    with pytest.raises(ConfigurationError, match=match):
        Agent(*args, **kwargs)


def test_tools_go_to_the_runtime_when_one_is_given(server):
    with pytest.raises(ConfigurationError, match="register the tools on it"):
        Agent(make_runtime(), "openai", "m", tools=[sample_tools.list_stores])


def test_the_old_positional_form_still_works(server, sleeps):
    server.script(script("1 + 1"), say("2"))
    agent = Agent(make_runtime(), "openai", "fake-model",
                  endpoint=Endpoint(client=client_for("openai", server)))
    assert agent.run("go").answer == "2"
    assert agent.close() is None
    agent.runtime.session().close()  # the caller's runtime stays open


def test_toolscript_version(capsys):
    from toolscript.runtime.cli.main import main

    from toolscript import __version__

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"toolscript {__version__}"
