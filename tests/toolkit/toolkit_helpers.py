"""Helpers shared by the toolkit tests (a uniquely named module)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolscript.runtime.results import ToolCallRecord

from toolscript import Runtime


def run_ok(rt: Runtime, code: str, **kwargs: Any) -> Any:
    """Run ``code``; assert it succeeded and return its value."""
    result = rt.run(code, **kwargs)
    assert result.ok, result.error
    return result.value


def error_types(records: Iterable[ToolCallRecord]) -> list[str | None]:
    """The error type of each record (None for successful calls)."""
    return [r.error.type if r.error else None for r in records]
