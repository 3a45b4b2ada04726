"""Retries and rate limits around a tool; moved to :mod:`toolscript.tools.resilience`.

Re-exported here so that existing imports keep working.
"""

from __future__ import annotations

from toolscript.tools.resilience import (
    SlidingWindow,
    ToolAuthorizationError,
    ToolRateLimited,
    ToolRetry,
    TransientToolError,
    resilient,
)

__all__ = [
    "SlidingWindow",
    "ToolAuthorizationError",
    "ToolRateLimited",
    "ToolRetry",
    "TransientToolError",
    "resilient",
]
