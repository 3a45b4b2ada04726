"""Scripted models for testing agents: ``from toolscript.testing import TestModel``.

See :mod:`toolscript.runtime.agent.testing`.
"""

from __future__ import annotations

from toolscript.runtime.agent.testing import (
    FunctionModel,
    ModelReply,
    TestModel,
    ToolResult,
    TurnInfo,
    call,
    final_answer,
    run_script,
)

__all__ = [
    "FunctionModel",
    "ModelReply",
    "TestModel",
    "ToolResult",
    "TurnInfo",
    "call",
    "final_answer",
    "run_script",
]
