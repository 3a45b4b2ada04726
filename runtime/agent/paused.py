"""A paused agent run: :class:`AgentState`, everything needed to continue it.

When a call of the model's turn waits for a person (an approval hook answered
``Decision.defer``: a script paused, or a classic tool call was deferred),
the agent run stops with ``AgentResult.status == "paused"``. Its ``state`` is
an :class:`AgentState`: the conversation so far (the assistant turn that made
the calls included, in the provider's message format), the calls of that
turn already answered, the paused ones (each with its pending calls and the
signed continuation the core resumes it with), the calls not run yet, usage
and turn count. It is JSON data (:meth:`AgentState.to_json`): store it
anywhere, and ``agent.resume(state, decisions)`` continues the conversation
in any process with the same tools and the continuation key.

Nothing in the state is trusted for authorisation: the continuations are
signed and bound to their script, tools, approval configuration and session
by the core (:mod:`toolscript.runtime.durable`); the conversation is what a
``message_history`` would be.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from toolscript.errors import ConfigurationError

from ..providers.base import Message, ToolCall, Usage

__all__ = ["STATE_VERSION", "AgentState", "PausedStep"]

STATE_VERSION = 1


@dataclass
class PausedStep:
    """One call of the turn that waits for a person.

    Attributes:
        call_id / name / arguments: the model's call (``run_script`` and its
            code, or a tool and its arguments).
        kind: ``"script"`` (a ``run_script`` call) or ``"classic"`` (a direct tool
            call, re-issued as a one-call script so that it pauses durably).
        continuation: what the core resumes it with.
        pending: the pending calls (``PendingCall.to_dict()``).
        session_id: the session the paused run belongs to.
    """

    call_id: str
    name: str
    arguments: Any
    kind: str
    continuation: str
    pending: list[dict[str, Any]]
    session_id: str


@dataclass
class AgentState:
    """The serializable state of a paused agent run (see the module docs).

    Attributes:
        provider: the dialect whose message format ``messages`` use.
        model: the model requested.
        mode: the agent's mode.
        prompt: the prompt the run started with.
        messages: the conversation so far, the paused turn included.
        history_length: how many of ``messages`` came from ``message_history``.
        turn_no / usage: turns made and tokens used so far.
        turn_text / turn_calls / turn_history: the assistant turn whose calls
            are being answered.
        done: the calls of that turn already answered (``call_id``, ``name``,
            ``arguments``, ``executed``, ``ok``, ``output``).
        paused: the calls that wait (:class:`PausedStep`).
        remaining: the calls of the turn after the paused ones, not run yet.
        earlier_steps: every step of the run before this turn (as ``done``).
    """

    provider: str
    model: str
    mode: str
    prompt: str
    messages: list[Message]
    history_length: int
    turn_no: int
    usage: dict[str, int]
    turn_text: str
    turn_calls: list[dict[str, Any]]
    turn_history: list[Message]
    done: list[dict[str, Any]]
    paused: list[PausedStep]
    remaining: list[dict[str, Any]]
    earlier_steps: list[dict[str, Any]] = field(default_factory=list)
    version: int = STATE_VERSION

    # --- serialization ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON data."""
        return asdict(self)

    def to_json(self) -> str:
        """A JSON string (``AgentState.from_json`` reads it back)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentState:
        """The inverse of :meth:`to_dict`.

        Raises:
            ConfigurationError: not the state of a paused agent run (or of another version).
        """
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            raise ConfigurationError(
                "not the state of a paused agent run (AgentResult.state, version "
                f"{STATE_VERSION})")
        try:
            values = dict(data)
            values["paused"] = [PausedStep(**p) for p in data["paused"]]
            return cls(**values)
        except (KeyError, TypeError) as exc:
            raise ConfigurationError(f"the agent state is incomplete: {exc}") from None

    @classmethod
    def from_json(cls, text: str) -> AgentState:
        """Read :meth:`to_json` output."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigurationError(f"the agent state is not JSON: {exc}") from None
        return cls.from_dict(data)

    @classmethod
    def coerce(cls, state: AgentState | dict[str, Any] | str) -> AgentState:
        """An :class:`AgentState` from itself, its dict or its JSON."""
        if isinstance(state, AgentState):
            return state
        if isinstance(state, str):
            return cls.from_json(state)
        return cls.from_dict(state)

    # --- pieces -------------------------------------------------------------------
    @property
    def pending_ids(self) -> list[str]:
        """The ids of every pending call (the keys ``decisions`` needs)."""
        return [str(p["id"]) for step in self.paused for p in step.pending]

    def usage_object(self) -> Usage:
        """``usage`` as a :class:`Usage`."""
        return Usage(**{k: int(v) for k, v in self.usage.items()})

    @staticmethod
    def call_dict(call: ToolCall) -> dict[str, Any]:
        """A model call as JSON data."""
        return {"id": call.id, "name": call.name, "arguments": call.arguments}

    @staticmethod
    def call_of(data: dict[str, Any]) -> ToolCall:
        """The inverse of :meth:`call_dict`."""
        return ToolCall(str(data["id"]), str(data["name"]), data["arguments"])
