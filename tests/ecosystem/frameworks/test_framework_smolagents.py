"""toolscript as smolagents' code executor: a real ``CodeAgent`` with
``executor=ToolscriptExecutor(...)``, driven by a scripted smolagents ``Model``
(fixed code actions, smolagents' own way to test), on every backend."""

from __future__ import annotations

from typing import Any

import pytest
from backend_marks import backend_options
from framework_helpers import (
    APPROVAL_STOP_SCRIPT,
    FAILED_PREFIX,
    GOVERNED_SCRIPTS,
    PERSIST_SCRIPTS,
    check_governed,
    governed_options,
    stop_on_delete,
    whoami,
)
from smolagents import CodeAgent, Tool
from smolagents.memory import ActionStep
from smolagents.models import ChatMessage, MessageRole, Model

from toolscript import ApprovalRequired, ConfigurationError, RunEndEvent, Runtime
from toolscript.integrations.common import render_result
from toolscript.integrations.smolagents import ToolscriptExecutor

SANDBOX_SIDE: list[str] = []  # where each smolagents tool ran: filled by the tools


class AddTool(Tool):
    name = "add"
    description = "Add two integers."
    inputs = {"a": {"type": "integer", "description": "first"},  # noqa: RUF012 (smolagents API)
              "b": {"type": "integer", "description": "second"}}
    output_type = "integer"

    def forward(self, a: int, b: int) -> int:
        import os

        SANDBOX_SIDE.append(f"add in pid {os.getpid()}")
        return a + b


class DeleteOrderTool(Tool):
    name = "delete_order"
    description = "Delete an order (the approval hook of the tests refuses it)."
    inputs = {"order_id": {"type": "integer", "description": "the order"}}  # noqa: RUF012
    output_type = "string"

    def forward(self, order_id: int) -> str:
        return f"deleted {order_id}"


class ScriptedModel(Model):
    """Answers each request with the next code action, then with plain text."""

    def __init__(self, codes: list[str]) -> None:
        super().__init__(model_id="scripted")
        self.codes = list(codes)
        self.prompts: list[Any] = []

    def generate(self, messages: list[Any], stop_sequences: list[str] | None = None,
                 response_format: Any = None, tools_to_call_from: Any = None,
                 **kwargs: Any) -> ChatMessage:
        self.prompts.append(messages)
        if not self.codes:
            return ChatMessage(role=MessageRole.ASSISTANT, content="done")
        code = self.codes.pop(0)
        return ChatMessage(role=MessageRole.ASSISTANT,
                           content=f"Thought: next step.\n<code>\n{code}\n</code>")


def executor_for(backend_name: str, **options: Any) -> ToolscriptExecutor:
    return ToolscriptExecutor(backend=backend_name,
                              backend_options=backend_options(backend_name), **options)


def action_steps(agent: CodeAgent) -> list[ActionStep]:
    return [s for s in agent.memory.steps if isinstance(s, ActionStep)]


def test_code_runs_in_the_sandbox_tools_on_the_host(backend_name):
    SANDBOX_SIDE.clear()
    codes = [*PERSIST_SCRIPTS, "final_answer(x * 100)"]
    executor = executor_for(backend_name)
    with CodeAgent(tools=[AddTool()], model=ScriptedModel(codes), executor=executor,
                   max_steps=6, verbosity_level=0) as agent:
        answer = agent.run("work")
        steps = action_steps(agent)
        assert isinstance(executor.runtime, Runtime)
        assert "add" in executor.runtime.tools
        sandbox_pid = (executor.script.session.sandbox.ready_info or {}).get("pid")
    assert answer == 300
    assert "Last output from code snippet:\n3" in steps[0].observations
    assert "Last output from code snippet:\n30" in steps[1].observations  # x persisted
    assert str(steps[2].error).startswith(FAILED_PREFIX)  # toolscript's error text
    assert steps[3].is_final_answer
    import os

    assert [f"add in pid {os.getpid()}"] == SANDBOX_SIDE  # the tool ran in this process
    if backend_name != "inprocess":
        assert sandbox_pid is not None and sandbox_pid != os.getpid()
    assert executor.runtime is None  # cleanup() closed it


def test_printed_output_is_the_execution_log(backend_name):
    executor = executor_for(backend_name)
    codes = ["print('hello from', 'the sandbox')\nfinal_answer(add(2, 2))"]
    with CodeAgent(tools=[AddTool()], model=ScriptedModel(codes), executor=executor,
                   max_steps=2, verbosity_level=0) as agent:
        assert agent.run("work") == 4
        (step,) = action_steps(agent)
    assert "hello from the sandbox" in step.observations


def test_approval_limits_audit_telemetry_and_context(backend_name, tmp_path):
    options, governed = governed_options(tmp_path)
    rendered: list[str] = []

    def keep(event: RunEndEvent) -> None:
        if event.result is not None:
            rendered.append(render_result(event.result).text)

    executor = executor_for(backend_name, tools=[whoami], on_runtime=governed.instrument,
                            event_hooks={"run_end": [keep]}, **options)
    model = ScriptedModel(list(GOVERNED_SCRIPTS))
    agent = CodeAgent(tools=[AddTool(), DeleteOrderTool()], model=model, executor=executor,
                      max_steps=3, verbosity_level=0)
    agent.run("work")
    steps = action_steps(agent)
    assert [str(s.error) for s in steps[:2]] == rendered[:2]  # the model read toolscript's text
    assert steps[2].observations.endswith("Last output from code snippet:\nada")
    check_governed(governed, rendered)
    agent.cleanup()


def test_an_approval_hook_that_stops_the_run_stops_all_code(backend_name):
    executor = executor_for(backend_name, approve=stop_on_delete)
    model = ScriptedModel([APPROVAL_STOP_SCRIPT, "final_answer(add(1, 1))"])
    with CodeAgent(tools=[AddTool(), DeleteOrderTool()], model=model, executor=executor,
                   max_steps=2, verbosity_level=0) as agent:
        agent.run("work")
        steps = action_steps(agent)
    assert isinstance(executor.stopped, ApprovalRequired)
    assert "delete_order needs a human" in str(steps[0].error)
    assert "not run: this agent run was stopped" in str(steps[1].error)
    assert not any(s.is_final_answer for s in steps)


def test_additional_args_become_script_variables(backend_name):
    executor = executor_for(backend_name)
    with CodeAgent(tools=[AddTool()], model=ScriptedModel(["final_answer(add(**pair))"]),
                   executor=executor, max_steps=2, verbosity_level=0) as agent:
        assert agent.run("work", additional_args={"pair": {"a": 5, "b": 6}}) == 11


def test_variables_must_be_json(backend_name):
    executor = executor_for(backend_name)
    with pytest.raises(ConfigurationError, match="only JSON data"):
        executor.send_variables({"handle": object()})
    with pytest.raises(ConfigurationError, match="plain identifier"):
        executor.send_variables({"not a name": 1})


def test_only_smolagents_tools_are_sent(backend_name):
    executor = executor_for(backend_name)
    with pytest.raises(ConfigurationError, match="managed agents are not supported"):
        executor.send_tools({"helper": object()})
    assert executor.runtime is None
