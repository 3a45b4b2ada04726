"""OpenAI Responses wire shapes, through the real openai SDK."""

from __future__ import annotations

import json

from agent_helpers import make_runtime
from backend_marks import host_backends
from fakes.model_server import Call, Turn, say, script


@host_backends  # the backend path is the chat-wire test's; docker runs there
def test_programmatic_function_call_output_by_call_id(server, make_agent, backend):
    server.script(
        script("total = sum(get_daily_revenue(s, '2026-08-24')['revenue_yuan'] "
               "for s in list_stores())\ntotal"),
        script("round(total / 5, 1)"),
        say("Average 3010.0"),
    )
    result = make_agent("openai-responses", runtime=make_runtime(backend)).run("average?")
    first, _, third = server.bodies()

    tool = first["tools"][0]
    assert set(tool) == {"type", "name", "description", "parameters", "strict"}
    assert tool["type"] == "function" and tool["name"] == "run_script"
    assert tool["strict"] is False  # sent explicitly: the endpoint defaults it to true
    assert "def get_daily_revenue(" in tool["description"]
    assert "instructions" in first and "run_script" in first["instructions"]
    assert first["input"] == [{"role": "user", "content": "average?"}]
    assert first["tools"] == third["tools"] and first["instructions"] == third["instructions"]

    items = third["input"]
    assert [i.get("type", i.get("role")) for i in items] == [
        "user", "function_call", "function_call_output", "function_call",
        "function_call_output",
    ]
    call, output = items[1], items[2]
    assert output == {
        "type": "function_call_output", "call_id": call["call_id"], "output": "value:\n15050.0"
    }
    assert items[4]["call_id"] == items[3]["call_id"]
    assert items[4]["output"] == "value:\n3010.0"  # `total` survived to the second script
    assert call["id"].startswith("fc_") and call["status"] == "completed"  # echoed as received
    assert result.answer == "Average 3010.0"


def test_output_items_echoed_unchanged_including_reasoning(server, make_agent):
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "abc"}
    server.script(
        Turn(text="Let me check.", tool_calls=[Call("list_stores", {})],
             extra_items=[reasoning]),
        say("5 stores"),
    )
    make_agent("openai-responses", mode="classic").run("how many stores?")
    items = server.bodies()[1]["input"]
    assert items[1] == reasoning
    assert items[2]["type"] == "message" and items[2]["role"] == "assistant"
    assert items[3]["type"] == "function_call"
    assert items[4]["type"] == "function_call_output"
    assert json.loads(items[4]["output"]) == ["ST001", "ST002", "ST003", "ST004", "ST005"]


def test_tool_choice_mapping_and_strict(server, make_agent):
    server.script(say("ok"))
    make_agent(
        "openai-responses", mode="classic", model_settings={
            "tool_choice": {"name": "add_note"}, "parallel_tool_calls": False, "strict": True,
            "max_tokens": 321}).run("go")
    body = server.bodies()[0]
    assert body["tool_choice"] == {"type": "function", "name": "add_note"}
    assert body["parallel_tool_calls"] is False
    assert body["max_output_tokens"] == 321
    add_note = body["tools"][0]
    assert add_note["strict"] is True
    assert add_note["parameters"]["required"] == ["text", "priority"]
