"""The outcome of :meth:`Agent.run`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..providers.base import Usage
from .executor import Step
from .protocols import ToolCallRecordLike

__all__ = ["AgentResult", "StopReason"]

#: Why the loop ended: the model answered, or a cap forced a final answer.
StopReason = Literal["answer", "max_turns", "token_budget"]


@dataclass
class AgentResult:
    """What one agent run produced.

    Attributes:
        answer: the model's final text.
        turns: model requests made (the final-answer turn included).
        usage: input/output tokens summed over the turns, from the API's usage fields.
        messages: the conversation in the dialect's wire format (system text aside).
        tool_calls: every host tool call (from scripts and direct calls), in order.
        steps: every call the model asked for and the reply it got.
        stopped_by: ``"answer"``, or the cap that forced the final turn.
    """

    answer: str
    turns: int
    usage: Usage
    messages: list[dict[str, Any]]
    tool_calls: list[ToolCallRecordLike] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    stopped_by: StopReason = "answer"
