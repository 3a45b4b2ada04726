"""A call a paused run waits on: :class:`PendingCall`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PendingCall:
    """One call of a paused run, waiting for a person's decision.

    Attributes:
        id: stable and unique per pause: ``"<run_id>:<seq>"``; the key of the
            ``decisions`` given to :meth:`Runtime.resume <toolscript.Runtime.resume>`.
        tool: the tool's name.
        arguments: the final, bound arguments (validated, converted, defaults
            filled), exactly as the approver must see them and as the tool will
            run with them.
        caller: ``"script line 7"`` (or ``"script"`` when the line is not known)
            or ``"classic tool call <call_id>"``.
        reason: why the approval was deferred.
        run_id: the paused run.
        seq: the call's position in the run's journal.
    """

    id: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    caller: str = "script"
    reason: str = ""
    run_id: str = ""
    seq: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"id": self.id, "tool": self.tool, "arguments": self.arguments,
                "caller": self.caller, "reason": self.reason, "run_id": self.run_id,
                "seq": self.seq}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PendingCall:
        """The inverse of :meth:`to_dict`."""
        return cls(id=str(data["id"]), tool=str(data["tool"]),
                   arguments=dict(data.get("arguments") or {}),
                   caller=str(data.get("caller", "script")), reason=str(data.get("reason", "")),
                   run_id=str(data.get("run_id", "")), seq=int(data.get("seq", 0)))


def pending_id(run_id: str, seq: int) -> str:
    """The id of the pending call at ``seq`` of ``run_id``."""
    return f"{run_id}:{seq}"
