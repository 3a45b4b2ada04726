"""Fuzz targets shared by the atheris harnesses and the bounded test run.

Each target takes bytes and must either succeed or raise one of the
documented, typed errors; anything else (another exception, a hang, an
escape) is a finding.

* :func:`protocol` - the wire-protocol decoder (``FrameDecoder`` in random
  chunkings, ``decode_body``) against arbitrary bytes.
* :func:`policy` - the policy compiler and the interpreter against arbitrary
  source text: only ``SyntaxProblem``/``PolicyViolation`` at compile time, a
  result dictionary at run time with a known error type, nothing printed
  outside the result, and the fingerprint of shared stdlib state unchanged.
* :func:`schema` - schema generation and argument validation: JSON values
  decoded from the input validated against tools with many annotations;
  only ``ArgumentError``.
"""

from __future__ import annotations

import collections
import collections.abc
import contextlib
import decimal
import json
import typing
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from toolscript.sandbox.interpreter import Interpreter, RunLimits
from toolscript.sandbox.policy import PolicyViolation, SyntaxProblem, compile_script
from toolscript.sandbox.protocol import FrameDecoder, FrameError, decode_body
from toolscript.tools import ArgumentError, Tool

RESULT_ERROR_TYPES = frozenset({
    "syntax_error", "policy_error", "script_error", "tool_error", "recursion_limit",
    "memory_limit", "timeout", "cpu_limit", "output_limit", "integer_limit", "result_limit",
    "unserializable_value", "tool_call_limit", "host_abort",
})


def protocol(data: bytes) -> None:
    """Decode ``data`` as frames, split at positions taken from the data itself."""
    with contextlib.suppress(FrameError):
        decode_body(data)
    decoder = FrameDecoder(max_bytes=1 << 16)
    cuts = sorted({b % (len(data) + 1) for b in data[:8]})
    start = 0
    try:
        for cut in [*cuts, len(data)]:
            for message in decoder.feed(data[start:cut]):
                assert isinstance(message, dict) and isinstance(message.get("type"), str)
            start = cut
    except FrameError:
        pass


class _NoHost:
    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "value": args}

    def call_many(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"ok": True, "value": c.get("args")} for c in calls]


_INTERPRETER: Interpreter | None = None
_LIMITS = RunLimits(wall_s=0.5, cpu_s=0.5, max_output_chars=10_000, max_result_bytes=100_000)


def fingerprint() -> tuple[Any, ...]:
    """Shared state a script must not be able to change."""
    return (sorted(vars(collections.Counter)), sorted(vars(collections.abc.Mapping)),
            isinstance({}, collections.abc.Sequence),
            repr(typing.Optional[int]),  # noqa: UP045 - the object under test
            decimal.DefaultContext.prec, decimal.getcontext().prec, json.dumps({"a": 1}))


def policy(data: bytes) -> None:
    """Compile (and, when it compiles, run) ``data`` as a script."""
    global _INTERPRETER
    source = data.decode("utf-8", "replace")
    try:
        compile_script(source, frozenset({"math", "json", "re", "typing", "functools"}))
    except (SyntaxProblem, PolicyViolation):
        return
    if _INTERPRETER is None:
        _INTERPRETER = Interpreter(_NoHost(), tools=[{"name": "echo", "params": [
            {"name": "value", "kind": "positional_or_keyword", "required": False}]}])
    before = fingerprint()
    result = _INTERPRETER.run(source, _LIMITS)
    _INTERPRETER.reset()
    assert set(result) == {"ok", "value", "stdout", "stdout_truncated", "error"}, result
    if result["error"] is not None:
        assert result["error"]["type"] in RESULT_ERROR_TYPES, result["error"]
    json.dumps(result["value"])  # the value crossing the boundary is JSON
    assert fingerprint() == before, "a script changed shared state"


class _Address(TypedDict):
    city: str
    zip: str


@dataclass
class _Item:
    sku: str
    qty: int = 1


def _target(order_id: str, amount: float, items: list[_Item], address: _Address,
            tags: dict[str, int] | None = None, mode: Literal["a", "b"] = "a",
            note: str | None = None, flags: tuple[int, str] = (1, "x")) -> None:
    """A tool with many kinds of parameters."""


_TOOL = Tool.from_function(_target)


def schema(data: bytes) -> None:
    """Validate the JSON value in ``data`` (or the raw text) as arguments."""
    text = data.decode("utf-8", "replace")
    try:
        args: Any = json.loads(text)
    except (ValueError, RecursionError):
        args = text
    try:
        _TOOL.validate(args)
    except ArgumentError as exc:
        assert exc.problems or exc.message
