"""The loop and the executor: errors as data, caps, modes, sessions (real Runtime)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sample_tools
from agent_helpers import make_runtime
from fakes.model_server import Call, Turn, say, script
from toolscript.runtime.agent import Agent, AgentLimits, Endpoint
from toolscript.runtime.limits import Limits
from toolscript.tools import Tool

from toolscript.errors import ApprovalRequired, ConfigurationError


def _replies(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


# ------------------------------------------------------------------ script errors
def test_syntax_error_goes_back_with_its_line_and_the_model_fixes_it(server, make_agent):
    server.script(script("x = 1\ny = (2 +\n"), script("x = 1\ny = 2\nx + y"), say("3"))
    result = make_agent("openai").run("add")
    error_reply, fixed_reply = _replies(server.bodies()[2])
    assert error_reply.startswith("error: syntax_error:") and "line" in error_reply
    assert fixed_reply == "value:\n3"
    assert result.answer == "3"
    assert [s.ok for s in result.steps] == [False, True]
    tool_message = server.bodies()[1]["messages"][-1]
    assert tool_message["role"] == "tool"


def test_denied_call_and_tool_exception_reach_the_model(server, make_agent):
    server.script(
        script("try:\n    send_email('a@b.c', 's', 'b')\nexcept Exception as e:\n"
               "    print(type(e).__name__, e)\nget_daily_revenue('nope', 'd')"),
        say("could not"),
    )
    result = make_agent("openai").run("go")
    reply = _replies(server.bodies()[1])[0]
    assert reply.startswith("error: ")
    assert "unknown store nope" in reply
    assert "denied" in reply  # printed before the failure, returned too
    assert sample_tools.SENT == []
    assert [(r.name, r.approved) for r in result.tool_calls] == [
        ("send_email", False), ("get_daily_revenue", True)
    ]


def test_approval_hook_stopping_the_run_raises_to_the_programmer(server, make_agent):
    def hook(request: Any) -> bool:
        raise ApprovalRequired(f"{request.tool} needs a human")

    runtime = make_runtime("inprocess", tools=sample_tools.TOOLS, approve=hook)
    server.script(script("add_note('x')"), say("never"))
    with pytest.raises(ApprovalRequired, match="needs a human"):
        make_agent("openai", runtime=runtime).run("go")
    assert len(server.requests) == 1


def test_approval_hook_stopping_a_direct_call_raises(server, make_agent):
    def hook(request: Any) -> bool:
        raise ApprovalRequired("stop")

    runtime = make_runtime("inprocess", tools=sample_tools.TOOLS, approve=hook)
    server.script(Turn(tool_calls=[Call("add_note", {"text": "x"})]), say("never"))
    with pytest.raises(ApprovalRequired):
        make_agent("anthropic", mode="classic", runtime=runtime).run("go")


def test_a_limit_breach_is_an_error_result(server, make_agent):
    runtime = make_runtime(limits=Limits(max_tool_calls=3))
    server.script(script("[list_stores() for _ in range(5)]"), say("limit"))
    make_agent("openai", runtime=runtime).run("go")
    assert _replies(server.bodies()[1])[0].startswith("error: tool_call_limit:")


def test_failed_script_stops_later_scripts_of_the_same_turn(server, make_agent):
    server.script(
        Turn(tool_calls=[Call("run_script", {"code": "a = 1/0"}),
                         Call("run_script", {"code": "a + 1"})]),
        say("fail"),
    )
    result = make_agent("openai").run("go")
    first, second = _replies(server.bodies()[1])
    assert first.startswith("error: ZeroDivisionError") or "division" in first
    assert second.startswith("error: not_executed:")
    assert [s.executed for s in result.steps] == [True, False]


def test_run_script_without_code_is_an_argument_error(server, make_agent):
    server.script(Turn(tool_calls=[Call("run_script", '{"source": "1"}')]), say("k"))
    make_agent("openai").run("go")
    assert _replies(server.bodies()[1])[0].startswith("error: invalid_arguments:")


def test_script_output_is_capped_with_a_notice(server, make_agent):
    server.script(script("list(range(1000))"), say("k"))
    make_agent("openai", limits=AgentLimits(max_result_chars=50)).run("go")
    reply = _replies(server.bodies()[1])[0]
    assert reply.startswith("value:\n[0,1,2")
    assert "[truncated: showing the first 50 of" in reply


# ------------------------------------------------------------------ classic errors
def test_classic_bad_arguments_unknown_tools_and_invalid_json(server, make_agent):
    server.script(
        Turn(tool_calls=[
            Call("get_daily_revenue", '{"store_id": "ST001", "date": '),
            Call("get_daily_revenue", {"store_id": 7, "date": "d"}),
            Call("get_revenue", {}),
            Call("run_script", {"code": "1"}),
        ]),
        say("k"),
    )
    make_agent("openai", mode="classic").run("go")
    invalid_json, schema, unknown, no_script = _replies(server.bodies()[1])
    assert invalid_json.startswith("error: invalid_json:")
    assert schema.startswith("error: invalid_arguments:") and "store_id" in schema
    assert unknown.startswith("error: unknown_tool:") and "get_daily_revenue" in unknown
    assert no_script.startswith("error: unknown_tool:")  # classic mode has no run_script


def test_read_only_calls_batch_and_writes_keep_order(server, make_agent):
    server.script(
        Turn(tool_calls=[
            Call("add_note", {"text": "first"}),
            Call("get_daily_revenue", {"store_id": "ST001", "date": "d"}),
            Call("list_stores", {}),
            Call("add_note", {"text": "second", "priority": "high"}),
        ]),
        say("k"),
    )
    result = make_agent("openai", mode="classic").run("go")
    assert sample_tools.NOTES == ["low:first", "high:second"]
    replies = _replies(server.bodies()[1])
    assert replies[0] == json.dumps("noted #1")
    assert json.loads(replies[2])[0] == "ST001"
    assert replies[3] == json.dumps("noted #2")
    assert [r.source for r in result.tool_calls] == ["direct"] * 4


# ------------------------------------------------------------------ caps
def test_max_turns_forces_a_final_answer_without_tools(server, make_agent):
    server.script(script("a = 1"), script("b = 2"), say("partial answer"))
    result = make_agent("openai", limits=AgentLimits(max_turns=3)).run("go")
    bodies = server.bodies()
    assert len(bodies) == 3
    assert [b["tool_choice"] for b in bodies] == ["auto", "auto", "none"]
    last_messages = bodies[2]["messages"]
    assert last_messages[-2]["role"] == "tool"  # results first, then the request to answer
    assert last_messages[-1]["role"] == "user" and "answer now" in last_messages[-1]["content"]
    assert result.stopped_by == "max_turns" and result.answer == "partial answer"
    assert result.turns == 3


def test_token_budget_forces_a_final_answer(server, make_agent):
    server.script(script("1", usage=(5000, 50)), say("budget answer"))
    result = make_agent("openai-responses", limits=AgentLimits(token_budget=1000)).run("go")
    last = server.bodies()[1]
    assert last["tool_choice"] == "none"
    assert last["input"][-1]["role"] == "user"
    assert last["input"][-2]["type"] == "function_call_output"
    assert result.stopped_by == "token_budget" and result.answer == "budget answer"


def test_tool_calls_in_the_final_turn_are_not_run(server, make_agent):
    server.script(script("x = 1"), Turn(text="still want", tool_calls=[
        Call("run_script", {"code": "add_note('late')"})]))
    result = make_agent("openai", limits=AgentLimits(max_turns=2)).run("go")
    assert result.answer == "still want" and sample_tools.NOTES == []


def test_max_turns_one_is_a_single_tool_free_turn(server, make_agent):
    server.script(say("direct"))
    result = make_agent("anthropic", limits=AgentLimits(max_turns=1)).run("go")
    assert server.bodies()[0]["tool_choice"] == {"type": "none"}
    assert result.answer == "direct" and result.turns == 1


# ------------------------------------------------------------------ sessions, modes
def test_explicit_session_persists_across_runs(server, make_agent):
    runtime = make_runtime()
    agent = make_agent("openai", runtime=runtime)
    server.script(script("memo = 40"), say("stored"), script("memo + 2"), say("42"))
    with runtime.session() as session:
        agent.run("store", session=session)
        agent.run("use", session=session)
    assert _replies(server.bodies()[3])[0] == "value:\n42"


def _with_callers(tool: Tool, callers: tuple[str, ...]) -> Tool:
    copy = Tool.from_function(tool.func, name=tool.name, read_only=tool.read_only)
    copy.allowed_callers = callers  # type: ignore[attr-defined]
    return copy


def test_allowed_callers_decide_what_each_mode_offers(server, make_agent):
    tools = [
        _with_callers(sample_tools.list_stores, ("direct",)),
        _with_callers(sample_tools.get_daily_revenue, ("script",)),
        sample_tools.add_note,
    ]
    runtime = make_runtime("inprocess", tools=tools)
    server.script(say("a"), say("b"), say("c"))
    for mode in ("programmatic", "classic", "mixed"):
        make_agent("openai", mode=mode, runtime=runtime).run("go")
    programmatic, classic, mixed = (
        [t["function"]["name"] for t in body["tools"]] for body in server.bodies()
    )
    assert programmatic == ["run_script", "list_stores"]
    assert classic == ["add_note", "list_stores"]
    assert mixed == ["run_script", "add_note", "list_stores"]
    stubs = server.bodies()[0]["tools"][0]["function"]["description"]
    assert "def get_daily_revenue(" in stubs and "def add_note(" in stubs
    assert "def list_stores(" not in stubs


def test_script_only_tool_called_directly_gets_a_hint(server, make_agent):
    tools = [_with_callers(sample_tools.get_daily_revenue, ("script",))]
    runtime = make_runtime("inprocess", tools=tools)
    server.script(Turn(tool_calls=[Call("get_daily_revenue", {"store_id": "ST001",
                                                              "date": "d"})]), say("k"))
    make_agent("openai", mode="mixed", runtime=runtime).run("go")
    reply = _replies(server.bodies()[1])[0]
    assert "only be called from inside a run_script script" in reply


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"mode": "hybrid"}, "mode must be"), ({"provider": "palm"}, "unknown provider"),
     ({"model_settings": {"tool_choice": "any"}}, "tool_choice"),
     ({"model_settings": {"tool_choice": {"name": "list_stores"}}},
      "not offered in programmatic"),
     ({"model": ""}, "model=")],
)
def test_configuration_errors(server, make_agent, kwargs, match):
    provider = kwargs.pop("provider", "openai")
    with pytest.raises(ConfigurationError, match=match):
        make_agent(provider, **kwargs)


def test_run_script_name_clash_is_refused():
    def run_script(code: str) -> str:
        """Clash."""
        return code

    with pytest.raises(ConfigurationError, match="run_script"):
        Agent(make_runtime("inprocess", tools=[run_script]), provider="openai",
              model="m", endpoint=Endpoint(client=__import__("openai").OpenAI(api_key="k")))


def test_scripts_use_parallel_and_catch_tool_errors(server, make_agent, backend):
    server.script(
        script(
            "rows = parallel(get_daily_revenue, [(s, '2026-08-24') for s in list_stores()])\n"
            "try:\n    get_daily_revenue('nope', 'x')\nexcept ToolError as e:\n    kind = e.type\n"
            "[len(rows), kind]"
        ),
        say("ok"),
    )
    result = make_agent("openai", runtime=make_runtime(backend)).run("go")
    assert _replies(server.bodies()[1])[0] == 'value:\n[5,"tool_exception"]'
    assert len(result.tool_calls) == 7
