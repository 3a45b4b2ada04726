"""Each OpenAI-compatible profile quirk, applied automatically, through the real openai SDK."""

from __future__ import annotations

from dataclasses import dataclass

import openai
import pytest
from agent_helpers import make_runtime
from fakes.model_server import Call, Turn, say, script
from toolscript.runtime.agent import Agent, AgentLimits, Endpoint
from toolscript.runtime.providers import (
    ChatCompletionsProvider,
    Request,
    ToolSpec,
    make_provider,
)
from toolscript.runtime.providers.profiles import get_profile
from toolscript.tools import tool

from toolscript.errors import ConfigurationError


def test_deepseek_round_trips_reasoning_content_on_tool_turns(server, make_agent):
    server.script(
        Turn(tool_calls=[Call("run_script", {"code": "x = 41"})],
             extra={"reasoning_content": "I should store x first."}),
        script("x + 1", extra={"reasoning_content": "now add one"}),
        say("42", extra={"reasoning_content": "done"}),
    )
    result = make_agent("deepseek").run("go")
    third = server.bodies()[2]
    assistants = [m for m in third["messages"] if m["role"] == "assistant"]
    assert [a["reasoning_content"] for a in assistants] == [
        "I should store x first.", "now add one"
    ]
    # a turn without tool calls does not keep its reasoning in history
    assert "reasoning_content" not in result.messages[-1]


def test_deepseek_strict_only_on_its_beta_endpoint(server, make_agent, sleeps):
    server.script(say("a"), say("b"))
    make_agent("deepseek", mode="classic", model_settings={"strict": True}).run("go")
    beta = openai.OpenAI(api_key="k", base_url=server.base_url + "/beta")
    Agent(make_runtime(), provider="deepseek", model="deepseek-chat", mode="classic",
          endpoint=Endpoint(client=beta), model_settings={"strict": True}).run("go")
    plain, on_beta = server.bodies()
    assert all("strict" not in t["function"] for t in plain["tools"])
    assert all(t["function"]["strict"] is True for t in on_beta["tools"])
    assert server.requests[1].path == "/beta/chat/completions"


def test_kimi_tool_names_follow_its_rule_and_map_back():
    provider = make_provider("kimi", client=openai.OpenAI(api_key="k", base_url="http://x/v1"))
    assert isinstance(provider, ChatCompletionsProvider)
    spec = ToolSpec("9lives", "d", {"type": "object", "properties": {}})
    body = provider.build_body([], Request(model="m", tools=[spec], tool_choice={"name": "9lives"}))
    assert body["tools"][0]["function"]["name"] == "t_9lives"
    assert body["tool_choice"] == {"type": "function", "function": {"name": "t_9lives"}}
    turn = provider.parse({"choices": [{"message": {"role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "t_9lives", "arguments": "{}"}}]}}]})
    assert turn.tool_calls[0].name == "9lives"


def test_kimi_never_sends_tool_choice_required(server, make_agent):
    server.script(say("ok"))
    make_agent("kimi", model_settings={"tool_choice": "required"}).run("go")
    assert server.bodies()[0]["tool_choice"] == "auto"


def test_glm_temperature_strictly_inside_zero_one(server, make_agent):
    server.script(say("a"), say("b"), say("c"))
    make_agent("glm", model_settings={"temperature": 0.0}).run("go")
    make_agent("glm", model_settings={"temperature": 1.0}).run("go")
    make_agent("glm", model_settings={"temperature": 0.5}).run("go")
    temps = [b["temperature"] for b in server.bodies()]
    assert temps == [0.01, 0.99, 0.5]


def test_glm_final_turn_without_tool_choice_none(server, make_agent):
    server.script(script("1"), say("done"))
    result = make_agent("glm", model_settings={"tool_choice": "required"},
                        limits=AgentLimits(max_turns=2)).run("go")
    first, last = server.bodies()
    assert first["tool_choice"] == "auto"  # glm accepts only "auto"
    assert "tools" not in last and "tool_choice" not in last  # cannot say "none": no tools
    assert result.stopped_by == "max_turns"


@dataclass
class Item:
    sku: str
    qty: int = 1


@tool
def order(items: list[Item], note: str | None = None) -> str:
    """Order items."""
    return f"ordered {len(items)}"


def test_qwen_inlines_defs(server, make_agent):

    runtime = make_runtime("inprocess", tools=[order])
    assert "$defs" in order.parameters_schema
    server.script(Turn(tool_calls=[Call("order", {"items": [{"sku": "A"}]})]), say("ok"))
    result = make_agent("qwen", mode="classic", runtime=runtime).run("order A")
    parameters = server.bodies()[0]["tools"][0]["function"]["parameters"]
    assert "$defs" not in parameters
    assert parameters["properties"]["items"]["items"]["properties"]["sku"] == {"type": "string"}
    assert result.tool_calls[0].ok


def test_unknown_assistant_fields_are_sent_back_unchanged(server, make_agent):
    vendor = {"trace": [1, 2], "nested": {"k": "v"}}
    server.script(
        script("1", extra={"vendor_field": vendor, "refusal": None, "annotations": []}),
        say("1"),
    )
    make_agent("openai-compatible").run("go")
    assistant = server.bodies()[1]["messages"][2]
    assert assistant["vendor_field"] == vendor
    assert "refusal" not in assistant and "annotations" not in assistant  # response-only


@pytest.mark.parametrize(
    ("provider", "variable"),
    [("deepseek", "DEEPSEEK_API_KEY"), ("kimi", "MOONSHOT_API_KEY"),
     ("glm", "ZHIPUAI_API_KEY"), ("qwen", "DASHSCOPE_API_KEY"),
     ("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")],
)
def test_missing_api_key_names_the_variable(monkeypatch, provider, variable):
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ConfigurationError, match=variable):
        make_provider(provider)


def test_profile_default_endpoints_and_keys(monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    provider = make_provider("deepseek")
    assert str(provider.client.base_url).startswith("https://api.deepseek.com")
    assert provider.client.max_retries == 0
    assert get_profile("qwen").inline_schema_defs
