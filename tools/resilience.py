"""Retries and rate limits around a tool: :func:`resilient`.

:func:`resilient` wraps a tool so that every call of it — from a script or a
classic model turn, since both end in ``Tool.invoke`` — gets:

* **transient errors retried** with exponential backoff, bounded
  (``ConnectionError``, ``TimeoutError`` and :class:`TransientToolError`);
* **rate limits honoured**: a tool raising :class:`ToolRateLimited` (e.g. on
  an upstream HTTP 429) is retried after its ``retry_after_s``, if that is
  within ``max_retry_after_s``; otherwise the error goes back to the model;
* a **client-side sliding-window rate limit** (``rate_limit=(calls, seconds)``):
  a call waits for a free slot instead of hammering the upstream.

The other error classes need nothing here: argument errors come back to the
model verbatim from the dispatcher's schema validation; business results are
returned as data by the tool; authorisation failures are raised as
:class:`ToolAuthorizationError` (a :class:`~toolscript.errors.ToolscriptError`),
which the dispatcher turns into an exception for the programmer, never a
retryable error for the model.

The tool's own timeout (``timeout_s``) covers the retries and waits.
The wrapper copies the tool (:meth:`Tool.wrap_callable`) and wraps only what
runs: options, schema, injected parameters, idempotency and two-phase roles
stay the original's.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolscript.errors import ToolAuthorizationError, ToolRateLimited, TransientToolError

from .definition import Tool

__all__ = [
    "SlidingWindow",
    "ToolAuthorizationError",
    "ToolRateLimited",
    "ToolRetry",
    "TransientToolError",
    "resilient",
]


@dataclass
class ToolRetry:
    """Retry policy for transient tool failures.

    Args:
        max_retries: retries after the first attempt.
        base_delay_s: first backoff delay (doubles each retry, capped at ``max_delay_s``).
        max_delay_s: cap of one backoff delay.
        max_retry_after_s: the longest ``ToolRateLimited.retry_after_s`` honoured.
        transient: exception types retried with backoff.
        sleep: the sleep function (tests pass a recorder).
    """

    max_retries: int = 3
    base_delay_s: float = 0.2
    max_delay_s: float = 5.0
    max_retry_after_s: float = 30.0
    transient: tuple[type[BaseException], ...] = (
        ConnectionError, TimeoutError, TransientToolError
    )
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)


class SlidingWindow:
    """At most ``calls`` acquisitions in any ``per_s`` seconds; :meth:`acquire` waits."""

    def __init__(
        self,
        calls: int,
        per_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if calls < 1 or per_s <= 0:
            raise ValueError("a rate limit needs calls >= 1 and per_s > 0")
        self.calls = calls
        self.per_s = per_s
        self._clock = clock
        self._sleep = sleep
        self._stamps: deque[float] = deque()
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Wait for a slot; return how long it waited."""
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                while self._stamps and now - self._stamps[0] >= self.per_s:
                    self._stamps.popleft()
                if len(self._stamps) < self.calls:
                    self._stamps.append(now)
                    return waited
                delay = self.per_s - (now - self._stamps[0])
            self._sleep(delay)
            waited += delay


def resilient(
    tool: Tool | Callable[..., Any],
    *,
    retry: ToolRetry | None = None,
    rate_limit: tuple[int, float] | SlidingWindow | None = None,
) -> Tool:
    """A copy of ``tool`` (a ``Tool`` or a function) with retries and a rate limit.

    The copy keeps every option of the original (name, description, flags,
    ``allowed_callers``, examples, injected parameters, idempotency), its
    schema (a :meth:`Tool.from_schema` tool still validates against its
    schema) and its two-phase role; only the callable is wrapped.
    """
    original = tool if isinstance(tool, Tool) else Tool.from_function(tool)
    policy = retry or ToolRetry()
    window = SlidingWindow(*rate_limit) if isinstance(rate_limit, tuple) else rate_limit

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            attempt = 0
            while True:
                if window is not None:
                    window.acquire()
                try:
                    return func(*args, **kwargs)
                except ToolRateLimited as exc:
                    attempt += 1
                    wait = exc.retry_after_s
                    if attempt > policy.max_retries or (
                        wait is not None and wait > policy.max_retry_after_s
                    ):
                        raise
                    policy.sleep(wait if wait is not None else _backoff(policy, attempt))
                except policy.transient:
                    attempt += 1
                    if attempt > policy.max_retries:
                        raise
                    policy.sleep(_backoff(policy, attempt))

        return call

    return original.wrap_callable(wrap)


def _backoff(policy: ToolRetry, attempt: int) -> float:
    return float(min(policy.max_delay_s, policy.base_delay_s * 2.0 ** (attempt - 1)))
