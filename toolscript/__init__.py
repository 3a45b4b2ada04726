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
        ApprovalRequired,
        BackendError,
        BackendUnavailable,
        ConfigurationError,
        ImageError,
        ProtocolError,
        SandboxStartError,
        SchemaError,
        ToolDefinitionError,
        ToolLoadError,
        ToolscriptError,
    )
    from toolscript.runtime.approval import Decision, ToolCallRequest
    from toolscript.runtime.limits import Limits
    from toolscript.runtime.results import RunError, RunResult, ToolCallRecord
    from toolscript.runtime.runtime import Runtime
    from toolscript.runtime.session import Session
    from toolscript.tools import Tool, ToolRegistry, tool

# Imported lazily so that ``toolscript.sandbox`` (which runs inside the
# sandbox) can be imported without loading the host runtime.
_EXPORTS = {
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
    "Decision": "toolscript.runtime.approval",
    "ToolCallRequest": "toolscript.runtime.approval",
    "Limits": "toolscript.runtime.limits",
    "RunError": "toolscript.runtime.results",
    "RunResult": "toolscript.runtime.results",
    "ToolCallRecord": "toolscript.runtime.results",
    "Runtime": "toolscript.runtime.runtime",
    "Session": "toolscript.runtime.session",
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
    "ApprovalRequired",
    "BackendError",
    "BackendUnavailable",
    "ConfigurationError",
    "Decision",
    "ImageError",
    "Limits",
    "ProtocolError",
    "RunError",
    "RunResult",
    "Runtime",
    "SandboxStartError",
    "SchemaError",
    "Session",
    "Tool",
    "ToolCallRecord",
    "ToolCallRequest",
    "ToolDefinitionError",
    "ToolLoadError",
    "ToolRegistry",
    "ToolscriptError",
    "tool",
]

__version__ = "0.1.0"
