"""OpenAI Agents SDK ``FunctionTool`` objects as toolscript tools.

``name``, ``description``, ``params_json_schema`` (validated by toolscript
before approval), ``output_json_schema``, ``timeout_seconds`` and
``needs_approval`` carry over (a ``needs_approval`` *function* decides per
call inside an SDK run; here every call of such a tool goes to the approval
hook, which sees the arguments). A call awaits ``on_invoke_tool(ctx,
json_args)`` on the host's loop with a ``ToolContext`` built for it:
``context`` is the run's context value ``deps`` (``Runtime(context={"deps":
...})``, None without one), ``tool_name`` the tool's name, ``tool_call_id`` a
fresh id, ``tool_arguments`` the JSON arguments, ``usage`` empty.

Errors: a ``@function_tool`` whose failures the SDK's *default* formatter
would turn into a text result ("An error occurred while running the tool")
raises instead, so the script gets a ``tool_exception`` naming the real
exception; a tool with its own ``failure_error_function`` keeps it (its text
is the result, as the author chose).

Not carried over: ``is_enabled`` functions and tool guardrails, which need an
agent and an SDK run (converting a tool that has them warns; a tool with
``is_enabled=False`` is refused), and ``strict_json_schema`` (toolscript's own
validation applies).
"""

from __future__ import annotations

import copy
import json
import uuid
import warnings
from typing import Any

from toolscript.errors import ToolDefinitionError

from .base import FrameworkTool, tool_name

__all__ = ["from_openai_agents", "tool_context"]


def tool_context(tool: Any, deps: Any, arguments: str) -> Any:
    """The ``ToolContext`` one call of ``tool`` gets outside an SDK run."""
    from agents.tool_context import ToolContext

    return ToolContext(
        context=deps,
        tool_name=tool.name,
        tool_call_id=f"call_{uuid.uuid4().hex[:24]}",
        tool_arguments=arguments,
    )


def _raising(tool: Any) -> Any:
    """A copy of ``tool`` whose failures raise instead of becoming the SDK's default
    error text (the copy's invoker is bound to the copy: ``FunctionTool.__copy__``)."""
    if getattr(tool, "_use_default_failure_error_function", False) is not True:
        return tool
    clone = copy.copy(tool)
    clone._use_default_failure_error_function = False
    clone._failure_error_function = None
    return clone


def from_openai_agents(tool: Any) -> FrameworkTool:
    """A toolscript tool that calls the Agents SDK ``FunctionTool`` ``tool``.

    Raises:
        ToolDefinitionError: the tool is disabled (``is_enabled=False``).
    """
    name = tool_name("Agents SDK", tool.name)
    if tool.is_enabled is False:
        raise ToolDefinitionError(f"Agents SDK tool {tool.name!r} is disabled (is_enabled=False)")
    dropped = [what for what, present in (
        ("its is_enabled function", callable(tool.is_enabled)),
        ("its input guardrails", bool(tool.tool_input_guardrails)),
        ("its output guardrails", bool(tool.tool_output_guardrails)),
    ) if present]
    if dropped:
        warnings.warn(
            f"Agents SDK tool {tool.name!r}: toolscript does not apply {' and '.join(dropped)} "
            "(they need an SDK agent run); use an approval hook or policy instead",
            UserWarning,
            stacklevel=4,
        )
    target = _raising(tool)

    async def invoke(args: dict[str, Any], deps: Any) -> Any:
        arguments = json.dumps(args)
        return await target.on_invoke_tool(tool_context(target, deps, arguments), arguments)

    output = getattr(tool, "output_json_schema", None)
    return FrameworkTool(
        invoke,
        framework="Agents SDK",
        source=tool,
        name=name,
        description=str(tool.description or "").strip(),
        input_schema=tool.params_json_schema,
        output_schema=output if isinstance(output, dict) else None,
        takes_context=True,
        requires_approval=tool.needs_approval is not False,
        timeout_s=tool.timeout_seconds,
        blocking=True,
    )
