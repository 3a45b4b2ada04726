"""toolscript as the code executor of a smolagents ``CodeAgent``
(``pip install 'toolscript[smolagents]'``).

:class:`ToolscriptExecutor` is a smolagents ``PythonExecutor``: pass it as
``CodeAgent(tools=..., model=..., executor=ToolscriptExecutor(...))`` and every
code action the model writes runs in toolscript's sandbox (the restricted
interpreter in an OS-walled process or container) instead of smolagents' local
interpreter. The agent's tools never enter the sandbox: each becomes a
toolscript tool on the host (``Runtime(tools=[...])`` converts it: its
``inputs`` as JSON Schema, see :mod:`toolscript.tools.frameworks`), so the script
calls it across the sandbox boundary, behind the runtime's approval,
validation, limits, audit and event hooks (telemetry). Variables persist
between the agent's steps (one session), and from run to run while the tools
stay the same::

    from smolagents import CodeAgent
    from toolscript.integrations.smolagents import ToolscriptExecutor

    executor = ToolscriptExecutor(backend="subprocess", approve=my_policy)
    with CodeAgent(tools=[my_tool], model=model, executor=executor) as agent:
        agent.run("...")

smolagents hands its tools to the executor when a run starts
(``send_tools``); the executor then builds its :class:`~toolscript.Runtime`
(from the converted tools, ``tools=`` of its own, and the runtime options) and
opens a session; ``on_runtime`` is called with each runtime it builds (e.g.
``on_runtime=telemetry.instrument``). :meth:`ToolscriptExecutor.cleanup`
(``CodeAgent.cleanup()``, ``with CodeAgent(...)``) closes both.

What differs from smolagents' local executor: a call of ``final_answer`` gives
the answer, but the script still runs to its end (the answer is the last
successful ``final_answer`` call's); the modules a script may import are
toolscript's (``Runtime(modules=...)``), not ``additional_authorized_imports``;
variables sent with ``additional_args`` must be JSON data; and an exception
from the session (an approval hook's ``ApprovalRequired``, a backend failure)
does not end ``agent.run`` — smolagents turns every executor error into an
error its model reads — so the executor runs no further code in that run and
keeps the exception in :attr:`ToolscriptExecutor.stopped`.
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Callable, Iterable
from typing import Any

from toolscript.errors import ConfigurationError, ToolscriptError
from toolscript.integrations.common import ScriptSession, missing_extra, render_result
from toolscript.runtime.results import RunResult
from toolscript.runtime.runtime import Runtime
from toolscript.tools.frameworks import framework_of

try:
    from smolagents.local_python_executor import (  # type: ignore[import-untyped]
        CodeOutput,
        InterpreterError,
        PythonExecutor,
    )
except ImportError as _missing:  # the hint every other missing extra gives
    raise missing_extra("toolscript.integrations.smolagents", "smolagents") from _missing

__all__ = ["FINAL_ANSWER_NAME", "ToolscriptExecutor"]

FINAL_ANSWER_NAME = "final_answer"
"""The smolagents tool whose successful call ends the agent's run with its value."""


