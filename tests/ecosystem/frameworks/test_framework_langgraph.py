"""toolscript as LangGraph's code tool: ``RunScriptTool`` in a real LangGraph graph
(a ``StateGraph`` whose model node is langchain-core's fake chat model and whose
tool node is LangGraph's prebuilt ``ToolNode``), run with ``invoke`` and
``ainvoke`` on every backend. The script's tool calls run on the host through
the runtime; its variables persist from one graph step to the next; a failed
script is an error ``ToolMessage`` and the graph goes on; the runtime's approval,
limits, audit and telemetry hold inside the graph."""

from __future__ import annotations

import asyncio
import json
import os
import warnings
from collections.abc import Sequence
from typing import Any

import pytest
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
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field

from toolscript import ApprovalRequired, RunResult, tool
from toolscript.integrations.langchain import RunScriptTool

MODES = ["invoke", "ainvoke"]


class ScriptedChatModel(GenericFakeChatModel):
    """langchain-core's fake chat model, plus the ``bind_tools`` a graph's model
    node calls: it keeps the tool schemas the model would be sent and answers
    from its scripted messages as before."""

    bound: list[dict[str, Any]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """Record ``tools`` as a provider would receive them; answer unchanged."""
        self.bound = [convert_to_openai_tool(t) for t in tools]
        return self


def turns(steps: list[list[str]]) -> list[AIMessage]:
    """One model turn per step (each a list of scripts: its ``run_script`` calls),
    then the final answer ``done``."""
    replies = [
        AIMessage("", tool_calls=[{"name": "run_script", "args": {"code": code},
                                   "id": f"call-{i}-{j}"} for j, code in enumerate(step)])
        for i, step in enumerate(steps)
    ]
    return [*replies, AIMessage("done")]


def build_graph(script_tool: RunScriptTool, model: ScriptedChatModel) -> Any:
    """model -> tools -> model ... until the model answers without a tool call."""
    bound = model.bind_tools([script_tool])

    def call_model(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke(state["messages"])]}

    async def acall_model(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    agent: Runnable[Any, Any] = RunnableLambda(call_model, afunc=acall_model)
    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([script_tool]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


def run_graph(script_tool: RunScriptTool, steps: list[list[str]], mode: str) -> list[BaseMessage]:
    """Run the graph once (``invoke`` or ``ainvoke``) over the scripted turns; the
    conversation it ends with."""
    model = ScriptedChatModel(messages=iter(turns(steps)))
    graph = build_graph(script_tool, model)
    start = {"messages": [HumanMessage("work")]}
    state = graph.invoke(start) if mode == "invoke" else asyncio.run(graph.ainvoke(start))
    messages: list[BaseMessage] = state["messages"]
    assert messages[-1].content == "done"  # the graph went on to the model's answer
    assert model.bound[0]["function"]["name"] == "run_script"
    return messages


def tool_messages(messages: list[BaseMessage]) -> list[ToolMessage]:
    """The ``ToolMessage`` replies in the order the graph added them."""
    return [m for m in messages if isinstance(m, ToolMessage)]


@pytest.mark.parametrize("mode", MODES)
def test_graph_keeps_variables_and_goes_on_after_a_failed_script(make_runtime, mode):
    seen: list[tuple[str, int]] = []

    @tool
    def note(text: str) -> int:
        """Keep a note on the host; the count of notes so far."""
        seen.append((text, os.getpid()))
        return len(seen)

    runtime = make_runtime([*TOOLS, note])
    with runtime.session() as session:
        script_tool = RunScriptTool.over(session)
        steps = [[PERSIST_SCRIPTS[0]], [PERSIST_SCRIPTS[1]], [PERSIST_SCRIPTS[2]],
                 ['note(f"x is {x}")']]
        replies = tool_messages(run_graph(script_tool, steps, mode))
        assert session.run("x").value == 3  # the graph's variables, in the caller's session
    check_persist_texts([r.content for r in replies[:3]])
    assert [r.status for r in replies] == ["success", "success", "error", "success"]
    assert [r.tool_call_id for r in replies] == ["call-0-0", "call-1-0", "call-2-0", "call-3-0"]
    first = replies[0].artifact
    assert isinstance(first, RunResult) and first.value == 3
    assert [(c.name, c.args) for c in first.tool_calls] == [("add", {"a": 1, "b": 2})]
    failed = replies[2].artifact  # a failed script's ToolMessage carries its RunResult too
    assert isinstance(failed, RunResult) and not failed.ok and failed.error is not None
    # The script's call ran here, on the host (not in the sandbox), after the failure.
    assert replies[3].content == "value:\n1"
    assert seen == [("x is 3", os.getpid())]


@pytest.mark.parametrize("mode", MODES)
def test_parallel_tool_calls_of_one_turn_share_the_session(make_runtime, mode):
    runtime = make_runtime(TOOLS)
    script_tool = RunScriptTool.over(runtime)  # opens its own session
    try:
        steps = [["a = add(1, 1)\na", "b = add(2, 2)\nb"], ["a + b"]]
        replies = tool_messages(run_graph(script_tool, steps, mode))
    finally:
        script_tool.close()
    assert [r.content for r in replies] == ["value:\n2", "value:\n4", "value:\n6"]
    assert [r.tool_call_id for r in replies] == ["call-0-0", "call-0-1", "call-1-0"]


@pytest.mark.parametrize("mode", MODES)
def test_approval_limits_audit_telemetry_and_context_in_a_graph(make_runtime, tmp_path, mode):
    governed = governed_runtime(make_runtime, tmp_path)
    with governed.runtime.session() as session:
        script_tool = RunScriptTool.over(session)
        replies = tool_messages(run_graph(script_tool, [[s] for s in GOVERNED_SCRIPTS], mode))
    # The denial ended the script: an error step the model reads, and the graph went on.
    assert [r.status for r in replies] == ["error", "error", "success"]
    check_governed(governed, [r.content for r in replies])


def test_a_denied_call_the_script_catches_is_a_successful_step(make_runtime):
    runtime = make_runtime(TOOLS, approve=lambda request: request.name != "delete_order")
    with runtime.session() as session:
        script = ("try:\n    delete_order(order_id=1)\nexcept Exception as exc:\n"
                  "    outcome = str(exc)\noutcome")
        replies = tool_messages(run_graph(RunScriptTool.over(session), [[script]], "invoke"))
    (reply,) = replies
    assert reply.status == "success"
    assert "denied" in json.loads(reply.content.removeprefix("value:\n"))


@pytest.mark.parametrize("mode", MODES)
def test_an_approval_hook_that_stops_the_run_raises_out_of_the_graph(make_runtime, mode):
    runtime = make_runtime(TOOLS, approve=stop_on_delete)
    with runtime.session() as session, pytest.raises(Exception) as caught:
        run_graph(RunScriptTool.over(session), [[APPROVAL_STOP_SCRIPT]], mode)
    assert any(isinstance(e, ApprovalRequired) for e in exception_chain(caught.value))


def test_create_react_agent_with_the_tool(make_runtime):
    from langgraph.prebuilt import create_react_agent

    runtime = make_runtime(TOOLS)
    with runtime.session() as session:
        script_tool = RunScriptTool.over(session)
        model = ScriptedChatModel(messages=iter(turns([["y = add(20, 22)\ny"], ["y + 1"]])))
        with warnings.catch_warnings():  # deprecated for langchain.agents, still shipped
            warnings.simplefilter("ignore", DeprecationWarning)
            agent = create_react_agent(model, [script_tool])
        state = agent.invoke({"messages": [HumanMessage("work")]})
    replies = tool_messages(state["messages"])
    assert [r.content for r in replies] == ["value:\n42", "value:\n43"]
    assert state["messages"][-1].content == "done"
    assert model.bound[0]["function"]["parameters"]["required"] == ["code"]
