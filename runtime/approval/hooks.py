"""Approval: the hook asked before every tool call, and the default policy.

The rule: the approver sees the final arguments, and nothing runs that it
did not see. The dispatcher validates a call, converts its arguments and
fills in defaults (:meth:`Tool.bind <toolscript.tools.Tool.bind>`) *before*
asking; the hook gets those final arguments as JSON data in
:attr:`ToolCallRequest.args` (its own copy, in parameter order), the values
the host injects in :attr:`ToolCallRequest.injected`, and the tool then runs
with exactly the values that were shown.

An approval hook is any callable taking a :class:`ToolCallRequest` and
returning ``bool`` or a :class:`Decision`. Without a hook, registered tools
are allowed and tools marked ``requires_approval`` are denied. A hook that
raises denies the call (fail closed) unless it raises
:class:`~toolscript.errors.ApprovalRequired`, which stops the whole run and
reaches the programmer.

The named modes (``--approve``, profiles, batch jobs), from the most to the
least permissive; each allows a subset of what the one before it allows:

* ``allow``: every call;
* ``default``: every call except calls of tools marked ``requires_approval``;
* ``ask``: read-only calls of tools not marked ``requires_approval`` without
  asking; every other call is asked at the terminal;
* ``defer``: read-only calls of tools not marked ``requires_approval``;
  every other call waits for a person: the run pauses there
  (:meth:`Decision.defer`) and resumes once decided (``toolscript approvals``);
* ``deny``: read-only calls of tools not marked ``requires_approval``;
  everything else is denied.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from toolscript.errors import ApprovalRequired, ConfigurationError


@dataclass(frozen=True)
class Decision:
    """An approval decision with the reason recorded in the audit trail."""

    approved: bool
    reason: str = ""
    deferred: bool = False
    """The decision is put off (:meth:`defer`): the run pauses at this call."""

    @classmethod
    def allow(cls, reason: str = "") -> Decision:
        """Approve the call."""
        return cls(True, reason)

    @classmethod
    def deny(cls, reason: str = "") -> Decision:
        """Refuse the call; the reason reaches the script."""
        return cls(False, reason)

    @classmethod
    def defer(cls, reason: str = "") -> Decision:
        """Decide later: the run stops at this call and returns ``status == "paused"``
        with the call in ``RunResult.pending`` and a signed ``continuation``;
        :meth:`Runtime.resume <toolscript.Runtime.resume>` continues it once a
        person has decided (see :mod:`toolscript.runtime.durable`)."""
        return cls(False, reason, deferred=True)

    def __bool__(self) -> bool:
        return self.approved


_NOTHING: Mapping[str, Any] = MappingProxyType({})

MODES = ("allow", "default", "ask", "defer", "deny")
"""The named approval modes, from the most to the least permissive."""


@dataclass(frozen=True)
class ToolCallRequest:
    """What an approval hook sees: the tool, its final arguments and context.

    Attributes:
        tool: the tool's name.
        args: the final arguments as JSON data, in the tool's parameter order:
            validated, converted (pydantic normalisation included) and with
            the defaults of omitted parameters filled in; exactly what the
            tool runs with. The hook's own copy: changing it changes nothing.
            For a two-phase commit: ``{"plan_id", "plan"}``.
        read_only: the tool is marked read-only.
        requires_approval: the tool is marked ``requires_approval``.
        call_id: the call's id (as in its record).
        run_id: the run's id (``<session>-<n>``; ``<session>-direct`` for
            direct calls).
        session_id: the session's id.
        source: ``"script"`` or ``"direct"`` (a classic function call).
        injected: values the host adds from its context (``Injected[T]``),
            by parameter name; ``"[redacted]"`` for ``Inject(redact=True)``.
        script_sha256: SHA-256 (hex) of the text of the script making the
            call; ``None`` for direct calls.
        agent_run_id: the id of the ``Agent.run()`` the call belongs to, if any.
        runtime_id: the id of the runtime (one per :class:`~toolscript.Runtime`).
        untrusted: provenance labels on with ``Provenance(ask=True)`` (issue 27):
            the arguments the flow policy protects that depend on untrusted
            data, each with the tool results it came from; empty otherwise.
    """

    tool: str
    args: dict[str, Any]
    read_only: bool
    requires_approval: bool
    call_id: str
    run_id: str
    session_id: str
    source: str = "script"
    injected: Mapping[str, Any] = field(default_factory=lambda: _NOTHING)
    script_sha256: str | None = None
    agent_run_id: str | None = None
    runtime_id: str = ""
    untrusted: Mapping[str, list[str]] = field(default_factory=lambda: _NOTHING)

    @property
    def name(self) -> str:
        """Alias of ``tool``."""
        return self.tool


ApprovalHook = Callable[[ToolCallRequest], "bool | Decision"]


def decide(hook: ApprovalHook | None, request: ToolCallRequest) -> tuple[Decision, str]:
    """Ask the hook (or the default policy); return the decision and who made it."""
    if hook is None:
        if request.requires_approval:
            return (
                Decision.deny(
                    f"{request.tool} requires approval and no approval hook is configured"
                ),
                "policy",
            )
        return Decision.allow(), "policy"
    try:
        answer: Any = hook(request)
    except ApprovalRequired:
        raise
    except Exception as exc:  # fail closed: a broken hook denies
        return Decision.deny(f"the approval hook failed: {type(exc).__name__}: {exc}"), "hook"
    if isinstance(answer, Decision):
        return answer, "hook"
    if isinstance(answer, bool):
        return Decision(answer), "hook"
    return (
        Decision.deny(f"the approval hook returned {type(answer).__name__}, not bool or Decision"),
        "hook",
    )


def allow_all(request: ToolCallRequest) -> bool:
    """A hook that approves every call (for trusted, local use)."""
    return True


def deny_all(request: ToolCallRequest) -> Decision:
    """A hook that allows only read-only calls of tools not marked ``requires_approval``."""
    if request.requires_approval:
        return Decision.deny(f"{request.tool} requires approval and --approve deny allows no "
                             "such call")
    if request.read_only:
        return Decision.allow("read-only")
    return Decision.deny("write calls are denied by policy")


def defer_all(request: ToolCallRequest) -> Decision:
    """A hook that allows what :func:`deny_all` allows and defers every other call to a
    person (the run pauses at it; see :mod:`toolscript.runtime.durable`)."""
    if request.read_only and not request.requires_approval:
        return Decision.allow("read-only")
    why = "requires approval" if request.requires_approval else "is not read-only"
    return Decision.defer(f"{request.tool} {why}")


def check_hook(hook: Any) -> ApprovalHook | None:
    """``hook`` if it can be an approval hook (a callable or ``None``).

    Raises:
        ConfigurationError: anything else.
    """
    if hook is not None and not callable(hook):
        raise ConfigurationError(
            f"approve must be a callable taking a ToolCallRequest (or None), got "
            f"{type(hook).__name__}")
    return hook  # type: ignore[no-any-return]


def named_policy(name: str) -> ApprovalHook | None:
    """Resolve the named modes ``allow``, ``default``, ``defer`` and ``deny`` (``ask`` needs a
    terminal: :class:`~toolscript.runtime.approval.prompt.TerminalApproval`)."""
    if name == "allow":
        return allow_all
    if name == "deny":
        return deny_all
    if name == "defer":
        return defer_all
    if name == "default":
        return None
    raise ConfigurationError(
        f"unknown approval policy {name!r}; use allow, ask, defer, deny or default")
