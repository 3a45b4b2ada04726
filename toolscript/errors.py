"""The exceptions toolscript raises to the programmer.

Errors made by a *script* or a *tool* are data (a :class:`RunResult` with
``ok=False`` and an ``error``); the exceptions below are raised only for
problems the programmer must fix: bad configuration, bad tool definitions,
unavailable infrastructure.

Hierarchy::

    ToolscriptError
    ├── ConfigurationError        invalid Runtime / Limits / CLI arguments
    ├── ToolDefinitionError       a tool cannot be registered (bad name, duplicate,
    │   └── SchemaError           an annotation JSON Schema cannot express)
    ├── ToolLoadError             a tools module or file could not be loaded
    ├── ApprovalRequired          an approval hook refused with "raise" semantics
    └── BackendError              the sandbox backend failed
        ├── BackendUnavailable    e.g. no Docker daemon; the message says how to fix it
        ├── ImageError            the sandbox image is missing or speaks another protocol
        ├── SandboxStartError     the sandbox process or container did not start
        └── ProtocolError         the sandbox sent something that is not the protocol
"""

from __future__ import annotations

__all__ = [
    "ApprovalRequired",
    "BackendError",
    "BackendUnavailable",
    "ConfigurationError",
    "ImageError",
    "ProtocolError",
    "SandboxStartError",
    "SchemaError",
    "ToolDefinitionError",
    "ToolLoadError",
    "ToolscriptError",
]


class ToolscriptError(Exception):
    """Base class of every exception toolscript raises to the programmer."""


class ConfigurationError(ToolscriptError, ValueError):
    """An argument or configuration value is invalid; the message names it."""


class ToolDefinitionError(ToolscriptError, ValueError):
    """A tool cannot be registered (bad name, duplicate, unsupported signature)."""


class SchemaError(ToolDefinitionError):
    """A type annotation cannot be expressed as JSON Schema."""


class ToolLoadError(ToolscriptError):
    """A tools module or file could not be imported or contained no tools."""


class ApprovalRequired(ToolscriptError):
    """Raised by an approval hook to stop the whole run instead of denying one call."""


class BackendError(ToolscriptError):
    """The sandbox backend failed (infrastructure, not the script)."""


class BackendUnavailable(BackendError):
    """The backend cannot be reached, e.g. no Docker daemon is running."""


class ImageError(BackendError):
    """The sandbox image is missing or was built for another protocol version."""


class SandboxStartError(BackendError):
    """The sandbox process or container did not start."""


class ProtocolError(BackendError):
    """The sandbox sent a message that does not follow the wire protocol."""
