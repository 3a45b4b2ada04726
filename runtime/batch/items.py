"""The input side of a batch job: items from JSONL, checked before anything runs.

:func:`scan_jsonl` reads an items file (``-`` for standard input) and checks
every line up front: each non-blank line must be UTF-8 text holding one JSON
value that the sandbox can receive (standard JSON, so no ``NaN`` or
``Infinity``; nested at most 100 levels; integers of at most 4,300 digits).
A line that fails is a :class:`BadLine` with its line number and the reason,
so a batch can refuse the whole file before the first item runs
(:meth:`JsonlInput.refuse_bad_lines`) or run the good items and record each
bad one as an ``invalid_item`` result (:meth:`JsonlInput.items`).

:func:`check_item_variable` and :func:`check_script_syntax` catch the other
mistakes that would otherwise fail every single item.
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from toolscript.errors import ConfigurationError

__all__ = [
    "BadLine",
    "InvalidItem",
    "JsonlInput",
    "bind_source",
    "check_item_variable",
    "check_script_syntax",
    "json_data_problem",
    "read_jsonl_items",
    "scan_jsonl",
]

_SHOWN_BAD_LINES = 10


@dataclass(frozen=True)
class InvalidItem:
    """An input line that is not an item; run as an ``invalid_item`` result."""

    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class BadLine:
    """A line of the items file that is not an item.

    Attributes:
        line: its line number (1-based, counting blank lines).
        index: the index the item would have had (its position among non-blank lines).
        reason: what is wrong with it.
        text: its first 200 characters.
    """

    line: int
    index: int
    reason: str
    text: str


def json_data_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a batch item (the sandbox takes JSON data only),
    or ``None`` if it can."""
    from toolscript.sandbox.codec import to_json_data

    try:
        to_json_data(value)
    except ValueError as exc:
        return str(exc)
    except RecursionError:
        return "value is nested too deeply"
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not standard JSON")


def _parse_line(raw: bytes) -> tuple[Any, str | None]:
    """The item on one line, or the reason it is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        return None, "not an item: nested too deeply"
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    problem = json_data_problem(value)
    if problem is not None:
        return None, f"not an item the sandbox can take: {problem}"
    return value, None


@dataclass
class JsonlInput:
    """An items file, read and checked (see :func:`scan_jsonl`).

    Attributes:
        source: the path (``-`` for standard input).
        lines: the non-blank lines as ``(line number, raw bytes)``.
        bad: the lines that are not items.
    """

    source: str
    lines: list[tuple[int, bytes]]
    bad: list[BadLine]

    @property
    def total(self) -> int:
        """How many items (non-blank lines, bad ones included) the file holds."""
        return len(self.lines)

    def describe_bad_lines(self) -> str:
        """A message naming the bad lines (the first ten in full)."""
        shown = "; ".join(f"line {b.line}: {b.reason}" for b in self.bad[:_SHOWN_BAD_LINES])
        more = len(self.bad) - _SHOWN_BAD_LINES
        return (
            f"{self.source}: {len(self.bad)} line(s) are not items: {shown}"
            + (f"; and {more} more" if more > 0 else "")
        )

    def refuse_bad_lines(self) -> None:
        """Refuse the file if any line is not an item.

        Raises:
            ConfigurationError: naming the bad lines by number; nothing has run.
        """
        if self.bad:
            raise ConfigurationError(
                self.describe_bad_lines()
                + " (fix them, or record each as an invalid_item result with "
                "--on-bad-line record)"
            )

    def items(self) -> Iterator[Any]:
        """The items in order, a bad line as an :class:`InvalidItem` (lines are
        parsed again here, so only one item is held in memory at a time)."""
        for number, raw in self.lines:
            value, problem = _parse_line(raw)
            if problem is None:
                yield value
            else:
                yield InvalidItem(number, raw[:200].decode("utf-8", "replace"), problem)


def scan_jsonl(path: str) -> JsonlInput:
    """Read the items file ``path`` (``-``: standard input) and check every line."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as fh:
            data = fh.read()
    lines = [(n, raw) for n, raw in enumerate(data.splitlines(), start=1) if raw.strip()]
    bad = []
    for index, (number, raw) in enumerate(lines):
        _, problem = _parse_line(raw)
        if problem is not None:
            bad.append(BadLine(number, index, problem, raw[:200].decode("utf-8", "replace")))
    return JsonlInput(path, lines, bad)


def read_jsonl_items(path: str, on_bad_line: str = "record") -> tuple[Iterator[Any], int]:
    """The items of a JSONL file (``-`` for standard input) and their count.

    Blank lines are skipped. ``on_bad_line="record"`` yields a line that is not
    an item as an :class:`InvalidItem` (an ``invalid_item`` result);
    ``"report"`` refuses the file instead.

    Raises:
        ConfigurationError: with ``"report"``, the file has lines that are not items.
    """
    if on_bad_line not in ("record", "report"):
        raise ConfigurationError(f"on_bad_line must be 'record' or 'report', not {on_bad_line!r}")
    scanned = scan_jsonl(path)
    if on_bad_line == "report":
        scanned.refuse_bad_lines()
    return scanned.items(), scanned.total


def check_item_variable(item_var: str) -> None:
    """Refuse an item variable the sandbox would not let a script assign.

    Raises:
        ConfigurationError: ``item_var`` is not a name a script may assign.
    """
    from toolscript.sandbox.policy import PolicyViolation, SyntaxProblem, compile_script

    if not isinstance(item_var, str) or not item_var.isidentifier():
        raise ConfigurationError(f"item variable {item_var!r} is not a Python identifier")
    try:
        compile_script(f"{item_var} = None", frozenset())
    except (SyntaxProblem, PolicyViolation) as exc:
        raise ConfigurationError(
            f"item variable {item_var!r} cannot be assigned in the sandbox ({exc}); "
            "choose a plain name such as item or row"
        ) from None


def check_script_syntax(script: str, filename: str = "<script>") -> None:
    """Refuse a script that is not valid Python (every item would fail the same way).

    Raises:
        ConfigurationError: with the line and the parser's message.
    """
    try:
        ast.parse(script, filename=filename)
    except SyntaxError as exc:
        where = f" line {exc.lineno}" if exc.lineno else ""
        raise ConfigurationError(f"{filename}:{where} is not valid Python: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ConfigurationError(f"{filename} cannot be parsed: {exc}") from None


def bind_source(item_var: str, item: Any) -> str:
    """Python source that binds ``item`` (JSON data) to ``item_var``.

    The item is copied as a JSON round trip would (tuples become lists,
    non-string keys become strings).

    Raises:
        ConfigurationError: ``item_var`` is not a Python identifier.
        ValueError: ``item`` is not JSON data (NaN, nested too deeply, objects).
    """
    from toolscript.sandbox.codec import to_json_data

    if not item_var.isidentifier():
        raise ConfigurationError(f"item variable {item_var!r} is not a Python identifier")
    try:
        data = to_json_data(item)
    except RecursionError:
        raise ValueError("value is nested too deeply") from None
    return f"{item_var} = {data!r}"
