"""Approval: the hook asked before every tool call, and the default policy.

An approval hook is any callable taking a :class:`ToolCallRequest` and
returning ``bool`` or a :class:`Decision`. Without a hook, registered tools
are allowed and tools marked ``requires_approval`` are denied. A hook that
raises denies the call (fail closed) unless it raises
:class:`~toolscript.errors.ApprovalRequired`, which stops the whole run and
reaches the programmer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolscript.errors import ApprovalRequired, ConfigurationError


@dataclass(frozen=True)
class Decision:
    """An approval decision with the reason recorded in the audit trail."""

    approved: bool
    reason: str = ""

    @classmethod
    def allow(cls, reason: str = "") -> Decision:
        """Approve the call."""
        return cls(True, reason)

    @classmethod
    def deny(cls, reason: str = "") -> Decision:
        """Refuse the call; the reason reaches the script."""
        return cls(False, reason)

    def __bool__(self) -> bool:
        return self.approved


@dataclass(frozen=True)
class ToolCallRequest:
    """What an approval hook sees: the tool, its validated arguments and context."""

    tool: str
    args: dict[str, Any]
    read_only: bool
    requires_approval: bool
    call_id: str
    run_id: str
    session_id: str
    source: str = "script"

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
    """A hook that denies every call that is not read-only."""
    if request.read_only:
        return Decision.allow("read-only")
    return Decision.deny("write calls are denied by policy")


def named_policy(name: str) -> ApprovalHook | None:
    """Resolve the CLI's ``--approve allow|deny`` names (``ask`` lives in the CLI)."""
    if name == "allow":
        return allow_all
    if name == "deny":
        return deny_all
    if name == "default":
        return None
    raise ConfigurationError(f"unknown approval policy {name!r}; use allow, ask, deny or default")
