"""toolscript as the code tool of an OpenAI Agents SDK agent
(``pip install 'toolscript[openai-agents]'``).

:func:`run_script_tool` gives a ``FunctionTool`` named ``run_script`` over a
toolscript session: toolscript's description (sandbox rules and the Python
stubs of the runtime's tools), a strict ``{"code": str}`` schema, and an async
``on_invoke_tool`` that runs the script in the session (its variables persist
from call to call and from run to run) and returns toolscript's result text.
Every tool call the script makes goes through the runtime's approval,
validation, limits, audit and event hooks; an approval hook that stops the run
(``ToolAuthorizationError``) or a backend failure raises out of
``Runner.run``::

    from agents import Agent, Runner
    from toolscript import Runtime
    from toolscript.integrations.openai_agents import run_script_tool

    with Runtime(tools=[...]) as runtime, runtime.session() as session:
        agent = Agent(name="analyst", tools=[run_script_tool(session)])
        Runner.run_sync(agent, "Which store sold most?")
"""

from __future__ import annotations

import json
from typing import Any

from toolscript.errors import ConfigurationError
from toolscript.integrations.common import (
    DEFAULT_MAX_RESULT_CHARS,
    ScriptSession,
    missing_extra,
)
from toolscript.runtime.agent.format import cap
from toolscript.runtime.session import Session

try:
    from agents import FunctionTool
    from agents.tool_context import ToolContext
except ImportError as _missing:  # the hint every other missing extra gives
    raise missing_extra("toolscript.integrations.openai_agents", "openai-agents") from _missing

__all__ = ["run_script_tool"]


def run_script_tool(
    session: Session,
    *,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    timeout_seconds: float | None = None,
) -> FunctionTool:
    """A ``FunctionTool`` that runs the model's scripts in ``session``.

    Args:
        session: the toolscript session (``runtime.session(context=...)``; its
            context fills the tools' injected parameters). You close it.
        max_result_chars: cap of the result text the model reads.
        timeout_seconds: the SDK's own per-call timeout (toolscript's
            ``Limits.wall_time_s`` applies in any case).
    """
    if not isinstance(session, Session):
        raise ConfigurationError(
            f"run_script_tool takes a toolscript Session (runtime.session()), "
            f"not {type(session).__name__}"
        )
    script = ScriptSession(session, max_result_chars=max_result_chars)
    spec = script.spec()

    async def on_invoke_tool(ctx: ToolContext[Any], arguments: str) -> str:
        try:
            parsed = json.loads(arguments)
        except ValueError:
            parsed = None
        code = parsed.get("code") if isinstance(parsed, dict) else None
        if not isinstance(code, str):
            return (
                'error: invalid_arguments: run_script takes a JSON object {"code": "<Python '
                f'source>"}}; got {cap(arguments, 300)}'
            )
        reply = await script.run_async(code)
        return reply.text

    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=spec.parameters,
        on_invoke_tool=on_invoke_tool,
        strict_json_schema=True,
        timeout_seconds=timeout_seconds,
    )
