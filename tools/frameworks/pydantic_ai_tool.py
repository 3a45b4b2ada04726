"""pydantic-ai ``Tool`` objects as toolscript tools.

The tool's own function schema carries over: its JSON Schema (parameters,
``$defs``, descriptions from the docstring), its description, its return
schema, ``requires_approval`` and ``timeout``. toolscript validates the
arguments against that schema before approval; pydantic-ai's validator then
turns them into the function's types (models, dates...) and
``args_validator`` runs, as in an agent run. ``ModelRetry`` and the other
exceptions of the tool are the call's ``tool_exception``.

**RunContext.** A tool that takes a ``RunContext`` (or has an
``args_validator``) gets one built on the host for each call, because no
pydantic-ai agent run exists: ``deps`` is the run's context value ``deps``
(``Runtime(context={"deps": ...})``, None without one), ``tool_name`` the
tool's name, ``usage`` a fresh ``RunUsage``, ``retry`` 0, ``max_retries`` the
tool's, ``messages`` empty, and ``model`` a pydantic-ai ``TestModel`` named
``toolscript`` as a placeholder that is never called (no model request happens
inside a toolscript tool call; a tool that calls ``ctx.model`` itself gets the
test model's canned answers).

``prepare`` is not applied (toolscript's tool set is fixed when the Runtime
is built, and a prepared definition depends on a run's context): converting a
tool that has one warns.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping
from typing import Any

from .base import FrameworkTool, mcp_read_only, tool_name

__all__ = ["from_pydantic_ai", "run_context"]


def run_context(tool: Any, deps: Any) -> Any:
    """The ``RunContext`` a call of pydantic-ai ``tool`` gets outside an agent run."""
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    return RunContext(
        deps=deps,
        model=TestModel(call_tools=[], model_name="toolscript"),
        usage=RunUsage(),
        tool_name=tool.name,
        max_retries=tool.max_retries or 0,
    )


def from_pydantic_ai(tool: Any) -> FrameworkTool:
    """A toolscript tool that calls the pydantic-ai ``Tool`` ``tool``."""
    name = tool_name("pydantic-ai", tool.name)
    schema = tool.function_schema
    validator = tool.args_validator
    takes_context = bool(tool.takes_ctx) or validator is not None
    if tool.prepare is not None:
        warnings.warn(
            f"pydantic-ai tool {tool.name!r}: its prepare function is not applied by "
            "toolscript (the tool set is fixed when the Runtime is built); filter the "
            "tools you pass instead",
            UserWarning,
            stacklevel=4,
        )

    async def invoke(args: dict[str, Any], deps: Any) -> Any:
        ctx = run_context(tool, deps) if takes_context else None
        values = schema.validator.validate_python(args)
        if validator is not None:
            checked = validator(ctx, **values)
            if inspect.isawaitable(checked):
                await checked
        return await schema.call(values, ctx)

    metadata = tool.metadata if isinstance(tool.metadata, Mapping) else {}
    returns = schema.return_schema
    return FrameworkTool(
        invoke,
        framework="pydantic-ai",
        source=tool,
        name=name,
        description=str(tool.description or "").strip(),
        input_schema=schema.json_schema,
        output_schema=returns if returns else None,
        takes_context=takes_context,
        read_only=mcp_read_only(metadata.get("annotations", metadata)),
        requires_approval=bool(tool.requires_approval),
        timeout_s=tool.timeout,
        blocking=True,
    )
