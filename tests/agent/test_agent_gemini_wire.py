"""Gemini API wire shapes (``generateContent``), through the real google-genai SDK."""

from __future__ import annotations

import json

import pytest
from agent_helpers import make_runtime
from backend_marks import host_backends
from fakes.model_server import Call, Turn, say, script
from toolscript.runtime.providers import (
    ModelAuthError,
    ModelRequestError,
    ModelUnavailableError,
    RetryPolicy,
)

from toolscript import AgentLimits


def _contents(body):
    return body["contents"]


@host_backends  # the backend path is the chat-wire test's; docker runs there
def test_programmatic_function_call_and_response_by_id(server, make_agent, backend):
    server.script(
        Turn(text="I'll compute it.", tool_calls=[
            Call("run_script", {"code": "rows = {s: get_daily_revenue(s, '2026-08-24') "
                                        "for s in list_stores()}\nlen(rows)"})
        ]),
        script("sorted(rows, key=lambda s: -rows[s]['revenue_yuan'])[:2]"),
        say("ST005 and ST004."),
    )
    result = make_agent("gemini", runtime=make_runtime(backend)).run("top 2?")
    first, _, third = server.bodies()
    assert server.requests[0].path.endswith("/models/fake-model:generateContent")

    assert "run_script" in first["systemInstruction"]["parts"][0]["text"]
    [declarations] = [t["functionDeclarations"] for t in first["tools"]]
    run_script = declarations[0]
    assert run_script["name"] == "run_script"
    assert "def list_stores(" in run_script["description"]
    schema = run_script.get("parametersJsonSchema", run_script.get("parameters_json_schema"))
    assert schema["required"] == ["code"]
    assert first["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert _contents(first) == [{"role": "user", "parts": [{"text": "top 2?"}]}]
    assert first["tools"] == third["tools"]
    assert first["systemInstruction"] == third["systemInstruction"]

    contents = _contents(third)
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user"]
    model_turn, answer = contents[1], contents[2]
    assert model_turn["parts"][0] == {"text": "I'll compute it."}
    call = model_turn["parts"][1]["functionCall"]
    assert answer == {"role": "user", "parts": [{"functionResponse": {
        "id": call["id"], "name": "run_script", "response": {"output": "value:\n5"},
    }}]}
    second_call = contents[3]["parts"][0]["functionCall"]
    response = contents[4]["parts"][0]["functionResponse"]
    assert response["id"] == second_call["id"]
    assert response["response"] == {"output": 'value:\n["ST005","ST004"]'}  # rows survived
    assert result.answer == "ST005 and ST004."
    assert result.turns == 3


def test_classic_every_response_in_one_user_turn_in_call_order(server, make_agent):
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
    result = make_agent("gemini", mode="classic").run("go")
    second = server.bodies()[1]
    contents = _contents(second)
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    calls = [p["functionCall"] for p in contents[1]["parts"]]
    responses = [p["functionResponse"] for p in contents[2]["parts"]]
    assert [r["id"] for r in responses] == [c["id"] for c in calls]
    assert [r["name"] for r in responses] == [c["name"] for c in calls]
    assert json.loads(responses[0]["response"]["output"])["store_id"] == "ST001"
    # failures are marked as errors: the business error, then the failed write
    assert "unknown store nope" in responses[1]["response"]["error"]
    assert "the note store is full" in responses[2]["response"]["error"]
    # a failed write stops the rest of the turn; every call still gets its response
    for later in responses[3:]:
        assert set(later["response"]) == {"error"}
        assert later["response"]["error"].startswith("error: not_executed:")
    assert [r.name for r in result.tool_calls] == ["get_daily_revenue"] * 2 + ["add_note"]
    declared = [d["name"] for d in second["tools"][0]["functionDeclarations"]]
    assert declared == ["add_note", "get_daily_revenue", "list_stores", "send_email"]


def test_mixed_mode_offers_run_script_and_the_tools(server, make_agent):
    server.script(
        Turn(tool_calls=[Call("list_stores", {}), Call("run_script", {"code": "2 * 21"})]),
        say("42"),
    )
    result = make_agent("gemini", mode="mixed").run("go")
    declared = [d["name"] for d in server.bodies()[0]["tools"][0]["functionDeclarations"]]
    assert declared[0] == "run_script" and "list_stores" in declared
    responses = [p["functionResponse"] for p in _contents(server.bodies()[1])[2]["parts"]]
    assert [r["name"] for r in responses] == ["list_stores", "run_script"]
    assert responses[1]["response"] == {"output": "value:\n42"}
    assert result.answer == "42"


def test_calls_without_ids_are_answered_by_name_in_order(server, make_agent):
    server.script(
        Turn(tool_calls=[Call("list_stores", {}, id="noid-1"),
                         Call("get_daily_revenue", {"store_id": "ST002", "date": "d"},
                              id="noid-2")]),
        say("ok"),
    )
    result = make_agent("gemini", mode="classic").run("go")
    responses = [p["functionResponse"] for p in _contents(server.bodies()[1])[2]["parts"]]
    assert [set(r) for r in responses] == [{"name", "response"}] * 2  # no invented ids
    assert [r["name"] for r in responses] == ["list_stores", "get_daily_revenue"]
    assert [s.call_id for s in result.steps] == ["gemini-call-0", "gemini-call-1"]


def test_thought_signatures_and_thoughts_echoed_unchanged(server, make_agent):
    thought = {"text": "Let me think.", "thought": True}
    signed = {"functionCall": {"id": "c1", "name": "list_stores", "args": {}},
              "thoughtSignature": "c2lnbmF0dXJlLWJ5dGVz"}
    server.script(
        Turn(raw={"candidates": [{"content": {"role": "model", "parts": [thought, signed]},
                                  "finishReason": "STOP"}],
                  "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 4,
                                    "thoughtsTokenCount": 6, "cachedContentTokenCount": 3,
                                    "totalTokenCount": 20}}),
        say("5"),
    )
    result = make_agent("gemini", mode="classic").run("count")
    model_turn = _contents(server.bodies()[1])[1]
    assert model_turn["parts"] == [thought, signed]  # the signature's bytes round-trip
    assert result.steps[0].call_id == "c1"
    assert result.answer == "5"
    first_usage = result.usage
    assert first_usage.cache_read_tokens == 3
    assert first_usage.output_tokens >= 10  # thinking tokens count as output


