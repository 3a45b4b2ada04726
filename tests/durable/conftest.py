"""Fixtures of the durable-approval tests: a journal file, a key, counting tools."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from backend_marks import backend_options

from toolscript import Decision, Runtime, tool

KEY = "durable-test-key-0123456789abcdef"


class Counter:
    """Counts executions of the tools below per (tool, argument)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def count(self, name: str, arg: Any = None) -> int:
        """How often ``name`` ran (with ``arg``, if given)."""
        return sum(1 for n, a in self.calls if n == name and (arg is None or a == arg))

    def tools(self) -> list[Any]:
        """``read`` (read-only), ``send`` (requires approval) and ``note`` (a write)."""
        calls = self.calls

        @tool(read_only=True)
        def read(x: int) -> int:
            """Double x."""
            calls.append(("read", x))
            return x * 2

        @tool(requires_approval=True)
        def send(to: str) -> str:
            """Send to someone."""
            calls.append(("send", to))
            return f"sent {to}"

        @tool
        def note(text: str) -> str:
            """Write a note."""
            calls.append(("note", text))
            return f"noted {text}"

        return [read, send, note]


def defer_sends(request: Any) -> Any:
    """An approval hook that defers every ``send``."""
    if request.tool == "send":
        return Decision.defer(f"a person must approve sending to {request.args['to']}")
    return True


@pytest.fixture
def journal_url(tmp_path: Path) -> str:
    """A fresh SQLite journal."""
    return f"sqlite:///{tmp_path}/journal.sqlite3"


@pytest.fixture
def durable_runtime(backend_name: str, journal_url: str) -> Iterator[Callable[..., Runtime]]:
    """Build runtimes with the journal, key and hook of these tests (closed afterwards).
    Each call is a new runtime, as a new host process would build it."""
    made: list[Runtime] = []

    def make(tools: Any, **kwargs: Any) -> Runtime:
        kwargs.setdefault("approve", defer_sends)
        kwargs.setdefault("journal", journal_url)
        kwargs.setdefault("continuation_key", KEY)
        runtime = Runtime(tools, backend=backend_name,
                          backend_options=backend_options(backend_name, 1), **kwargs)
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        runtime.close()
