"""Tool definitions for toolscript.

``@tool`` / :class:`Tool` wrap host-side functions; type hints and docstrings
become JSON Schema (:func:`schema_for_type`); :class:`ToolRegistry` is the
whitelist of one runtime; arguments are validated with ``jsonschema`` (plus a
compiled fast path) and violations raise :class:`ArgumentError`;
:func:`render_stubs` shows tools to a model as Python; :func:`load_tools`
reads them from a module or file.
"""

from __future__ import annotations

from .convert import json_default, to_jsonable
from .decorator import tool
from .definition import MISSING, Param, Tool, check_tool_name
from .loader import load_tools
from .registry import ToolRegistry
from .schema import schema_for_type
from .stubs import render_stub, render_stubs
from .validation import ArgumentError, Problem

__all__ = [
    "MISSING",
    "ArgumentError",
    "Param",
    "Problem",
    "Tool",
    "ToolRegistry",
    "check_tool_name",
    "json_default",
    "load_tools",
    "render_stub",
    "render_stubs",
    "schema_for_type",
    "to_jsonable",
    "tool",
]
