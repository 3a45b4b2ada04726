"""toolscript as the code tool of a pydantic-ai agent (``pip install 'toolscript[pydantic-ai]'``).

:class:`ToolscriptToolset` is a pydantic-ai toolset with one tool,
``run_script``, described as toolscript's own agent describes it (sandbox rules
and the Python stubs of the runtime's tools); a call runs the script in a
toolscript session and returns toolscript's result text (a failed script is a
failed tool result, :class:`pydantic_ai.ToolFailed`, which the model sees and
can fix). Every tool call the script makes goes through the runtime's approval,
validation, limits, audit and event hooks::

    from pydantic_ai import Agent
    from toolscript import Runtime
    from toolscript.integrations.pydantic_ai import ToolscriptToolset

    with Runtime(tools=[...]) as runtime:
        agent = Agent("openai:gpt-5", toolsets=[ToolscriptToolset(runtime)])
        agent.run_sync("Which store sold most?")

Given a :class:`~toolscript.Runtime`, each agent run gets its own session
(variables persist across the calls of that run, and the sandbox is closed when
the run ends); given a :class:`~toolscript.Session`, every run shares it (you
close it). ``context=`` fills the tools' injected parameters, also from the
run's dependencies: ``context=lambda ctx: {"user_id": ctx.deps.user_id}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolscript.errors import ConfigurationError
from toolscript.integrations.common import (
    DEFAULT_MAX_RESULT_CHARS,
    ScriptSession,
    missing_extra,
    script_tool_spec,
)
from toolscript.runtime.runtime import Runtime
from toolscript.runtime.session import Session

try:
    from pydantic_ai import RunContext, ToolDefinition, ToolFailed
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
    from pydantic_core import SchemaValidator, core_schema
except ImportError as _missing:  # the hint every other missing extra gives
    raise missing_extra("toolscript.integrations.pydantic_ai", "pydantic-ai") from _missing

__all__ = ["ContextSource", "ToolscriptToolset"]

ContextSource = Mapping[str, Any] | Callable[[RunContext[Any]], Mapping[str, Any]]
"""Injected-parameter values: a mapping, or a function of the run's ``RunContext``."""

_ARGS_VALIDATOR = SchemaValidator(
    core_schema.typed_dict_schema(
        {"code": core_schema.typed_dict_field(core_schema.str_schema())},
        extra_behavior="forbid",
    )
)


class ToolscriptToolset(AbstractToolset[Any]):
    """A pydantic-ai toolset whose one tool, ``run_script``, runs scripts in toolscript.

    Args:
        target: a :class:`~toolscript.Runtime` (a session per agent run) or a
            :class:`~toolscript.Session` (shared by every run; you close it).
        context: values for the tools' injected parameters in a per-run session:
            a mapping, or a function of the run's ``RunContext`` (e.g. of its
            ``deps``). Not with a given session (it has its own context).
        max_result_chars: cap of the result text the model reads.
        instructions: add toolscript's programmatic-mode guidance to the agent's
            instructions (as toolscript's own agent does).
        max_retries: how often pydantic-ai may ask the model again for arguments
            that do not fit ``{"code": str}``.
        id: the toolset's id (needed for durable execution).
    """

    def __init__(
        self,
        target: Runtime | Session,
        *,
        context: ContextSource | None = None,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        instructions: bool = True,
        max_retries: int = 1,
        id: str | None = None,
    ) -> None:
        self.target = target
        self.context = context
        self.max_result_chars = max_result_chars
        self.instructions = instructions
        self.max_retries = max_retries
        self._id = id
        self._script: ScriptSession | None = None
        if isinstance(target, Session):
            if context is not None:
                raise ConfigurationError(
                    "context= is for the per-run sessions of a Runtime; a given session has "
                    "its own context (runtime.session(context=...))"
                )
            self._script = ScriptSession(target, max_result_chars=max_result_chars)
        elif not isinstance(target, Runtime):
            raise ConfigurationError(
                f"expected a toolscript Runtime or Session, got {type(target).__name__}"
            )
        self.spec = script_tool_spec(target.runtime if isinstance(target, Session) else target,
                                     max_result_chars=max_result_chars)
        """The ``run_script`` tool text (see :func:`.common.script_tool_spec`)."""
        self._entered = 0

    @property
    def id(self) -> str | None:
        """The id given to the constructor."""
        return self._id

    @property
    def script_session(self) -> ScriptSession | None:
        """Where this toolset's scripts run: set for a given session, and for the
        per-run copy of an agent run once it has started; None otherwise."""
        return self._script

    async def for_run(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        """A copy with its own session for one agent run (self, for a given session)."""
        if isinstance(self.target, Session):
            return self
        context = self.context(ctx) if callable(self.context) else self.context
        run = ToolscriptToolset(
            self.target, max_result_chars=self.max_result_chars,
            instructions=self.instructions, max_retries=self.max_retries, id=self._id,
        )
        run.context = self.context
        run._script = ScriptSession(
            self.target, context=context, max_result_chars=self.max_result_chars
        )
        return run

    async def __aenter__(self) -> ToolscriptToolset:
        self._entered += 1
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        self._entered -= 1
        if self._entered <= 0 and self._script is not None:
            await self._script.aclose()  # a given session stays open
        return None

    async def get_instructions(self, ctx: RunContext[Any]) -> str | None:
        """toolscript's programmatic-mode guidance (``instructions=False``: none)."""
        return self.spec.instructions if self.instructions else None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """``{"run_script": ...}`` with toolscript's description and argument schema."""
        definition = ToolDefinition(
            name=self.spec.name,
            description=self.spec.description,
            parameters_json_schema=self.spec.parameters,
            sequential=True,  # scripts share the session's variables: one at a time
        )
        tool = ToolsetTool(
            toolset=self, tool_def=definition, max_retries=self.max_retries,
            args_validator=_ARGS_VALIDATOR,
        )
        return {self.spec.name: tool}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str:
        """Run the script; its result text, or :class:`~pydantic_ai.ToolFailed` with
        the error text when the script failed."""
        if self._script is None:  # used outside an agent run: one session, closed on exit
            self._script = ScriptSession(
                self.target, context=self.context if isinstance(self.context, Mapping) else None,
                max_result_chars=self.max_result_chars,
            )
        reply = await self._script.run_async(tool_args["code"])
        if reply.is_error:
            raise ToolFailed(reply.text)
        return reply.text