class ToolscriptExecutor(PythonExecutor):  # type: ignore[misc]
    """smolagents' ``PythonExecutor`` over a toolscript session.

    Args:
        tools: toolscript tools (``@tool`` functions, ``Tool`` objects, sources)
            scripts may call besides the agent's own tools.
        on_runtime: called with each :class:`~toolscript.Runtime` the executor
            builds, before its session opens (instrument it, keep a reference).
        max_result_chars: cap of the error text the model reads.
        **runtime_options: keyword arguments of :class:`~toolscript.Runtime`
            (``backend``, ``approve``, ``limits``, ``audit``, ``context``,
            ``modules``, ``event_hooks`` ...).
    """

    def __init__(
        self,
        tools: Iterable[Any] = (),
        *,
        on_runtime: Callable[[Runtime], object] | None = None,
        max_result_chars: int = 20_000,
        **runtime_options: Any,
    ) -> None:
        if "tools" in runtime_options:
            raise ConfigurationError("give toolscript tools as tools=, not in runtime_options")
        self.extra_tools = list(tools)
        self.on_runtime = on_runtime
        self.max_result_chars = max_result_chars
        self.runtime_options = dict(runtime_options)
        self.runtime: Runtime | None = None
        """The runtime built for the agent's current tools (None before ``send_tools``)."""
        self.script: ScriptSession | None = None
        """Where the agent's code runs (None before ``send_tools``)."""
        self.last_result: RunResult | None = None
        """The :class:`~toolscript.RunResult` of the latest code action."""
        self.stopped: ToolscriptError | None = None
        """What stopped the agent's run (``ApprovalRequired``, a backend failure ...):
        smolagents shows every executor error to its model and goes on, so the
        executor runs no code after it; check it after ``agent.run``. A new
        ``send_tools`` (the next ``agent.run``) clears it."""
        self._tool_key: tuple[tuple[str, int], ...] | None = None
        self._pending: dict[str, Any] = {}

    # --- the PythonExecutor interface -------------------------------------------------
    def send_tools(self, tools: dict[str, Any]) -> None:
        """Build the runtime over the agent's tools (host tools) and open its session,
        unless the tools are the ones it already has (then the session, and its
        variables, go on). A new runtime closes the old one, and with it an
        ``audit=`` log that can be closed."""
        self.stopped = None
        key = tuple(sorted((name, id(obj)) for name, obj in tools.items()))
        if key == self._tool_key and self.script is not None:
            return
        foreign = [t for t in tools.values() if framework_of(t) != "smolagents"]
        if foreign:
            raise ConfigurationError(
                f"ToolscriptExecutor runs smolagents Tool objects on the host; "
                f"{type(foreign[0]).__name__} is none (managed agents are not supported, as "
                "with smolagents' own remote executors)"
            )
        self.cleanup()
        # Runtime(tools=...) converts each smolagents Tool (toolscript.tools.frameworks):
        # its inputs as JSON Schema, called on the host, never shipped into the sandbox.
        runtime = Runtime(tools=[*tools.values(), *self.extra_tools], **self.runtime_options)
        try:
            if self.on_runtime is not None:
                self.on_runtime(runtime)
            self.script = ScriptSession(runtime, max_result_chars=self.max_result_chars)
        except BaseException:
            runtime.close()
            raise
        self.runtime = runtime
        self._tool_key = key

    def send_variables(self, variables: dict[str, Any]) -> None:
        """Make ``variables`` (JSON data, e.g. ``additional_args``) script variables
        before the next code action."""
        for name, value in variables.items():
            if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
                raise ConfigurationError(f"variable name {name!r} is not a plain identifier")
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                raise ConfigurationError(
                    f"variable {name!r}: only JSON data can enter the sandbox, not "
                    f"{type(value).__name__}"
                ) from None
        self._pending.update(variables)

    def __call__(self, code_action: str) -> CodeOutput:
        """Run one code action; a failed script raises smolagents' ``InterpreterError``
        with toolscript's error text (the agent shows it to the model)."""
        if self.script is None:
            raise ConfigurationError("send_tools() comes first (CodeAgent.run calls it)")
        if self.stopped is not None:
            raise InterpreterError(f"not run: this agent run was stopped: {self.stopped}")
        if self._pending:
            self._load_variables()
        try:
            result = self.script.session.run(code_action)
        except ToolscriptError as exc:  # an approval hook stopped the run, a backend failed
            self.stopped = exc
            raise
        self.last_result = result
        answer = _final_answer(result)
        if answer is not None:
            return CodeOutput(output=answer[0], logs=result.stdout, is_final_answer=True)
        if not result.ok:
            raise InterpreterError(render_result(result, max_chars=self.max_result_chars).text)
        return CodeOutput(output=result.value, logs=result.stdout, is_final_answer=False)

    def cleanup(self) -> None:
        """Close the session and the runtime (``CodeAgent.cleanup()`` calls this)."""
        script, runtime = self.script, self.runtime
        self.script = self.runtime = None
        self._tool_key = None
        if script is not None:
            script.close()
        if runtime is not None:
            runtime.close()

    def _load_variables(self) -> None:
        assert self.script is not None
        lines = ["import json"] + [
            f"{name} = json.loads({json.dumps(value)!r})" for name, value in self._pending.items()
        ]
        self._pending = {}
        result = self.script.session.run("\n".join(lines))
        if not result.ok:
            raise InterpreterError(render_result(result, max_chars=self.max_result_chars).text)


def _final_answer(result: RunResult) -> tuple[Any] | None:
    """``(value,)`` of the last successful ``final_answer`` call of the run, if any."""
    for record in reversed(result.tool_calls):
        if record.name == FINAL_ANSWER_NAME and record.ok:
            return (record.value,)
    return None
