"""Conversations (``message_history``, ``new_messages``) and structured answers
(``output_type``), through the real SDKs against the fake server."""

from __future__ import annotations

import json
from typing import Any, TypedDict

import pydantic
import pytest
from agent_helpers import DIALECTS, make_runtime
from fakes.model_server import Call, Turn, say, script
from toolscript.runtime import prompts
from toolscript.runtime.agent import Agent, AgentLimits

from toolscript.errors import AgentOutputError, ConfigurationError
from toolscript.testing import TestModel, final_answer, run_script


def _user_texts(body: dict[str, Any]) -> list[str]:
    """The text of every user message of a request, whatever the dialect."""
    texts = []
    for item in _items(body):
        if item.get("role") != "user":
            continue
        content = item.get("content", item.get("parts"))
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.extend(str(p.get("text")) for p in content or [] if p.get("text"))
    return texts


def _items(body: dict[str, Any]) -> list[Any]:
    """The conversation of a request, the system message aside."""
    items = body.get("messages") or body.get("input") or body.get("contents") or []
    return [i for i in items if i.get("role") != "system"]


# ------------------------------------------------------------------ conversations
@pytest.mark.parametrize("provider", DIALECTS)
def test_history_continues_in_a_new_session_and_says_what_is_gone(server, make_agent, provider):
    server.script(script("rows = [s for s in list_stores()]\nlen(rows)"), say("5 stores"))
    agent = make_agent(provider)
    first = agent.run("how many stores?")
    stored = json.loads(json.dumps(first.new_messages()))  # persisted as JSON

    server.script(script("len(list_stores()) * 2"), say("10"))
    second = agent.run("and twice that?", message_history=stored)
    body = server.bodies()[2]
    assert _items(body)[: len(stored)] == stored  # the model sees the earlier turns
    notice = _user_texts(body)[-1]
    assert "no longer exist" in notice and "rows" in notice
    assert notice.endswith("and twice that?")
    assert second.history_length == len(stored)
    assert second.all_messages()[: len(stored)] == stored
    assert second.new_messages() == second.messages[len(stored):]
    assert second.provider == agent.provider.name and second.answer == "10"


def test_history_in_the_same_session_says_what_it_still_holds(server, make_agent):
    runtime = make_runtime()
    agent = make_agent("anthropic", runtime=runtime)
    server.script(script("import math\ntotal = 41\ndef bump(x):\n    inner = 1\n    return x + 1"),
                  say("stored"), script("bump(total)"), say("42"))
    with runtime.session() as session:
        first = agent.run("store", session=session)
        second = agent.run("use", session=session, message_history=first.all_messages())
        probe_left = session.run("toolscript_probe_names")
    notice = _user_texts(server.bodies()[2])[-1]
    assert "still holds these variables from earlier scripts: math, total, bump" in notice
    assert "inner" not in notice and "no longer" not in notice
    assert second.steps[0].output == "value:\n42"
    assert probe_left.error.type == "script_error"  # the probe cleaned up after itself


def test_history_without_scripts_adds_no_notice(server, make_agent):
    server.script(say("hello"), say("again"))
    agent = make_agent("gemini")
    first = agent.run("hi")
    agent.run("and again", message_history=first.all_messages())
    assert _user_texts(server.bodies()[1]) == ["hi", "and again"]


def test_calls_of_a_forced_final_turn_are_answered_so_history_stays_valid(server, make_agent):
    server.script(script("x = 1"), Turn(text="still want", tool_calls=[
        Call("run_script", {"code": "2"}), Call("list_stores", {})]))
    result = make_agent("openai", mode="mixed", limits=AgentLimits(max_turns=2)).run("go")
    last_assistant = max(i for i, m in enumerate(result.messages) if m["role"] == "assistant")
    asked = [c["id"] for c in result.messages[last_assistant]["tool_calls"]]
    answered = [m["tool_call_id"] for m in result.messages[last_assistant + 1:]]
    assert answered == asked
    assert all("not_executed" in m["content"] for m in result.messages[last_assistant + 1:])
    server.script(say("fine"))
    make_agent("openai", mode="mixed").run("next", message_history=result.all_messages())


# ------------------------------------------------------------------ structured answers
class StoreReport(pydantic.BaseModel):
    """The best store of a day."""

    store_id: str = pydantic.Field(pattern=r"^ST\d{3}$")
    revenue_yuan: float = pydantic.Field(ge=0)


