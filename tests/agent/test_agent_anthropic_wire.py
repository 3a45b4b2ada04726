"""Anthropic Messages wire shapes, through the real anthropic SDK."""

from __future__ import annotations

import json

from agent_helpers import make_runtime
from backend_marks import host_backends
from fakes.model_server import Call, Turn, say, script

from toolscript import AgentLimits


@host_backends  # the backend path is the chat-wire test's; docker runs there
def test_programmatic_tool_use_and_tool_result(server, make_agent, backend):
    server.script(
        Turn(text="I'll compute it.", tool_calls=[
            Call("run_script", {"code": "rows = {s: get_daily_revenue(s, '2026-08-24') "
                                        "for s in list_stores()}\nlen(rows)"})
        ]),
        script("sorted(rows, key=lambda s: -rows[s]['revenue_yuan'])[:2]"),
        say("ST005 and ST004."),
    )
    result = make_agent("anthropic", runtime=make_runtime(backend)).run("top 2?")
    first, _, third = server.bodies()

    assert first["max_tokens"] == 4096  # always sent
    assert "run_script" in first["system"]
    tool = first["tools"][0]
    assert tool["name"] == "run_script" and "input_schema" in tool
    assert "def list_stores(" in tool["description"]
    assert tool["cache_control"] == {"type": "ephemeral"}
    assert first["tool_choice"] == {"type": "auto"}
    assert first["messages"] == [{"role": "user", "content": "top 2?"}]
    assert first["tools"] == third["tools"] and first["system"] == third["system"]

    assistant, results = third["messages"][1], third["messages"][2]
    assert assistant["role"] == "assistant"
    assert [b["type"] for b in assistant["content"]] == ["text", "tool_use"]
    use = assistant["content"][1]
    assert results == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": "value:\n5"}],
    }
    second_use = third["messages"][3]["content"][0]
    assert third["messages"][4]["content"][0]["tool_use_id"] == second_use["id"]
    assert third["messages"][4]["content"][0]["content"] == 'value:\n["ST005","ST004"]'
    assert result.answer == "ST005 and ST004."


def test_all_results_in_one_user_message_with_errors_and_not_executed(server, make_agent):
    server.script(
        Turn(tool_calls=[
            Call("get_daily_revenue", {"store_id": "ST001", "date": "d"}),
            Call("get_daily_revenue", {"store_id": "nope", "date": "d"}),
            Call("add_note", {"text": "fail"}),
            Call("add_note", {"text": "second"}),
            Call("list_stores", {}),
        ]),
        say("done"),
    )
    result = make_agent("anthropic", mode="classic").run("go")
    second = server.bodies()[1]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    blocks = second["messages"][2]["content"]
    uses = [b for b in second["messages"][1]["content"] if b["type"] == "tool_use"]
    assert [b["type"] for b in blocks] == ["tool_result"] * 5
    assert [b["tool_use_id"] for b in blocks] == [u["id"] for u in uses]
    assert "is_error" not in blocks[0]
    assert blocks[1]["is_error"] is True  # the tool raised: a business error, as data
    assert "unknown store nope" in blocks[1]["content"]
    assert blocks[2]["is_error"] is True and "the note store is full" in blocks[2]["content"]
    # a failed write stops the rest of the turn; every tool_use still gets a result
    for block in blocks[3:]:
        assert block["is_error"] is True
        assert block["content"].startswith("error: not_executed:")
    assert [r.name for r in result.tool_calls] == ["get_daily_revenue"] * 2 + ["add_note"]


def test_final_turn_text_after_results_in_the_same_message(server, make_agent):
    server.script(script("1"), say("one"))
    result = make_agent("anthropic", limits=AgentLimits(max_turns=2)).run("go")
    last = server.bodies()[1]
    content = last["messages"][-1]["content"]
    assert [b["type"] for b in content] == ["tool_result", "text"]  # results first
    assert "answer now" in content[1]["text"]
    assert last["tool_choice"] == {"type": "none"}
    assert last["tools"] == server.bodies()[0]["tools"]  # unchanged: cache prefix kept
    assert result.stopped_by == "max_turns" and result.answer == "one"


def test_tool_choice_mapping_and_max_tokens(server, make_agent):
    server.script(say("a"), say("b"))
    make_agent("anthropic", model_settings={
        "tool_choice": "required", "parallel_tool_calls": False, "max_tokens": 99}).run("go")
    make_agent("anthropic", mode="classic", model_settings={
        "tool_choice": {"name": "list_stores"}, "strict": True, "prompt_cache": False}).run("go")
    first, second = server.bodies()
    assert first["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert first["max_tokens"] == 99
    assert second["tool_choice"] == {"type": "tool", "name": "list_stores"}
    assert all("cache_control" not in t for t in second["tools"])
    add_note = second["tools"][0]
    assert add_note["strict"] is True
    assert add_note["input_schema"]["additionalProperties"] is False


def test_thinking_blocks_echoed_unchanged(server, make_agent):
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig=="}
    server.script(
        Turn(tool_calls=[Call("list_stores", {})], extra_items=[thinking]),
        say("5"),
    )
    make_agent("anthropic", mode="classic").run("count")
    assistant = server.bodies()[1]["messages"][1]
    assert assistant["content"][0] == thinking
    assert json.loads(server.bodies()[1]["messages"][2]["content"][0]["content"])[0] == "ST001"
