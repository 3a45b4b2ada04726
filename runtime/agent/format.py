"""Turning script results and tool-call records into the text the model reads.

Only a script's value and printed output go back, capped at a number of
characters with an explicit notice, so the model knows it saw a prefix; a
list value is cut at whole items and the notice says how many of how many
were kept (:func:`~toolscript.runtime.shaping.cap_json`).
Errors are rendered as ``error: TYPE: message`` so the model can fix them.
"""

from __future__ import annotations

import json
from typing import Any

from ..results import location_text
from ..shaping import cap_json
from .protocols import ErrorLike, RunResultLike, ToolCallRecordLike

__all__ = ["cap", "format_error", "format_run_result", "format_tool_record", "to_json"]


def to_json(value: Any) -> str:
    """Compact JSON (non-ASCII kept), falling back to ``str`` for odd values."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)


def cap(text: str, max_chars: int) -> str:
    """``text``, or its first ``max_chars`` characters plus a truncation notice."""
    if len(text) <= max_chars:
        return text
    return (
        text[:max_chars]
        + f"\n[truncated: showing the first {max_chars:,} of {len(text):,} characters. "
        "Aggregate or filter inside the script, or print less.]"
    )


def format_error(error: ErrorLike | None) -> str:
    """``error: TYPE: message (line N)``, or ``(line N, column C)`` for a syntax error.

    The location has one owner, the error's structured ``line`` (and ``column``)
    fields: no message of the sandbox names its line, so it is added here, once.
    """
    if error is None:
        return "error: unknown error"
    return f"error: {error.type}: {error.message}{_location(error)}"


def _location(error: ErrorLike) -> str:
    return location_text(error.line, error.details.get("column"))


def format_run_result(result: RunResultLike, max_chars: int) -> tuple[str, bool]:
    """The model's view of a script run: ``(text, is_error)``."""
    parts: list[str] = []
    if not result.ok:
        parts.append(format_error(result.error))
    if result.stdout:
        parts.append("printed:\n" + result.stdout.rstrip("\n"))
        if result.stdout_truncated:
            parts.append("[printed output was cut by the sandbox's output limit]")
    if result.ok:
        if result.value is not None:
            parts.append("value:\n" + cap_json(result.value, max_chars - len("value:\n")))
        elif not result.stdout:
            parts.append(
                "ok (no value and nothing printed: end the script with an expression "
                "to see its value)"
            )
    return cap("\n".join(parts), max_chars), not result.ok


def format_tool_record(record: ToolCallRecordLike, max_chars: int) -> tuple[str, bool]:
    """The model's view of a direct tool call: ``(text, is_error)``."""
    if record.ok:
        return cap(cap_json(record.value, max_chars), max_chars), False
    return cap(format_error(record.error), max_chars), True
