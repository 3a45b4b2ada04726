"""Attacks on the framework adapters (toolscript.integrations), as a hostile model
or a hostile value would try them: the adapters must add no way around the
sandbox or the host's policy.

* smolagents' ``additional_args`` become script variables through generated
  code: values crafted to break out of the literal stay data, names that are
  not plain identifiers are refused.
* The agent's tool objects never enter the sandbox: a script holds a stub and
  cannot reach ``forward``, the tool's attributes or the host process.
* A model that puts other arguments next to ``code`` (to smuggle options) is
  refused by each adapter's schema.
"""

from __future__ import annotations

import os

import pytest
from backend_marks import backend_options
from smolagents import Tool

from toolscript import ConfigurationError
from toolscript.integrations.smolagents import ToolscriptExecutor

BREAKOUTS = [
    "x'); import os; os.system('touch /tmp/pwned'); ('",
    '"""\nimport os\n"""',
    "\\'); __import__('os')._exit(3); ('",
    "'\n__import__('os').system('id')\n'",
]

CALLS: list[str] = []


class Echo(Tool):
    name = "echo"
    description = "Return the text."
    inputs = {"text": {"type": "string", "description": "anything"}}  # noqa: RUF012
    output_type = "string"

    def forward(self, text: str) -> str:
        CALLS.append(text)
        return text


def executor_for(backend_name: str) -> ToolscriptExecutor:
    executor = ToolscriptExecutor(backend=backend_name,
                                  backend_options=backend_options(backend_name))
    executor.send_tools({"echo": Echo()})
    return executor


def test_hostile_variable_values_stay_data(backend_name):
    executor = executor_for(backend_name)
    try:
        executor.send_variables({"payloads": BREAKOUTS, "nested": {"k": BREAKOUTS[0]}})
        assert executor("payloads").output == BREAKOUTS  # every byte came through as data
        assert executor("nested['k']").output == BREAKOUTS[0]
    finally:
        executor.cleanup()
    assert not os.path.exists("/tmp/pwned")


@pytest.mark.parametrize("name", ["__builtins__", "_private", "a b", "x=1;y", "class", "",
                                  "os.system", "é\u200b"])
def test_variable_names_must_be_plain_identifiers(backend_name, name):
    executor = ToolscriptExecutor(backend=backend_name)
    with pytest.raises(ConfigurationError):
        executor.send_variables({name: 1})


@pytest.mark.parametrize("attack", [
    "echo.forward('x')",
    "echo.__self__",
    "type(echo).__mro__",
    "echo.__globals__",
    "echo.inputs",
    "getattr(echo, 'forward')('x')",
])
def test_the_tool_object_never_enters_the_sandbox(backend_name, attack):
    from smolagents.local_python_executor import InterpreterError

    CALLS.clear()
    executor = executor_for(backend_name)
    try:
        with pytest.raises(InterpreterError):
            executor(attack)
        assert executor("echo('ok')").output == "ok"  # the stub works, through the host
    finally:
        executor.cleanup()
    assert CALLS == ["ok"]


def test_extra_arguments_next_to_code_are_refused(make_runtime):
    from toolscript.integrations.langchain import RunScriptTool

    runtime = make_runtime([])
    with runtime.session() as session:
        tool = RunScriptTool.over(session)
        reply = tool.invoke({"type": "tool_call", "id": "1", "name": "run_script",
                             "args": {"code": "1", "backend": "inprocess"}})
    assert reply.status == "error" and "invalid_arguments" in reply.content
