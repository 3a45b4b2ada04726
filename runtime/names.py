"""The host's stable names, in one place: backends, approval modes, error types.

Everything that accepts or reports one of these names (``Runtime(backend=...)``,
config profiles, the CLI's ``choices``, the docs) takes it from here, so a
new backend or approval mode is added once. Error types and the sandbox's
builtin names are produced inside the sandbox too, so they are defined in
:mod:`toolscript.sandbox.names` and re-exported here; the default module list
comes from :mod:`toolscript.sandbox.modules`.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from toolscript.sandbox.modules import DEFAULT_MODULES, OPTIONAL_MODULES
from toolscript.sandbox.names import (
    RUN_ENDING_TOOL_ERRORS,
    RUN_ERROR_TYPES,
    SANDBOX_BUILTIN_NAMES,
    TOOL_ERROR_TYPES,
    TOOL_EXCEPTION_NAMES,
    RunErrorType,
    ToolErrorType,
)

__all__ = [
    "APPROVAL_MODES",
    "BACKEND_NAMES",
    "DEFAULT_BACKEND",
    "DEFAULT_MODULES",
    "OPTIONAL_MODULES",
    "RUN_ENDING_TOOL_ERRORS",
    "RUN_ERROR_TYPES",
    "SANDBOX_BUILTIN_NAMES",
    "TOOL_ERROR_TYPES",
    "TOOL_EXCEPTION_NAMES",
    "ApprovalMode",
    "BackendName",
    "RunErrorType",
    "ToolErrorType",
]

BackendName = Literal["inprocess", "subprocess", "docker"]
"""The built-in backends (a ``Backend`` instance may be passed instead)."""

BACKEND_NAMES: Final[tuple[str, ...]] = get_args(BackendName)

DEFAULT_BACKEND: Final[BackendName] = "subprocess"

ApprovalMode = Literal["allow", "ask", "defer", "deny", "default"]
"""How a config profile or the CLI approves calls: approve all, ask on the
terminal, defer to a person later (the run pauses), deny all, or the
runtime's default hook."""

APPROVAL_MODES: Final[tuple[str, ...]] = get_args(ApprovalMode)
