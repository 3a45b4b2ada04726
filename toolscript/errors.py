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
    ├── ContinuationError         a paused run's continuation was refused (tampered,
    │                             expired, already resumed, another session/catalog)
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

Raised *by tools* (the runtime reads them; the model sees an error type)::

    TransientToolError            a failure worth retrying (``resilient``, ``ToolRetry``)
    ToolRateLimited               the upstream rate-limited the tool (429)
    MCPToolError                  an MCP server answered a call with ``isError``
    HTTPToolError                 an OpenAPI endpoint answered with an HTTP error status

Raised by the library to code that calls it directly::

    ArgumentError                 a tool's arguments do not match its schema
                                  (``Tool.validate``; a script gets ``invalid_arguments``)
    SandboxDied                   a sandbox ended while a message was expected
                                  (the backend interface: ``SandboxHandle.recv``)

The exceptions a *script* catches (``ToolError`` and its subclasses) are defined
in :mod:`toolscript.sandbox.toolcalls`, which runs inside the sandbox and cannot
import this module; they are re-exported here. Every other exception class of
the package is internal: its name starts with ``_`` or its docstring with
"Internal:".

Warnings (``warnings.warn``), for definitions that work but are probably wrong::

    DependencyParameterWarning    a tool parameter looks like a host object (inject it)
    PolicyWarning                 a policy rule or budget names no registered tool
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolscript.sandbox.toolcalls import (
    ToolArgumentError,
    ToolDenied,
    ToolError,
    ToolNotFound,
    ToolTimeout,
)

if TYPE_CHECKING:
    from toolscript.tools.validation import Problem

__all__ = [
    "AgentOutputError",
    "ApprovalRequired",
    "ArgumentError",
    "BackendError",
    "BackendUnavailable",
    "ConfigurationError",
    "ContinuationError",
    "DependencyParameterWarning",
    "HTTPToolError",
    "ImageError",
    "IsolationUnavailable",
    "MCPToolError",
    "ModelAuthError",
    "ModelEndpointError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelUnavailableError",
    "PolicyWarning",
    "ProtocolError",
    "SandboxDied",
    "SandboxStartError",
    "SchemaError",
    "ToolArgumentError",
    "ToolAuthorizationError",
    "ToolDefinitionError",
    "ToolDenied",
    "ToolError",
    "ToolLoadError",
    "ToolNotFound",
    "ToolRateLimited",
    "ToolTimeout",
    "ToolscriptError",
    "TransientToolError",
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


class ContinuationError(ToolscriptError):
    """:meth:`Runtime.resume <toolscript.Runtime.resume>` refused a continuation.

    The message says why: its signature does not match (tampered, or another
    key), it expired, it was already resumed, or it belongs to another session,
    tool catalog, approval configuration or injected identity; or a decision is
    missing for one of its pending calls. ``reason`` is a stable word for it:
    ``tampered``, ``expired``, ``resumed``, ``session``, ``catalog``,
    ``approval``, ``identity``, ``decision``, ``key`` or ``journal``.
    """

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


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


# --- raised by tools ------------------------------------------------------------------


class TransientToolError(Exception):
    """Raise from a tool for a failure worth retrying (a flaky upstream, a 503)."""


class ToolRateLimited(Exception):
    """Raise from a tool when its upstream rate-limits it (HTTP 429).

    Args:
        message: what happened.
        retry_after_s: the wait the upstream asked for, if it said.
    """

    def __init__(self, message: str = "rate limited", retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class MCPToolError(Exception):
    """The MCP server answered a tool call with ``isError``."""


HTTP_ERROR_BODY_CHARS = 2000
"""How much of an HTTP error body :class:`HTTPToolError`'s message keeps."""


class HTTPToolError(Exception):
    """The endpoint of an OpenAPI tool answered with an HTTP error status (or a
    refused redirect); ``status`` and ``body`` are the answer's."""

    def __init__(self, status: int, reason: str, body: str) -> None:
        super().__init__(f"HTTP {status} {reason}: {body[:HTTP_ERROR_BODY_CHARS]}".rstrip(": "))
        self.status = status
        self.body = body


# --- raised to code that calls the library directly ---------------------------------


class ArgumentError(Exception):
    """The arguments of a tool call do not match the tool's schema.

    Attributes:
        tool: the tool's name.
        problems: every problem found, most actionable first.
        message: one line naming the tool and each problem, for the model.
    """

    def __init__(self, tool: str, problems: Sequence[Problem]) -> None:
        """Build the error for ``tool`` from a non-empty list of problems."""
        self.tool = tool
        self.problems = list(problems)
        self.message = f"{tool}(): " + "; ".join(str(p) for p in self.problems)
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle support (exceptions with custom __init__ need it)."""
        return (type(self), (self.tool, self.problems))


class SandboxDied(Exception):
    """The sandbox process or container ended while a message was expected.

    Part of the backend interface: ``SandboxHandle.recv`` raises it; ``reason`` is
    a short stable cause when one is known, ``detail`` what was seen."""

    def __init__(self, reason: str | None = None, detail: str = "") -> None:
        super().__init__(detail or reason or "sandbox died")
        self.reason = reason
        self.detail = detail


# --- warnings -------------------------------------------------------------------------


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