def test_usage_from_usage_metadata(server, make_agent):
    server.script(script("1", usage=(100, 7)), say("1", usage=(120, 3)))
    result = make_agent("gemini").run("go")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (220, 10)


def test_tool_choice_generation_config_and_forced_final_turn(server, make_agent):
    server.script(say("a"), say("b"), script("1"), say("one"))
    make_agent("gemini", model_settings={"tool_choice": "required", "temperature": 0.3,
                                         "max_tokens": 99}).run("go")
    make_agent("gemini", mode="classic",
               model_settings={"tool_choice": {"name": "list_stores"}}).run("go")
    result = make_agent("gemini", limits=AgentLimits(max_turns=2)).run("go")
    first, second, _, last = server.bodies()
    assert first["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert first["generationConfig"] == {"temperature": 0.3, "maxOutputTokens": 99}
    assert second["toolConfig"] == {"functionCallingConfig": {
        "mode": "ANY", "allowedFunctionNames": ["list_stores"]}}
    # the final turn: the tools stay (cache prefix), the mode says NONE, and the
    # request to answer is the last part of the user turn carrying the responses
    assert last["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}
    assert last["tools"] == server.bodies()[2]["tools"]
    parts = _contents(last)[-1]["parts"]
    assert list(parts[0]) == ["functionResponse"] and "answer now" in parts[1]["text"]
    assert result.stopped_by == "max_turns" and result.answer == "one"


def test_extra_body_is_sent_and_strict_is_not(server, make_agent):
    server.script(say("a"))
    make_agent("gemini", mode="classic", model_settings={
        "strict": True,
        "extra_body": {"safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT",
                                           "threshold": "BLOCK_NONE"}]}}).run("go")
    body = server.bodies()[0]
    assert body["safetySettings"][0]["threshold"] == "BLOCK_NONE"
    assert "strict" not in json.dumps(body["tools"])


def test_endpoint_errors_retried_or_raised(server, make_agent, sleeps):
    server.fail(429, headers={"retry-after": "2"})
    server.fail(503)
    server.script(say("ok"))
    assert make_agent("gemini").run("go").answer == "ok"
    assert sleeps[0] == 2.0 and len(sleeps) == 2
    server.fail(400, message="bad field")
    with pytest.raises(ModelRequestError, match=r"HTTP 400.*bad field"):
        make_agent("gemini").run("go")
    server.fail(403)
    with pytest.raises(ModelAuthError):
        make_agent("gemini").run("go")
    server.fail(500, times=3)
    with pytest.raises(ModelUnavailableError, match="gave up after 2 attempts"):
        make_agent("gemini", model_settings={"retry": RetryPolicy(max_retries=1,
                                                                  sleep=sleeps.append)}).run("go")


def test_gemini_openai_profile_speaks_chat_completions(server, make_agent):
    server.script(say("hi"))
    make_agent("gemini-openai", mode="classic",
               model_settings={"strict": True, "parallel_tool_calls": False}).run("go")
    body = server.bodies()[0]
    assert server.requests[0].dialect == "chat"
    assert all("strict" not in t["function"] for t in body["tools"])
    assert "parallel_tool_calls" not in body


def test_a_conversation_in_another_format_is_a_request_error(server, make_agent):
    chat_history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    with pytest.raises(ModelRequestError, match="another provider"):
        make_agent("gemini").run("go", message_history=chat_history)
    assert server.requests == []
