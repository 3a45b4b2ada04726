"""toolscript: programmatic tool calling in a restricted, sandboxed Python.

A model writes a short Python script that chains whitelisted tools; the script
runs in a default-deny restricted interpreter inside a sandbox process or
container; every tool call crosses back to the host, where it is validated,
approved, executed and recorded. See README.md for a tour.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolscript.errors import (
        AgentOutputError,
        ApprovalRequired,
        BackendError,
        BackendUnavailable,
        ConfigurationError,
        ImageError,
        ModelAuthError,
        ModelEndpointError,
        ModelRequestError,
        ModelResponseError,
        ModelUnavailableError,
        ProtocolError,
        SandboxStartError,
        SchemaError,
        ToolAuthorizationError,
        ToolDefinitionError,
        ToolLoadError,
        ToolscriptError,
    )
    from toolscript.runtime.agent import Agent, AgentResult
    from toolscript.runtime.approval.hooks import Decision, ToolCallRequest
    from toolscript.runtime.audit.log import AuditLog
    from toolscript.runtime.events import (
        EventHooks,
        ModelCallEvent,
        RunEndEvent,
        RunStartEvent,
        ToolCallEvent,
    )
    from toolscript.runtime.limits import Limits
    from toolscript.runtime.results import RunError, RunResult, ToolCallRecord
    from toolscript.runtime.runtime import Runtime
    from toolscript.runtime.session import Session
    from toolscript.tools import (
        Field,
        IdempotencyKey,
        Inject,
        Injected,
        Tool,
        ToolRegistry,
        lint_tools,
        tool,
        two_phase,
    )
    from toolscript.tools.resilience import ToolRateLimited, TransientToolError, resilient

# Imported lazily so that ``toolscript.sandbox`` (which runs inside the
# sandbox) can be imported without loading the host runtime.
_EXPORTS = {
    "AgentOutputError": "toolscript.errors",
    "ApprovalRequired": "toolscript.errors",
    "BackendError": "toolscript.errors",
    "BackendUnavailable": "toolscript.errors",
    "ConfigurationError": "toolscript.errors",
    "ImageError": "toolscript.errors",
    "ProtocolError": "toolscript.errors",
    "SandboxStartError": "toolscript.errors",
    "SchemaError": "toolscript.errors",
    "ToolDefinitionError": "toolscript.errors",
    "ToolLoadError": "toolscript.errors",
    "ToolscriptError": "toolscript.errors",
    "AuditLog": "toolscript.runtime.audit.log",
    "EventHooks": "toolscript.runtime.events",
    "ModelCallEvent": "toolscript.runtime.events",
    "RunEndEvent": "toolscript.runtime.events",
    "RunStartEvent": "toolscript.runtime.events",
    "ToolCallEvent": "toolscript.runtime.events",
    "Decision": "toolscript.runtime.approval.hooks",
    "ToolCallRequest": "toolscript.runtime.approval.hooks",
    "Limits": "toolscript.runtime.limits",
    "RunError": "toolscript.runtime.results",
    "RunResult": "toolscript.runtime.results",
    "ToolCallRecord": "toolscript.runtime.results",
    "Runtime": "toolscript.runtime.runtime",
    "Session": "toolscript.runtime.session",
    "Agent": "toolscript.runtime.agent",
    "AgentResult": "toolscript.runtime.agent",
    "ModelAuthError": "toolscript.errors",
    "ModelEndpointError": "toolscript.errors",
    "ModelRequestError": "toolscript.errors",
    "ModelResponseError": "toolscript.errors",
    "ModelUnavailableError": "toolscript.errors",
    "ToolAuthorizationError": "toolscript.errors",
    "TransientToolError": "toolscript.tools.resilience",
    "ToolRateLimited": "toolscript.tools.resilience",
    "resilient": "toolscript.tools.resilience",
    "Field": "toolscript.tools",
    "IdempotencyKey": "toolscript.tools",
    "Inject": "toolscript.tools",
    "Injected": "toolscript.tools",
    "lint_tools": "toolscript.tools",
    "two_phase": "toolscript.tools",
    "Tool": "toolscript.tools",
    "ToolRegistry": "toolscript.tools",
    "tool": "toolscript.tools",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolscript' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Agent",
    "AgentOutputError",
    "AgentResult",
    "ApprovalRequired",
    "AuditLog",
    "BackendError",
    "BackendUnavailable",
    "ConfigurationError",
    "Decision",
    "EventHooks",
    "Field",
    "IdempotencyKey",
    "ImageError",
    "Inject",
    "Injected",
    "Limits",
    "ModelAuthError",
    "ModelCallEvent",
    "ModelEndpointError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelUnavailableError",
    "ProtocolError",
    "RunEndEvent",
    "RunError",
    "RunResult",
    "RunStartEvent",
    "Runtime",
    "SandboxStartError",
    "SchemaError",
    "Session",
    "Tool",
    "ToolAuthorizationError",
    "ToolCallEvent",
    "ToolCallRecord",
    "ToolCallRequest",
    "ToolDefinitionError",
    "ToolLoadError",
    "ToolRateLimited",
    "ToolRegistry",
    "ToolscriptError",
    "TransientToolError",
    "lint_tools",
    "resilient",
    "tool",
    "two_phase",
]

__version__ = "0.1.0"
