"""The agent loop: a model drives a toolscript runtime through a provider dialect.

``Agent("provider:model", tools=[...])`` or ``Agent(runtime, provider=...,
model=..., mode=...)``; ``.run(prompt)`` returns an :class:`AgentResult`
(also ``run_async``, ``stream``, ``stream_async``). See :mod:`.loop` for the
drivers, :mod:`.state` for the loop's rules, :mod:`.offer` for modes and
``allowed_callers``, :mod:`.executor` for how calls run, :mod:`.output` for
structured answers, :mod:`.events` for streamed events, :mod:`.settings` for the settings
groups (``model_settings=``, ``limits=``, ``endpoint=``) and :mod:`.testing`
for scripted models, :mod:`.paused` for runs that wait for a person
(``result.state``, ``agent.resume(state, decisions)``).
"""

from __future__ import annotations

from .events import (
    AgentEvent,
    ModelResponded,
    RunFinished,
    ScriptFinished,
    ScriptStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from .executor import Step
from .loop import Agent
from .offer import CALLERS_ATTRIBUTE, MODES, allowed_callers
from .paused import AgentState
from .result import AgentResult, StopReason
from .settings import AgentLimits, Endpoint, ModelSettings

__all__ = [
    "CALLERS_ATTRIBUTE",
    "MODES",
    "Agent",
    "AgentEvent",
    "AgentLimits",
    "AgentResult",
    "AgentState",
    "Endpoint",
    "ModelResponded",
    "ModelSettings",
    "RunFinished",
    "ScriptFinished",
    "ScriptStarted",
    "Step",
    "StopReason",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "allowed_callers",
]
