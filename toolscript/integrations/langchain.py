"""toolscript as the code tool of LangChain and LangGraph (``pip install 'toolscript[langchain]'``).

:class:`RunScriptTool` is a LangChain ``BaseTool`` named ``run_script`` with a
typed ``code`` argument (a pydantic args schema), toolscript's description
(sandbox rules and the Python stubs of the runtime's tools), and both a sync
``_run`` and an async ``_arun``; it works wherever LangChain tools do
(``model.bind_tools([tool])``, LangGraph's ``ToolNode``,
``create_react_agent``). A script's result is the message content (toolscript's
result text) and the :class:`~toolscript.RunResult` its artifact; a failed
script is a ``ToolMessage`` with ``status="error"``, the error text and the same
artifact (invoked without a tool call, LangChain returns the text alone, as it does
for a script that succeeded). Every
tool call the script makes goes through the runtime's approval, validation,
limits, audit and event hooks::

    from toolscript import Runtime
    from toolscript.integrations.langchain import RunScriptTool

    with Runtime(tools=[...]) as runtime, runtime.session() as session:
        tool = RunScriptTool.over(session)
        tool.invoke({"code": "len(list_stores())"})
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Literal

from toolscript.integrations.common import (
    DEFAULT_MAX_RESULT_CHARS,
    RenderedResult,
    ScriptSession,
    missing_extra,
)
from toolscript.runtime.results import RunResult
from toolscript.runtime.runtime import Runtime
from toolscript.runtime.session import Session

try:
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool, ToolException
    from pydantic import BaseModel, ConfigDict, Field
except ImportError as _missing:  # the hint every other missing extra gives
    raise missing_extra("toolscript.integrations.langchain", "langchain") from _missing

__all__ = ["RunScriptInput", "RunScriptTool", "invalid_arguments"]

_CALL_ID: ContextVar[str | None] = ContextVar("toolscript_langchain_call_id", default=None)
"""The id of the tool call being run (set by :meth:`RunScriptTool.run`/``arun``)."""


class RunScriptInput(BaseModel):
    """The arguments of ``run_script``: the script."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="The Python script. Its final bare expression is its result.")


def invalid_arguments(error: Exception) -> str:
    """The text a model reads for arguments that do not fit ``{"code": str}``."""
    first = error.errors()[0] if hasattr(error, "errors") else {}
    where = ".".join(str(p) for p in first.get("loc", ())) or "arguments"
    return (
        'error: invalid_arguments: run_script takes a JSON object {"code": "<Python source>"}; '
        f"{where}: {first.get('msg', error)}"
    )


class RunScriptTool(BaseTool):
    """A LangChain tool that runs the model's scripts in a toolscript session.

    Build it with :meth:`over`. Given a :class:`~toolscript.Runtime`, it opens a
    session on its first call and keeps it (variables persist between calls)
    until :meth:`close`; given a :class:`~toolscript.Session`, it uses that one
    (you close it).
    """

    name: str = "run_script"
    description: str = ""
    args_schema: type[BaseModel] = RunScriptInput
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: bool = True
    handle_validation_error: Any = None  # set in __init__: toolscript's invalid_arguments text
    script: Any = None
    """The :class:`~toolscript.integrations.common.ScriptSession` scripts run in."""

    @classmethod
    def over(
        cls,
        target: Runtime | Session,
        *,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        **fields: Any,
    ) -> RunScriptTool:
        """The tool over ``target``'s tools, described as toolscript's agent describes
        ``run_script``. ``fields`` are further ``BaseTool`` fields (``tags``,
        ``metadata``, ``callbacks`` ...)."""
        script = ScriptSession(target, max_result_chars=max_result_chars)
        spec = script.spec()
        return cls(name=spec.name, description=spec.description, script=script, **fields)

    def __init__(self, **fields: Any) -> None:
        fields.setdefault("handle_validation_error", invalid_arguments)
        super().__init__(**fields)

    def run(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        """LangChain's ``run``, with the tool call's id at hand for a failed script's
        message (see :meth:`_reply`)."""
        token = _CALL_ID.set(kwargs.get("tool_call_id"))
        try:
            return super().run(tool_input, *args, **kwargs)
        finally:
            _CALL_ID.reset(token)

    async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        """LangChain's ``arun``, with the tool call's id at hand (see :meth:`run`)."""
        token = _CALL_ID.set(kwargs.get("tool_call_id"))
        try:
            return await super().arun(tool_input, *args, **kwargs)
        finally:
            _CALL_ID.reset(token)

    def _reply(self, reply: RenderedResult) -> tuple[Any, RunResult]:
        if not reply.is_error:
            return reply.text, reply.result
        call_id = _CALL_ID.get()
        if call_id is None:  # no tool call: LangChain returns the content alone
            raise ToolException(reply.text)
        # LangChain's error path (a ToolException) makes a message without an artifact;
        # a ToolMessage as the content is passed on as it is: the same artifact as on
        # success, with the error status.
        message = ToolMessage(reply.text, artifact=reply.result, tool_call_id=call_id,
                              name=self.name, status="error")
        return message, reply.result

    def _run(self, code: str, **kwargs: Any) -> tuple[Any, RunResult]:
        return self._reply(self._script().run(code))

    async def _arun(self, code: str, **kwargs: Any) -> tuple[Any, RunResult]:
        return self._reply(await self._script().run_async(code))

    def _script(self) -> ScriptSession:
        if not isinstance(self.script, ScriptSession):
            raise TypeError("build the tool with RunScriptTool.over(runtime_or_session)")
        return self.script

    def close(self) -> None:
        """Close the session the tool opened from a runtime (a given one stays open)."""
        self._script().close()
