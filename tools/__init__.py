"""Tool definitions for toolscript.

``@tool`` / :class:`Tool` wrap host-side functions; type hints and docstrings
become JSON Schema (:func:`schema_for_type`); :class:`ToolRegistry` is the
whitelist of one runtime; arguments are validated with ``jsonschema`` (plus a
compiled fast path) and violations raise :class:`ArgumentError`;
:func:`render_stubs` shows tools to a model as Python; :func:`load_tools`
reads them from a module or file.

Richer definitions: ``Annotated[T, Field(ge=..., pattern=...)]`` constraints
(:mod:`.constraints`), ``Injected[T]`` / ``IdempotencyKey`` parameters the
model never sees (:mod:`.markers`), ``@tool(examples=..., idempotent=...)``,
:func:`two_phase` prepare/commit pairs, pydantic models as types, and
:func:`lint_tools` for checking a tool set against the design guidance.
"""

from __future__ import annotations

from .constraints import Field
from .convert import json_default, to_jsonable
from .decorator import tool
from .definition import MISSING, Param, Tool, check_tool_name
from .lint import Finding, lint_tools
from .loader import load_tools
from .markers import IdempotencyKey, Inject, Injected
from .options import ToolOptions
from .registry import ToolRegistry
from .resilience import ToolRetry, resilient
from .schema import schema_for_type
from .schematool import SchemaTool as SchemaTool  # registers Tool.from_schema's class
from .stubs import render_stub, render_stubs
from .twophase import TwoPhase, two_phase
from .validation import ArgumentError, Problem

__all__ = [
    "MISSING",
    "ArgumentError",
    "Field",
    "Finding",
    "IdempotencyKey",
    "Inject",
    "Injected",
    "Param",
    "Problem",
    "Tool",
    "ToolOptions",
    "ToolRegistry",
    "ToolRetry",
    "TwoPhase",
    "check_tool_name",
    "json_default",
    "lint_tools",
    "load_tools",
    "render_stub",
    "render_stubs",
    "resilient",
    "schema_for_type",
    "to_jsonable",
    "tool",
    "two_phase",
]
