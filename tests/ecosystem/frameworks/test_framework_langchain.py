"""toolscript as LangChain's code tool: ``RunScriptTool`` through langchain-core's
Runnable API (``invoke``/``ainvoke`` with tool calls, as LangGraph's ``ToolNode``
calls tools) and a loop over langchain-core's fake chat model, on every backend."""

from __future__ import annotations

import asyncio

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
from langchain_core.utils.function_calling import convert_to_openai_tool

from toolscript import ApprovalRequired, RunResult
from toolscript.integrations.common import script_tool_spec
from toolscript.integrations.langchain import RunScriptTool


def tool_call(code: object, call_id: str = "call-1") -> dict[str, object]:
    """A tool call as a chat model emits it (what ``ToolNode`` hands to the tool)."""
    return {"type": "tool_call", "id": call_id, "name": "run_script", "args": {"code": code}}


def run_calls(tool: RunScriptTool, scripts: list[str]) -> list[ToolMessage]:
    """A fake chat model asks for each script in turn; each call goes through
    ``tool.invoke`` and its ``ToolMessage`` back into the conversation."""
    turns = [AIMessage("", tool_calls=[{"name": "run_script", "args": {"code": code},
                                        "id": f"call-{i}"}]) for i, code in enumerate(scripts)]
    model = GenericFakeChatModel(messages=iter([*turns, AIMessage("done")]))
    messages: list[BaseMessage] = [HumanMessage("work")]
    replies: list[ToolMessage] = []
    while True:
        answer = model.invoke(messages)
        messages.append(answer)
        if not answer.tool_calls:
            break
        for call in answer.tool_calls:
            reply = tool.invoke({**call, "type": "tool_call"})
            replies.append(reply)
            messages.append(reply)
    assert messages[-1].content == "done"
    return replies


def test_description_stubs_result_text_and_variables(make_runtime):
    runtime = make_runtime(TOOLS)
    with runtime.session() as session:
        tool = RunScriptTool.over(session)
        replies = run_calls(tool, PERSIST_SCRIPTS)
    check_persist_texts([r.content for r in replies])
    assert [r.status for r in replies] == ["success", "success", "error"]
    assert isinstance(replies[0].artifact, RunResult) and replies[0].artifact.value == 3
    spec = script_tool_spec(runtime)
    shown = convert_to_openai_tool(tool)["function"]  # what bind_tools sends a model
    assert shown["name"] == "run_script"
    assert shown["description"] == spec.description
    assert shown["parameters"]["properties"]["code"]["type"] == "string"
    assert shown["parameters"]["required"] == ["code"]


def test_async_invocation_shares_the_session(make_runtime):
    runtime = make_runtime(TOOLS)
    tool = RunScriptTool.over(runtime)  # opens its own session

    async def main() -> list[ToolMessage]:
        first = await tool.ainvoke(tool_call("n = add(4, 5)"))
        second = await tool.ainvoke(tool_call("n * 2", "call-2"))
        return [first, second]

    try:
        replies = asyncio.run(main())
        assert tool.invoke({"code": "n"}) == "value:\n9"  # sync call, same session
    finally:
        tool.close()
    assert [r.content for r in replies][1] == "value:\n18"


def test_typed_code_argument(make_runtime):
    runtime = make_runtime(TOOLS)
    with runtime.session() as session:
        tool = RunScriptTool.over(session)
        reply = tool.invoke(tool_call(["not", "code"]))
        missing = tool.invoke({"type": "tool_call", "id": "c", "name": "run_script",
                               "args": {"script": "1"}})
    assert reply.status == "error" and reply.content.startswith("error: invalid_arguments:")
    assert missing.status == "error" and "code: Field required" in missing.content


def test_approval_limits_audit_telemetry_and_context(make_runtime, tmp_path):
    governed = governed_runtime(make_runtime, tmp_path)
    with governed.runtime.session() as session:
        replies = run_calls(RunScriptTool.over(session), GOVERNED_SCRIPTS)
    check_governed(governed, [r.content for r in replies])


def test_an_approval_hook_that_stops_the_run_raises_out_of_the_tool(make_runtime):
    runtime = make_runtime(TOOLS, approve=stop_on_delete)
    with runtime.session() as session, pytest.raises(Exception) as caught:
        RunScriptTool.over(session).invoke(tool_call(APPROVAL_STOP_SCRIPT))
    assert any(isinstance(e, ApprovalRequired) for e in exception_chain(caught.value))


def test_a_failed_script_carries_its_run_result_as_artifact(make_runtime):
    """A failed script's ToolMessage has ``status="error"``, the error text and the
    RunResult as artifact, as a successful one has (sync and async)."""
    runtime = make_runtime(TOOLS)
    with runtime.session() as session:
        tool = RunScriptTool.over(session)
        ok = tool.invoke(tool_call("1 + 1"))
        failed = tool.invoke(tool_call("x = 1\n1 / 0", "call-2"))
        failed_async = asyncio.run(tool.ainvoke(tool_call("undefined_name", "call-3")))
        plain = tool.invoke({"code": "1 / 0"})  # no tool call: the text alone
    assert ok.status == "success" and isinstance(ok.artifact, RunResult)
    for reply, call_id, error_type in ((failed, "call-2", "script_error"),
                                       (failed_async, "call-3", "script_error")):
        assert isinstance(reply, ToolMessage) and reply.status == "error"
        assert reply.tool_call_id == call_id and reply.name == "run_script"
        assert reply.content.startswith(f"error: {error_type}:")
        assert isinstance(reply.artifact, RunResult) and not reply.artifact.ok
        assert reply.artifact.error is not None and reply.artifact.error.type == error_type
    assert failed.artifact.error.line == 2 and "(line 2)" in failed.content
    assert isinstance(plain, str) and plain.startswith("error: script_error:")
