"""The outcome of :meth:`Agent.run`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..providers.base import Usage
from .executor import Step
from .paused import AgentState
from .protocols import ToolCallRecordLike

__all__ = ["AgentResult", "StopReason"]

#: Why the loop ended: the model answered, or a cap forced a final answer.
StopReason = Literal["answer", "max_turns", "token_budget"]


@dataclass
class AgentResult:
    """What one agent run produced.

    Attributes:
        answer: the model's final text (with ``output_type``: the answer as JSON).
        turns: model requests made (the final-answer turn included).
        usage: input/output tokens summed over the turns, from the API's usage fields.
        messages: the whole conversation in the provider's message format (system
            text aside): the ``message_history`` the run continued, then this run's.
        tool_calls: every host tool call (from scripts and direct calls), in order.
        steps: every call the model asked for and the reply it got.
        stopped_by: ``"answer"``, or the cap that forced the final turn.
        output: the checked structured answer (``output_type``), else ``None``.
        provider: the name of the provider whose message format ``messages`` use.
        history_length: how many of ``messages`` came from ``message_history``.
        status: ``"done"``, or ``"paused"``: a call waits for a person (an approval
            hook answered ``Decision.defer``); ``answer`` is empty then.
        pending: the calls that wait (:class:`~toolscript.runtime.durable.PendingCall`),
            when paused.
        state: what ``agent.resume(state, decisions)`` continues (JSON data:
            :meth:`AgentState.to_json <toolscript.runtime.agent.paused.AgentState.to_json>`),
            when paused.
    """

    answer: str
    turns: int
    usage: Usage
    messages: list[dict[str, Any]]
    tool_calls: list[ToolCallRecordLike] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    stopped_by: StopReason = "answer"
    output: Any = None
    provider: str = ""
    history_length: int = 0
    status: str = "done"
    pending: list[Any] = field(default_factory=list)
    state: AgentState | None = None

    @property
    def paused(self) -> bool:
        """True when the run waits for a person (see ``state``)."""
        return self.status == "paused"

    def all_messages(self) -> list[dict[str, Any]]:
        """The whole conversation (pass it as ``message_history`` to continue)."""
        return list(self.messages)

    def new_messages(self) -> list[dict[str, Any]]:
        """The messages of this run only (append them to a stored conversation).

        They are JSON data in the provider's format: ``json.dumps`` stores them.
        """
        return list(self.messages[self.history_length:])
