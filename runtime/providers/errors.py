"""Exceptions for failures of the model endpoint itself (defined in toolscript.errors).

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

from toolscript.errors import (
    ModelAuthError,
    ModelEndpointError,
    ModelRequestError,
    ModelResponseError,
    ModelUnavailableError,
)

__all__ = [
    "ModelAuthError",
    "ModelEndpointError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelUnavailableError",
]