@pytest.mark.parametrize("provider", DIALECTS)
def test_output_type_fixes_an_invalid_answer_within_the_turns(server, make_agent, provider):
    server.script(
        script("best = max(list_stores(), key=lambda s: get_daily_revenue(s, 'd')"
               "['revenue_yuan'])\nbest"),
        Turn(tool_calls=[Call("final_answer", {"store_id": "5", "revenue_yuan": -1})]),
        Turn(tool_calls=[Call("final_answer", {"store_id": "ST005", "revenue_yuan": 5001})]),
    )
    result = make_agent(provider, output_type=StoreReport).run("best store?")
    assert result.output == StoreReport(store_id="ST005", revenue_yuan=5001)
    assert json.loads(result.answer) == {"store_id": "ST005", "revenue_yuan": 5001}
    first, _, third = server.bodies()
    assert prompts.OUTPUT_SYSTEM in json.dumps(first)
    assert "final_answer" in json.dumps(first["tools"])
    rejected = [s for s in result.steps if s.name == "final_answer" and not s.ok]
    assert len(rejected) == 1 and rejected[0].output.startswith("error: invalid_output:")
    assert "store_id" in rejected[0].output and "revenue_yuan" in rejected[0].output
    assert "invalid_output" in json.dumps(third)  # the model saw what to fix
    assert result.steps[-1].output == "ok: final answer accepted"


class Totals(TypedDict):
    stores: int
    total_yuan: float


def test_output_type_accepts_a_json_text_answer(server, make_agent):
    server.script(say('```json\n{"stores": 5, "total_yuan": 15050.0}\n```'))
    result = make_agent("openai", output_type=Totals).run("totals?")
    assert result.output == {"stores": 5, "total_yuan": 15050.0}


def test_plain_text_is_refused_then_a_json_schema_answer_is_accepted(server, make_agent):
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    server.script(say("It is five."), Turn(tool_calls=[Call("final_answer", {"n": 5})]))
    result = make_agent("anthropic", output_type=schema).run("how many?")
    assert result.output == {"n": 5} and result.turns == 2
    assert _user_texts(server.bodies()[1])[-1] == prompts.OUTPUT_REQUEST


def test_a_non_object_output_type_is_wrapped(server, make_agent):
    server.script(Turn(tool_calls=[Call("final_answer", {"result": ["ST001", "ST002"]})]))
    result = make_agent("gemini", output_type=list[str]).run("two stores")
    assert result.output == ["ST001", "ST002"]


def test_no_valid_answer_within_the_turns_raises_with_the_run(server, make_agent):
    server.script(script("1"), Turn(tool_calls=[Call("final_answer", {"store_id": "x"})]))
    with pytest.raises(AgentOutputError, match="within 2 turns") as info:
        make_agent("openai", output_type=StoreReport, limits=AgentLimits(max_turns=2)).run("go")
    last = server.bodies()[1]
    assert last["tool_choice"] == {"type": "function", "function": {"name": "final_answer"}}
    assert prompts.FINAL_OUTPUT_REQUEST in json.dumps(last)
    assert info.value.result.turns == 2 and info.value.result.output is None


def test_output_type_with_the_test_model():
    model = TestModel(run_script("len(list_stores())"), final_answer(stores=5, total_yuan=1.5))
    result = Agent(model, runtime=make_runtime(), output_type=Totals).run("go")
    assert result.output == {"stores": 5, "total_yuan": 1.5}
    assert model.requests[0].tool_names == ["run_script", "final_answer"]
    assert model.requests[0].tool("final_answer").parameters["required"] == ["stores", "total_yuan"]


def test_history_in_the_neutral_format_of_a_provider_object():
    model = TestModel(run_script("seen = list_stores()\nlen(seen)"), "5",
                      run_script("len(seen)"), "still 5")
    first = Agent(model, runtime=make_runtime()).run("count")
    again = Agent(model, runtime=make_runtime()).run("again", message_history=first.new_messages())
    assert "no longer exist" in model.requests[2].prompt and "seen" in model.requests[2].prompt
    assert model.requests[2].messages[: len(first.messages)] == first.messages
    assert again.steps[0].output.startswith("error: script_error")  # the session is new


def test_a_tool_named_final_answer_clashes_with_output_type():
    from toolscript.tools import tool

    @tool
    def final_answer(text: str) -> str:
        """A tool with the reserved name."""
        return text

    with pytest.raises(ConfigurationError, match="final_answer"):
        Agent(TestModel(), runtime=make_runtime(tools=[final_answer]), output_type=Totals)
