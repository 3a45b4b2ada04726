"""Chat Completions wire shapes, programmatic and classic, through the real openai SDK."""

from __future__ import annotations

import json
from typing import Any

from agent_helpers import make_runtime
from fakes.model_server import Call, Turn, say, script

RUN_SCRIPT = "run_script"


def _tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def test_programmatic_session_keeps_variables_across_turns(server, make_agent, backend):
    server.script(
        script(
            "stores = list_stores()\n"
            "rows = [get_daily_revenue(s, '2026-08-24') for s in stores]\n"
            "len(rows)"
        ),
        script("best = max(rows, key=lambda r: r['revenue_yuan'])\nbest['store_id']"),
        say("ST005 had the highest revenue."),
    )
    agent = make_agent("openai", runtime=make_runtime(backend))
    result = agent.run("Which store had the highest revenue on 2026-08-24?")

    assert result.answer == "ST005 had the highest revenue."
    assert result.turns == 3
    assert result.stopped_by == "answer"
    first, second, third = server.bodies()

    # one tool, run_script, whose description carries the rules and the stubs
    assert [t["function"]["name"] for t in first["tools"]] == [RUN_SCRIPT]
    tool = first["tools"][0]
    assert tool["type"] == "function"
    description = tool["function"]["description"]
    assert "def get_daily_revenue(" in description and "def list_stores(" in description
    assert "final bare expression" in description
    assert tool["function"]["parameters"]["required"] == ["code"]
    assert first["tool_choice"] == "auto"
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    # stable across turns, so prompt caches hit
    assert first["tools"] == second["tools"] == third["tools"]
    assert first["messages"][0] == third["messages"][0]

    # the assistant message with its call stays in history, then the tool reply
    roles = [m["role"] for m in third["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assistant = third["messages"][2]
    call = assistant["tool_calls"][0]
    assert call["type"] == "function" and call["function"]["name"] == RUN_SCRIPT
    assert isinstance(call["function"]["arguments"], str)
    assert json.loads(call["function"]["arguments"])["code"].startswith("stores =")
    replies = _tool_messages(third)
    assert replies[0]["tool_call_id"] == call["id"]
    assert replies[0]["content"] == "value:\n5"
    assert replies[1]["tool_call_id"] == third["messages"][4]["tool_calls"][0]["id"]
    assert replies[1]["content"] == 'value:\n"ST005"'  # `rows` came from the first script

    # the raw data never entered the conversation
    assert "revenue_yuan" not in json.dumps(_tool_messages(third))
    assert [r.name for r in result.tool_calls] == ["list_stores"] + ["get_daily_revenue"] * 5
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


def test_usage_is_summed_from_the_api_fields(server, make_agent):
    server.script(script("1 + 1", usage=(100, 7)), say("2", usage=(130, 3)))
    result = make_agent("openai").run("1+1?")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (230, 10)


def test_printed_output_and_value_both_return(server, make_agent):
    server.script(script("print('hello')\n{'a': 1}"), say("done"))
    make_agent("openai").run("go")
    reply = _tool_messages(server.bodies()[1])[0]["content"]
    assert reply == 'printed:\nhello\nvalue:\n{"a":1}'


def test_classic_mode_offers_every_tool_and_pairs_ids_in_order(server, make_agent):
    server.script(
        Turn(
            tool_calls=[
                Call("get_daily_revenue", {"store_id": "ST001", "date": "2026-08-24"}),
                Call("get_daily_revenue", {"store_id": "ST002", "date": "2026-08-24"}),
            ]
        ),
        say("ST002"),
    )
    result = make_agent("openai", mode="classic").run("Which is higher?")
    first, second = server.bodies()
    names = [t["function"]["name"] for t in first["tools"]]
    assert names == ["add_note", "get_daily_revenue", "list_stores", "send_email"]
    revenue = first["tools"][1]["function"]
    assert revenue["parameters"]["required"] == ["store_id", "date"]
    assert "strict" not in revenue
    assert [m["role"] for m in first["messages"]] == ["user"]  # no system text in classic

    assistant = second["messages"][1]
    ids = [c["id"] for c in assistant["tool_calls"]]
    replies = _tool_messages(second)
    assert [r["tool_call_id"] for r in replies] == ids
    assert json.loads(replies[0]["content"])["store_id"] == "ST001"
    assert json.loads(replies[1]["content"])["store_id"] == "ST002"
    assert second["messages"].index(assistant) < second["messages"].index(replies[0])
    assert result.answer == "ST002"
    assert [r.ok for r in result.tool_calls] == [True, True]


def test_tool_choice_and_parallel_switch(server, make_agent):
    server.script(say("ok"))
    make_agent(
        "openai", mode="classic", model_settings={"tool_choice": {"name": "list_stores"},
                                                  "parallel_tool_calls": False}).run("go")
    body = server.bodies()[0]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "list_stores"}}
    assert body["parallel_tool_calls"] is False


def test_strict_mode_schema(server, make_agent):
    server.script(Turn(tool_calls=[Call("add_note", {"text": "x", "priority": None})]), say("k"))
    result = make_agent("openai", mode="classic", model_settings={"strict": True}).run("note x")
    function = server.bodies()[0]["tools"][0]["function"]
    assert function["name"] == "add_note" and function["strict"] is True
    parameters = function["parameters"]
    assert parameters["additionalProperties"] is False
    assert parameters["required"] == ["text", "priority"]
    assert parameters["properties"]["priority"]["type"] == ["string", "null"]
    assert parameters["properties"]["priority"]["enum"] == ["low", "high", None]
    assert "default" not in parameters["properties"]["priority"]
    # null for an optional parameter means "use the default"
    assert result.tool_calls[0].ok
    assert result.tool_calls[0].args == {"text": "x", "priority": "low"}  # the final arguments
