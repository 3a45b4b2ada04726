"""An agent's settings as data: ``model_settings=`` (a ModelSettings dict),
``limits=`` (AgentLimits) and ``endpoint=`` (Endpoint), each checked once with an
error that names the group and the field; the defaults are the old flat ones."""

from __future__ import annotations

from typing import Any

import pytest
from agent_helpers import make_runtime
from fakes.model_server import say, script
from toolscript.runtime.agent.testing import TestModel, run_script

from toolscript import Agent, AgentLimits, ConfigurationError, Endpoint, Limits, ModelSettings


def test_the_defaults_of_every_group() -> None:
    agent = Agent(TestModel("hi"), runtime=make_runtime())
    assert agent.limits == AgentLimits(max_turns=20, token_budget=None,
                                       max_result_chars=20_000, max_tool_result_chars=100_000)
    assert agent.endpoint == Endpoint()
    assert agent.model_settings == {
        "temperature": None, "max_tokens": None, "timeout_s": None, "retry": None,
        "tool_choice": "auto", "parallel_tool_calls": None, "strict": False,
        "extra_body": {}, "prompt_cache": True}
    assert agent.request.tool_choice == "auto" and agent.request.temperature is None


@pytest.mark.parametrize(("build", "match"), [
    (lambda: AgentLimits(max_turns=0), r"AgentLimits\.max_turns must be at least 1, not 0"),
    (lambda: AgentLimits(token_budget=0), r"AgentLimits\.token_budget must be at least 1"),
    (lambda: AgentLimits(max_result_chars=-5), r"AgentLimits\.max_result_chars"),
    (lambda: AgentLimits(max_turns="3"), r"AgentLimits\.max_turns must be an int, not str"),
    (lambda: AgentLimits(max_turns=True), r"AgentLimits\.max_turns must be an int, not bool"),
    (lambda: Endpoint(base_url=8080), r"Endpoint\.base_url must be a string, not int"),
])
def test_a_bad_group_field_is_named_where_the_group_is_built(build: Any, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        build()


@pytest.mark.parametrize(("settings", "match"), [
    ({"temprature": 0.2}, r"ModelSettings has no key 'temprature'; its keys: temperature"),
    ({"max_turns": 3}, r"no key 'max_turns'"),
    ({"temperature": "hot"}, r"ModelSettings\['temperature'\] must be int or float, not str"),
    ({"temperature": True}, r"ModelSettings\['temperature'\] must be int or float, not bool"),
    ({"max_tokens": 0}, r"ModelSettings\['max_tokens'\] must be positive, not 0"),
    ({"strict": "yes"}, r"ModelSettings\['strict'\] must be bool"),
    ({"tool_choice": "any"}, r"tool_choice"),
    ({"tool_choice": {"nam": "x"}}, r"ModelSettings\['tool_choice'\]: a named tool_choice"),
])
def test_bad_model_settings_name_the_key(settings: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        Agent(TestModel("hi"), runtime=make_runtime(), model_settings=settings)  # type: ignore[arg-type]


def test_the_runtime_limits_are_not_the_agent_limits() -> None:
    with pytest.raises(ConfigurationError, match=r"limits= takes a AgentLimits, not Limits.*"
                                                 r"runtime_options=\{'limits'"):
        Agent(TestModel("hi"), runtime=make_runtime(), limits=Limits())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="endpoint= takes a Endpoint, not dict"):
        Agent(TestModel("hi"), runtime=make_runtime(),
              endpoint={"base_url": "http://x"})  # type: ignore[arg-type]


def test_the_groups_reach_the_request_and_the_loop(server, make_agent) -> None:
    server.script(script("1 + 1"), script("2 + 2"), say("never"))
    settings: ModelSettings = {"temperature": 0.25, "max_tokens": 77, "tool_choice": "required"}
    result = make_agent("openai", model_settings=settings,
                        limits=AgentLimits(max_turns=2, max_result_chars=40)).run("go")
    assert result.stopped_by == "max_turns" and result.turns == 2
    first = server.bodies()[0]
    assert first["temperature"] == 0.25 and first["max_completion_tokens"] == 77
    assert first["tool_choice"] == "required"


def test_an_endpoint_reaches_the_server(server) -> None:
    server.script(say("hello"))
    agent = Agent(make_runtime(), provider="openai", model="fake-model",
                  endpoint=Endpoint(base_url=server.openai_base_url, api_key="sk-test"))
    assert agent.run("hi").answer == "hello"
    assert server.requests[0].headers.get("Authorization", server.requests[0].headers.get(
        "authorization")) == "Bearer sk-test"
    assert "sk-test" not in repr(agent.endpoint)  # the key stays out of reprs


def test_a_script_result_is_capped_by_the_limits() -> None:
    model = TestModel(run_script("'x' * 500"), "done")
    Agent(model, runtime=make_runtime(), limits=AgentLimits(max_result_chars=60)).run("go")
    sent = model.requests[1].tool_results[0].content
    assert len(sent) < 200 and "x" * 40 in sent
