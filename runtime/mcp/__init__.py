"""MCP in both directions (needs the ``mcp`` extra: the MCP Python SDK 2.x).

* :class:`MCPToolSource`: an MCP server's tools as toolscript tools.
* :func:`build_server`: the runtime as an MCP server with a ``run_script`` tool
  (``toolscript mcp serve``).

Names are imported lazily so that importing this package does not import the
SDK until it is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import ScriptSessions, build_server
    from .source import MCPToolError, MCPToolSource

__all__ = ["MCPToolError", "MCPToolSource", "ScriptSessions", "build_server"]

_EXPORTS = {
    "MCPToolError": ".source",
    "MCPToolSource": ".source",
    "ScriptSessions": ".server",
    "build_server": ".server",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
