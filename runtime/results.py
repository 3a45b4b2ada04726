"""What a run returns: :class:`RunResult`, :class:`RunError`, :class:`ToolCallRecord`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .durable.pending import PendingCall


def location_text(line: Any, column: Any = None) -> str:
    """`` (line N)``, `` (line N, column C)`` or ``""``: where an error points, as its
    renderings append it. The line has one owner, the error's ``line`` field (and
    ``column`` in its details): no message names it."""
    if not isinstance(line, int) or isinstance(line, bool):
        return ""
    if isinstance(column, int) and not isinstance(column, bool):
        return f" (line {line}, column {column})"
    return f" (line {line})"


@dataclass(frozen=True)
class RunError:
    """Why a run or a tool call failed.

    ``type`` is a stable string (every one is listed in docs/guide/limits.md); ``message`` says
    what happened and, where possible, what to do instead; ``details`` holds
    extra fields such as ``line``, ``column``, ``tool`` or ``exception``.
    """

    type: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def line(self) -> int | None:
        """The script line the error points at, if known."""
        line = self.details.get("line")
        return line if isinstance(line, int) else None

    @classmethod
    def from_message(cls, data: dict[str, Any]) -> RunError:
        """Build from a protocol ``error`` object."""
        if not isinstance(data, dict):  # a compromised sandbox can send anything
            return cls("protocol_error", f"the sandbox sent a malformed error: {data!r:.200}")
        details = {k: v for k, v in data.items() if k not in ("type", "message")}
        return cls(str(data.get("type", "error")), str(data.get("message", "")), details)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"type": self.type, "message": self.message, **self.details}

    @property
    def location(self) -> str:
        """`` (line N)`` (``, column C`` for a syntax error) or ``""``: what a rendering
        of the error appends to its message (see :func:`location_text`)."""
        return location_text(self.details.get("line"), self.details.get("column"))

    def __str__(self) -> str:
        return f"{self.type}: {self.message}{self.location}"


@dataclass(slots=True)
class ToolCallRecord:
    """One attempted tool call, as the host saw it (denied and failed ones too).

    Attributes:
        id: unique within the session (``"c1"``, ``"c2"``, ...).
        name: the tool name the script used.
        args: the arguments as received (JSON data). A run keeps at most
            ``Limits.max_retained_args_bytes`` of arguments in its records;
            past that, arguments over 256 bytes are replaced by
            ``{"omitted": True, "bytes": N, "sha256": ..., "prefix": ...}``
            (their canonical JSON's size, SHA-256 and first 200 characters)
            and ``args_omitted`` is True. The audit hook sees them whole.
        approved: the approval decision, or ``None`` if the call never got
            that far (unknown tool, invalid arguments, budget exhausted).
        decided_by: ``"policy"`` (default rules) or ``"hook"``.
        reason: the reason given with the decision, if any.
        ok: True if the tool ran and returned a value.
        value: what the tool returned (JSON data), when ok.
        error: why the call failed, when not ok.
        duration_s: time from receipt to reply, in seconds.
        started_at: UNIX time of receipt.
        source: ``"script"`` or ``"direct"`` (a classic-mode call).
        replayed: an idempotent call whose key had already run: the stored
            first result was returned and the tool did not act again.
        args_omitted: ``args`` holds a summary, not the arguments (see ``args``).
        injected: the values the host injected into the call (by parameter
            name; ``"[redacted]"`` for ``Inject(redact=True)``), ``None`` for a
            tool without injected parameters. Host-only: kept out of
            :meth:`to_dict`.
        plan: for a two-phase commit call, the plan it carried out, as the
            approver saw it.
    """

    id: str
    name: str
    args: Any
    approved: bool | None = None
    decided_by: str | None = None
    reason: str = ""
    ok: bool = False
    value: Any = None
    error: RunError | None = None
    duration_s: float = 0.0
    started_at: float = 0.0
    source: str = "script"
    replayed: bool = False
    args_omitted: bool = False
    injected: dict[str, Any] | None = field(default=None, repr=False)
    plan: Any = None

    @property
    def duration(self) -> float:
        """Alias of ``duration_s``."""
        return self.duration_s

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        data = asdict(replace(self, injected=None))  # injected values may not be copyable
        data["error"] = self.error.to_dict() if self.error else None
        del data["injected"]
        return data


@dataclass
class RunResult:
    """The outcome of one script run.

    Attributes:
        ok: True if the script ran to the end.
        value: JSON value of the script's final bare expression, else ``None``.
        stdout: what the script printed (capped by ``Limits.max_output_chars``).
        stdout_truncated: True if the output was cut at the cap.
        error: ``None``, or a :class:`RunError` with a stable ``type``.
        tool_calls: one :class:`ToolCallRecord` per attempted call, in order.
        duration_s: wall time of the run, in seconds.
        session_restarted: True if the sandbox had to be killed during this run
            (the next run starts fresh), or had died since the previous run and
            this run started in a fresh one; either way the session's variables
            were lost.
        run_id: the run's id (a resumed run keeps the id of the run it continues).
        status: ``"ok"``, ``"error"`` or ``"paused"`` (an approval was deferred:
            see ``pending`` and ``continuation``); ``ok`` is True exactly when
            ``status == "ok"``.
        pending: the calls a paused run waits on (empty unless paused).
        continuation: the signed, expiring string that resumes a paused run
            (:meth:`Runtime.resume <toolscript.Runtime.resume>`); None unless paused.
    """

    ok: bool
    value: Any = None
    stdout: str = ""
    stdout_truncated: bool = False
    error: RunError | None = None
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    duration_s: float = 0.0
    session_restarted: bool = False
    run_id: str = ""
    status: str = ""
    pending: list[PendingCall] = field(default_factory=list)
    continuation: str | None = None

    def __post_init__(self) -> None:
        if not self.status:
            self.status = "ok" if self.ok else "error"

    @property
    def paused(self) -> bool:
        """True if the run paused on a deferred approval."""
        return self.status == "paused"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (for ``--json`` output and logs)."""
        return {
            "ok": self.ok,
            "value": self.value,
            "stdout": self.stdout,
            "stdout_truncated": self.stdout_truncated,
            "error": self.error.to_dict() if self.error else None,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "duration_s": self.duration_s,
            "session_restarted": self.session_restarted,
            "run_id": self.run_id,
            "status": self.status,
            "pending": [call.to_dict() for call in self.pending],
            "continuation": self.continuation,
        }
