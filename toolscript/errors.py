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
    ├── ApprovalRequired          an approval hook stopped the whole run
    ├── ToolAuthorizationError    a tool's credentials were refused (never retried by the model)
    ├── ModelEndpointError        the model endpoint failed (Agent)
    │   ├── ModelRequestError     400/404/422: the request was refused; fix the request
    │   ├── ModelAuthError        401/403: missing or wrong API key, no access to the model
    │   ├── ModelUnavailableError 5xx/429/timeouts that outlasted the retries
    │   └── ModelResponseError    the endpoint answered with something unparsable
    ├── AgentOutputError          no valid structured answer (output_type) within the turns
    └── BackendError              the sandbox backend failed
        ├── BackendUnavailable    e.g. no Docker daemon; the message says how to fix it
        ├── ImageError            the sandbox image is missing or speaks another protocol
        ├── SandboxStartError     the sandbox process or container did not start
        ├── ProtocolError         the sandbox sent something that is not the protocol
        └── IsolationUnavailable  a wall named in require_isolation is missing (fail closed)

Warnings (``warnings.warn``), for definitions that work but are probably wrong::

    DependencyParameterWarning    a tool parameter looks like a host object (inject it)
    PolicyWarning                 a policy rule or budget names no registered tool
"""

from __future__ import annotations

__all__ = [
    "AgentOutputError",
    "ApprovalRequired",
    "BackendError",
    "BackendUnavailable",
    "ConfigurationError",
    "DependencyParameterWarning",
    "ImageError",
    "IsolationUnavailable",
    "ModelAuthError",
    "ModelEndpointError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelUnavailableError",
    "PolicyWarning",
    "ProtocolError",
    "SandboxStartError",
    "SchemaError",
    "ToolAuthorizationError",
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


class ToolAuthorizationError(ToolscriptError):
    """Raise from a tool when its credentials are refused: the run stops and the
    programmer gets this exception (the model cannot fix credentials)."""


class ModelEndpointError(ToolscriptError):
    """The model endpoint failed; ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None, provider: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.provider = provider


class ModelRequestError(ModelEndpointError, ValueError):
    """The endpoint refused the request (HTTP 400, 404, 422 ...); retrying will not help."""


class ModelAuthError(ModelEndpointError):
    """The endpoint rejected the credentials (HTTP 401/403)."""


class ModelUnavailableError(ModelEndpointError):
    """Server errors, rate limits or timeouts persisted through every retry."""


class ModelResponseError(ModelEndpointError):
    """The endpoint's answer could not be parsed in the expected dialect."""


class AgentOutputError(ToolscriptError):
    """The model gave no valid structured answer (``output_type``) within the run's
    turn budget; ``result`` is the run (its messages, steps and usage)."""

    def __init__(self, message: str, result: object = None) -> None:
        super().__init__(message)
        self.result = result


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


class IsolationUnavailable(BackendError):
    """An OS wall the deployment requires (``require_isolation``) is missing, so
    nothing runs; ``missing`` names the walls and the message gives each reason."""

    def __init__(self, message: str, *, missing: list[str] | None = None) -> None:
        super().__init__(message)
        self.missing = list(missing or [])


class DependencyParameterWarning(UserWarning):
    """A tool parameter looks like an object the host holds (an account, an inbox,
    a client) rather than a value a model sends; the message names the fix
    (``inject=`` or ``Injected[T]``)."""


class PolicyWarning(UserWarning):
    """A policy rule or budget names a tool the runtime does not have (it can never
    apply there); the message names close matches. A name that differs from a
    registered tool's only in case, look-alike characters or ``-``/``_`` is a
    ``ConfigurationError`` instead: that rule was meant for the tool and would
    silently never match it."""
