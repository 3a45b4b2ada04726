"""What a streamed agent run reports, in order (``Agent.stream`` / ``stream_async``).

One run yields, per model turn: :class:`TextDelta` s as the model's text
arrives (one per chunk where the dialect streams; the whole text at once for
a provider that does not), then :class:`ModelResponded`; then, per call the
model made, :class:`ToolCallStarted` before it runs and
:class:`ToolCallFinished` after — for ``run_script`` calls
:class:`ScriptStarted` and :class:`ScriptFinished` instead, the latter with
the host tool calls the script made. The last event is :class:`RunFinished`
with the :class:`~.result.AgentResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..providers.base import ToolCall, Usage
from .executor import Step
from .protocols import ToolCallRecordLike

__all__ = [
    "AgentEvent",
    "ModelResponded",
    "RunFinished",
    "ScriptFinished",
    "ScriptStarted",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
]


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's text, as it arrives."""

    text: str
    turn: int


@dataclass(frozen=True)
class ModelResponded:
    """A model turn is complete: its whole text, the calls it asks for, its usage."""

    turn: int
    text: str
    tool_calls: list[ToolCall]
    usage: Usage


@dataclass(frozen=True)
class ToolCallStarted:
    """A direct tool call (classic or mixed mode) is about to run."""

    call_id: str
    name: str
    arguments: Any


@dataclass(frozen=True)
class ToolCallFinished:
    """A direct tool call (or a refused one) got its reply."""

    call_id: str
    name: str
    ok: bool
    output: str
    step: Step = field(repr=False)


@dataclass(frozen=True)
class ScriptStarted:
    """A ``run_script`` call is about to run."""

    call_id: str
    code: str


@dataclass(frozen=True)
class ScriptFinished:
    """A ``run_script`` call finished: its reply and the host tool calls it made."""

    call_id: str
    ok: bool
    output: str
    tool_calls: list[ToolCallRecordLike]
    step: Step = field(repr=False)


@dataclass(frozen=True)
class RunFinished:
    """The run is over; ``result`` is what :meth:`Agent.run` would have returned."""

    result: Any


AgentEvent = (
    TextDelta | ModelResponded | ToolCallStarted | ToolCallFinished | ScriptStarted
    | ScriptFinished | RunFinished
)
"""Any event of a streamed run."""
