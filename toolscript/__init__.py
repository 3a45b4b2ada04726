"""toolscript: programmatic tool calling in a restricted, sandboxed Python.

A model writes a short Python script that chains whitelisted tools; the script
runs in a default-deny restricted interpreter inside a sandbox process or
container; every tool call crosses back to the host, where it is validated,
approved, executed and recorded. See README.md for a tour.

The public names are listed once, in ``_EXPORTS`` (module → names), and
imported lazily (PEP 562) so that ``toolscript.sandbox``, which runs inside the
sandbox, imports without the host runtime. The ``TYPE_CHECKING`` block below
says the same to type checkers; ``tests/core/test_core_exports.py`` fails when
the two differ and prints the block to paste.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, tuple[str, ...]] = {
    "toolscript.errors": (
        "AgentOutputError", "ApprovalRequired", "BackendError", "BackendUnavailable",
        "ConfigurationError", "ContinuationError", "ImageError", "ModelAuthError",
        "ModelEndpointError", "ModelRequestError", "ModelResponseError", "ModelUnavailableError",
        "ProtocolError",
        "SandboxStartError", "SchemaError", "ToolAuthorizationError", "ToolDefinitionError",
        "ToolLoadError", "ToolRateLimited", "ToolscriptError", "TransientToolError",
    ),
    "toolscript.runtime.agent": (
        "Agent", "AgentLimits", "AgentResult", "Endpoint", "ModelSettings",
    ),
    "toolscript.runtime.approval.hooks": ("Decision", "ToolCallRequest"),
    "toolscript.runtime.audit.log": ("AuditLog",),
    "toolscript.runtime.durable.pending": ("PendingCall",),
    "toolscript.runtime.events": (
        "EventHooks", "ModelCallEvent", "RunEndEvent", "RunStartEvent", "ToolCallEvent",
    ),
    "toolscript.runtime.limits": ("Limits",),
    "toolscript.runtime.results": ("RunError", "RunResult", "ToolCallRecord"),
    "toolscript.runtime.runtime": ("Runtime",),
    "toolscript.runtime.session": ("Session",),
    "toolscript.tools": (
        "Field", "IdempotencyKey", "Inject", "Injected", "Tool", "ToolRegistry", "lint_tools",
        "tool", "two_phase",
    ),
    "toolscript.tools.resilience": ("resilient",),
}

_MODULE_OF: dict[str, str] = {
    name: module for module, names in _EXPORTS.items() for name in names
}

__all__ = sorted(_MODULE_OF)

if TYPE_CHECKING:  # the same names as _EXPORTS, for type checkers (checked by a test)
    from toolscript.errors import (  # noqa: I001 (one `as` list per module)
        AgentOutputError as AgentOutputError,
        ApprovalRequired as ApprovalRequired,
        BackendError as BackendError,
        BackendUnavailable as BackendUnavailable,
        ConfigurationError as ConfigurationError,
        ContinuationError as ContinuationError,
        ImageError as ImageError,
        ModelAuthError as ModelAuthError,
        ModelEndpointError as ModelEndpointError,
        ModelRequestError as ModelRequestError,
        ModelResponseError as ModelResponseError,
        ModelUnavailableError as ModelUnavailableError,
        ProtocolError as ProtocolError,
        SandboxStartError as SandboxStartError,
        SchemaError as SchemaError,
        ToolAuthorizationError as ToolAuthorizationError,
        ToolDefinitionError as ToolDefinitionError,
        ToolLoadError as ToolLoadError,
        ToolRateLimited as ToolRateLimited,
        ToolscriptError as ToolscriptError,
        TransientToolError as TransientToolError,
    )
    from toolscript.runtime.agent import (
        Agent as Agent,
        AgentLimits as AgentLimits,
        AgentResult as AgentResult,
        Endpoint as Endpoint,
        ModelSettings as ModelSettings,
    )
    from toolscript.runtime.approval.hooks import (
        Decision as Decision,
        ToolCallRequest as ToolCallRequest,
    )
    from toolscript.runtime.audit.log import AuditLog as AuditLog
    from toolscript.runtime.durable.pending import PendingCall as PendingCall
    from toolscript.runtime.events import (
        EventHooks as EventHooks,
        ModelCallEvent as ModelCallEvent,
        RunEndEvent as RunEndEvent,
        RunStartEvent as RunStartEvent,
        ToolCallEvent as ToolCallEvent,
    )
    from toolscript.runtime.limits import Limits as Limits
    from toolscript.runtime.results import (
        RunError as RunError,
        RunResult as RunResult,
        ToolCallRecord as ToolCallRecord,
    )
    from toolscript.runtime.runtime import Runtime as Runtime
    from toolscript.runtime.session import Session as Session
    from toolscript.tools import (
        Field as Field,
        IdempotencyKey as IdempotencyKey,
        Inject as Inject,
        Injected as Injected,
        Tool as Tool,
        ToolRegistry as ToolRegistry,
        lint_tools as lint_tools,
        tool as tool,
        two_phase as two_phase,
    )
    from toolscript.tools.resilience import resilient as resilient


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'toolscript' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)


__version__ = "0.1.0"
