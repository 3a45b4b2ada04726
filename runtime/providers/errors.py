"""Exceptions for failures of the model endpoint itself.

These are programmer-facing (they end :meth:`Agent.run`); errors made by the
model's scripts or tool calls are data sent back to the model instead.

Hierarchy::

    ToolscriptError
    └── ModelEndpointError        the model endpoint failed
        ├── ModelRequestError     400/404/422...: the request was refused; fix the request
        ├── ModelAuthError        401/403: missing or wrong API key, no access to the model
        ├── ModelUnavailableError 5xx/429/timeouts that outlasted the retries
        └── ModelResponseError    the endpoint answered with something unparsable
"""

from __future__ import annotations

from toolscript.errors import ToolscriptError

__all__ = [
    "ModelAuthError",
    "ModelEndpointError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelUnavailableError",
]


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
