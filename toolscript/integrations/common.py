"""What every framework adapter needs: the ``run_script`` tool's text and the result text.

:func:`script_tool_spec` gives the model-facing name, description (the sandbox
rules plus the Python stubs of the runtime's script-callable tools), argument
schema and system guidance of ``run_script``, exactly as toolscript's own
:class:`~toolscript.Agent` offers it (both come from
:func:`toolscript.runtime.agent.offer.build_offer`).

:func:`render_result` gives the text a model reads for a
:class:`~toolscript.RunResult` — ``error: TYPE: message (line N)``, what the
script printed, its value, capped with a notice — the agent's own renderer.

:class:`ScriptSession` runs scripts for an adapter: one toolscript session
(given, or opened from a runtime on first use) whose variables persist between
calls; every run goes through the runtime's approval, limits, audit and event
hooks (telemetry) like any other run.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolscript.errors import ConfigurationError
from toolscript.runtime import prompts
from toolscript.runtime.agent.format import format_run_result
from toolscript.runtime.agent.offer import SCRIPT, allowed_callers, build_offer, render_script_stubs
from toolscript.runtime.results import RunResult
from toolscript.runtime.runtime import Runtime
from toolscript.runtime.session import Session
from toolscript.tools.asynctools import offload

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "RUN_SCRIPT_NAME",
    "RenderedResult",
    "ScriptSession",
    "ScriptToolSpec",
    "missing_extra",
    "render_result",
    "script_tool_spec",
]

RUN_SCRIPT_NAME = prompts.RUN_SCRIPT_NAME
"""The name of the code tool (``"run_script"``)."""

DEFAULT_MAX_RESULT_CHARS = 20_000
"""How much of a script's result the model reads by default (as
``Agent(limits=AgentLimits(max_result_chars=))``)."""


@dataclass(frozen=True)
class ScriptToolSpec:
    """The model-facing ``run_script`` tool of a runtime.

    Attributes:
        name: the tool name (``"run_script"``).
        description: the sandbox rules and the stubs of the script-callable tools.
        parameters: the JSON Schema of the arguments: ``{"code": str}``, strict-mode ready.
        instructions: system text for programmatic tool calling (what toolscript's
            agent adds to its system prompt); optional for a framework agent.
        stubs: the Python stubs of the script-callable tools alone.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    instructions: str
    stubs: str


@dataclass(frozen=True)
class RenderedResult:
    """A script result as the model reads it.

    Attributes:
        text: value, printed output or ``error: TYPE: message (line N)``, capped.
        is_error: True when the script failed (the framework's error flag, if any).
        result: the full :class:`~toolscript.RunResult` (tool call records and all).
    """

    text: str
    is_error: bool
    result: RunResult


def missing_extra(what: str, extra: str) -> ConfigurationError:
    """The install hint toolscript gives for a missing optional package."""
    return ConfigurationError(f"{what} needs its package: pip install 'toolscript[{extra}]'")


def script_tool_spec(
    runtime: Runtime, *, max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
) -> ScriptToolSpec:
    """The ``run_script`` tool over ``runtime``'s tools, as toolscript's agent offers it.

    Args:
        runtime: whose tools (those scripts may call: ``allowed_callers``
            including ``"script"``) and modules the description lists.
        max_result_chars: the result cap the description announces (pass the
            same value to :func:`render_result`).

    Raises:
        ConfigurationError: a registered tool is itself named ``run_script``.
    """
    offer = build_offer(
        runtime.registry, "programmatic", max_result_chars=max_result_chars,
        modules=tuple(sorted(runtime.modules)),
    )
    spec = next(s for s in offer.specs if s.name == RUN_SCRIPT_NAME)
    script_tools = [t for t in runtime.registry if SCRIPT in allowed_callers(t)]
    return ScriptToolSpec(
        name=spec.name,
        description=spec.description,
        parameters=dict(spec.parameters),
        instructions=prompts.PROGRAMMATIC_SYSTEM,
        stubs=render_script_stubs(runtime.registry, script_tools),
    )


def render_result(
    result: RunResult, *, max_chars: int = DEFAULT_MAX_RESULT_CHARS
) -> RenderedResult:
    """``result`` as the model reads it (toolscript's agent sends the same text)."""
    text, is_error = format_run_result(result, max_chars)
    return RenderedResult(text, is_error, result)


class ScriptSession:
    """The toolscript session behind a framework's code tool.

    Args:
        target: a :class:`~toolscript.Session` (used as it is; you close it) or a
            :class:`~toolscript.Runtime` (a session is opened on the first run and
            closed by :meth:`close`).
        context: values for the tools' injected parameters, for a session opened
            from a runtime (merged over the runtime's context).
        max_result_chars: cap of the result text (see :func:`render_result`).

    Scripts run one at a time (a second concurrent call waits for the first):
    they share the session's variables.
    """

    def __init__(
        self,
        target: Runtime | Session,
        *,
        context: Mapping[str, Any] | None = None,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    ) -> None:
        if isinstance(target, Session):
            if context is not None:
                raise ConfigurationError(
                    "context= is for a session opened from a runtime; a given session "
                    "has its own context (runtime.session(context=...))"
                )
            self.runtime: Runtime = target.runtime
            self._session: Session | None = target
            self._owned = False
        elif isinstance(target, Runtime):
            self.runtime = target
            self._session = None
            self._owned = True
        else:
            raise ConfigurationError(
                f"expected a toolscript Runtime or Session, got {type(target).__name__}"
            )
        self.context = dict(context or {})
        self.max_result_chars = max_result_chars
        self._lock = threading.Lock()

    def spec(self) -> ScriptToolSpec:
        """The ``run_script`` tool text for this session's runtime."""
        return script_tool_spec(self.runtime, max_result_chars=self.max_result_chars)

    @property
    def session(self) -> Session:
        """The session scripts run in (opened now if it was not yet)."""
        with self._lock:
            if self._session is None or (self._owned and self._session.closed):
                self._session = self.runtime.session(context=self.context)
            return self._session

    @property
    def current(self) -> Session | None:
        """The session if one is open (a given one, or one this object opened and has
        not closed yet); never opens one."""
        with self._lock:
            return self._session

    def run(self, code: str) -> RenderedResult:
        """Run ``code`` in the session; its result as the model reads it.

        Raises:
            ToolscriptError: what the session raises (an approval hook that stops
                the run, an unavailable backend): the framework's run ends.
        """
        return render_result(self.session.run(code), max_chars=self.max_result_chars)

    async def run_async(self, code: str) -> RenderedResult:
        """:meth:`run` for async frameworks: the sandbox I/O runs in a worker thread
        and ``async def`` tools run on the caller's event loop."""
        result = await self.session.run_async(code)
        return render_result(result, max_chars=self.max_result_chars)

    def close(self) -> None:
        """Close the session if this object opened it (a given session stays open)."""
        with self._lock:
            session, owned = self._session, self._owned
            if owned:
                self._session = None
        if owned and session is not None:
            session.close()

    async def aclose(self) -> None:
        """:meth:`close` for async code (stopping a sandbox can take a moment)."""
        await offload(self.close)
