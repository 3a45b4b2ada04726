"""Stable names shared by the sandbox and the host: error types and builtin names.

``RunResult.error.type`` and a failed call's ``tool_error_type`` are a public
contract (the error tables of docs/guide/limits.md list them, and a test checks that
the tables and the code agree with this module). They are produced on both sides
of the protocol, so they live in the sandbox package, which the host may
import and which may not import the host.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "RUN_ENDING_TOOL_ERRORS",
    "RUN_ERROR_TYPES",
    "SANDBOX_BUILTIN_NAMES",
    "TOOL_ERROR_TYPES",
    "TOOL_EXCEPTION_NAMES",
    "RunErrorType",
    "ToolErrorType",
]

RunErrorType = Literal[
    "syntax_error",
    "policy_error",
    "script_error",
    "tool_error",
    "timeout",
    "cpu_limit",
    "memory_limit",
    "pids_limit",
    "output_limit",
    "tool_call_limit",
    "result_limit",
    "recursion_limit",
    "integer_limit",
    "unserializable_value",
    "host_abort",
    "sandbox_crashed",
    "protocol_error",
    "sandbox_violation",
    "paused",
    "replay_diverged",
]
"""Every ``RunResult.error.type``."""

RUN_ERROR_TYPES: Final[frozenset[str]] = frozenset(get_args(RunErrorType))

ToolErrorType = Literal[
    "unknown_tool",
    "invalid_arguments",
    "invalid_json",
    "denied",
    "caller_not_allowed",
    "timeout",
    "tool_exception",
    "invalid_result",
    "overloaded",
    "provenance_denied",
    "paused",
    "tool_call_limit",
    "host_abort",
]
"""Every error type of one failed tool call (a script sees it as ``ToolError.type``;
a run ended by an uncaught one reports it as ``error.details["tool_error_type"]``)."""

TOOL_ERROR_TYPES: Final[frozenset[str]] = frozenset(get_args(ToolErrorType))

RUN_ENDING_TOOL_ERRORS: Final[frozenset[str]] = frozenset({"tool_call_limit", "host_abort"})
"""Tool error types that end the whole run (under the same name) instead of
raising in the script."""

TOOL_EXCEPTION_NAMES: Final[tuple[str, ...]] = (
    "ToolError", "ToolArgumentError", "ToolDenied", "ToolNotFound", "ToolTimeout",
)
"""The exception classes a script sees as builtins."""

SANDBOX_BUILTIN_NAMES: Final[tuple[str, ...]] = ("parallel", *TOOL_EXCEPTION_NAMES)
"""Builtins the sandbox adds to Python's: a tool may not take these names."""
