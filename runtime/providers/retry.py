"""Bounded retries of model-endpoint calls, shared by every dialect.

The SDK clients' own retries are switched off (``max_retries=0``; the
``google-genai`` client retries only when asked to) and this module does the
retrying instead, for three reasons: one policy for every SDK alike;
``Retry-After`` is honoured up to a bound we choose (and a longer demand fails
fast instead of silently sleeping on a fallback schedule); and tests can
observe each attempt and each delay.

Retried: HTTP 408, 409, 429 and 5xx (Anthropic's 529 included), timeouts and
connection errors. Not retried: 400/404/422 (:class:`ModelRequestError`) and
401/403 (:class:`ModelAuthError`).
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .errors import (
    ModelAuthError,
    ModelEndpointError,
    ModelRequestError,
    ModelUnavailableError,
)

__all__ = ["RetryPolicy", "call_with_retry", "call_with_retry_async", "classify_error"]

log = logging.getLogger("toolscript.agent")

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 429})


@dataclass
class RetryPolicy:
    """How often and how long to retry a failing model call.

    Args:
        max_retries: retries after the first attempt.
        base_delay_s: first backoff delay; doubles per retry, plus up to 25 % jitter.
        max_delay_s: cap of one backoff delay.
        max_retry_after_s: the longest ``Retry-After`` honoured; a longer demand
            ends the call with :class:`ModelUnavailableError` at once.
        sleep: the sleep function (tests pass a recorder). Async runs wait with
            ``asyncio.sleep`` while it is ``time.sleep``, else they call it.
    """

    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    max_retry_after_s: float = 60.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def backoff(self, attempt: int) -> float:
        """The delay before retry number ``attempt`` (1-based) without a Retry-After."""
        delay = min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))
        return float(delay * (1 + random.random() * 0.25))


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if status is None and _is_genai_error(exc):
        status = getattr(exc, "code", None)  # google-genai's APIError
    return status if isinstance(status, int) else None


def _is_genai_error(exc: BaseException) -> bool:
    return type(exc).__module__.startswith("google.genai")


#: (module, class) of the SDKs' and HTTP libraries' connection/timeout errors.
_CONNECTION_ERRORS = (
    ("openai", "APIConnectionError"),
    ("anthropic", "APIConnectionError"),
    ("httpx", "TransportError"),
    ("httpx2", "TransportError"),
    ("aiohttp", "ClientConnectionError"),
    ("aiohttp", "ServerTimeoutError"),
)


def _is_connection_error(exc: BaseException) -> bool:
    import sys

    if isinstance(exc, TimeoutError):  # aiohttp's timeouts (the genai async client)
        return True
    for module_name, class_name in _CONNECTION_ERRORS:
        module = sys.modules.get(module_name)  # never imported here: loaded by its SDK
        kind = getattr(module, class_name, None) if module is not None else None
        if isinstance(kind, type) and isinstance(exc, kind):
            return True
    return False


def retry_after_seconds(exc: BaseException) -> float | None:
    """The delay an error response asks for (``retry-after-ms`` / ``retry-after``)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def _message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    message = getattr(exc, "message", None)
    if _is_genai_error(exc) and isinstance(message, str) and message:
        return message
    return str(exc)


def classify_error(exc: BaseException, provider: str) -> tuple[str, ModelEndpointError | None]:
    """Sort an SDK exception: ``("retry", err)``, ``("raise", err)`` or ``("foreign", None)``.

    ``err`` is the :class:`ModelEndpointError` to raise when no retry is left.
    """
    status = _status(exc)
    if status is not None:
        text = f"{provider} endpoint returned HTTP {status}: {_message(exc)}"
        if status in (401, 403):
            hint = " (check the API key and access to the model)"
            return "raise", ModelAuthError(text + hint, status=status, provider=provider)
        if status in RETRYABLE_STATUS or status >= 500:
            return "retry", ModelUnavailableError(text, status=status, provider=provider)
        return "raise", ModelRequestError(text, status=status, provider=provider)
    if _is_connection_error(exc):
        text = f"{provider} endpoint unreachable: {type(exc).__name__}: {exc}"
        return "retry", ModelUnavailableError(text, provider=provider)
    return "foreign", None


def call_with_retry(fn: Callable[[], T], policy: RetryPolicy, provider: str) -> T:
    """Call ``fn``; retry transient endpoint failures per ``policy``; translate errors."""
    attempt = 0
    while True:
        try:
            return fn()
        except Exception as exc:
            attempt += 1
            policy.sleep(_retry_delay(exc, policy, attempt, provider))


async def call_with_retry_async(
    fn: Callable[[], Awaitable[T]], policy: RetryPolicy, provider: str
) -> T:
    """:func:`call_with_retry` for a coroutine function (waits without blocking the loop)."""
    attempt = 0
    while True:
        try:
            return await fn()
        except Exception as exc:
            attempt += 1
            delay = _retry_delay(exc, policy, attempt, provider)
            if policy.sleep is time.sleep:
                await asyncio.sleep(delay)
            else:
                policy.sleep(delay)


def _retry_delay(exc: Exception, policy: RetryPolicy, attempt: int, provider: str) -> float:
    """The wait before retry number ``attempt`` after ``exc``; raises (from the
    handler of ``exc``) when the failure is not retried or no retry is left."""
    verdict, error = classify_error(exc, provider)
    if verdict == "foreign" or error is None:
        raise exc
    if verdict == "raise":
        raise error from exc
    if attempt > policy.max_retries:
        error.args = (f"{error.args[0]} (gave up after {attempt} attempts)",)
        raise error from exc
    delay = _delay(exc, policy, attempt, error)
    log.warning("%s; retry %d/%d in %.2f s", error, attempt, policy.max_retries, delay)
    return delay


def _delay(exc: BaseException, policy: RetryPolicy, attempt: int, error: Any) -> float:
    asked = retry_after_seconds(exc)
    if asked is None:
        return policy.backoff(attempt)
    if asked > policy.max_retry_after_s:
        error.args = (
            f"{error.args[0]} (Retry-After {asked:.0f} s exceeds the limit of "
            f"{policy.max_retry_after_s:.0f} s)",
        )
        raise error from exc
    return max(0.0, asked)
