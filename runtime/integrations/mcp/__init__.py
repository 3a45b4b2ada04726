"""MCP in both directions (needs the ``mcp`` extra: the MCP Python SDK 2.x).

* :class:`MCPToolSource`: an MCP server's tools as toolscript tools.
* :func:`build_server`: the runtime as an MCP server with a ``run_script`` tool
  (``toolscript mcp serve``); :func:`serve_http` / :func:`http_app` serve it
  over Streamable HTTP behind a bearer token.

Names are imported lazily so that importing this package does not import the
SDK until it is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolscript.runtime.integrations.mcp.http_gate import http_app, serve_http
    from toolscript.runtime.integrations.mcp.server import build_server
    from toolscript.runtime.integrations.mcp.sessions import ScriptSessions
    from toolscript.runtime.integrations.mcp.source import MCPToolError, MCPToolSource

__all__ = [
    "MCPToolError",
    "MCPToolSource",
    "ScriptSessions",
    "build_server",
    "http_app",
    "serve_http",
]

_EXPORTS = {
    "MCPToolError": ".source",
    "MCPToolSource": ".source",
    "ScriptSessions": ".sessions",
    "build_server": ".server",
    "http_app": ".http_gate",
    "serve_http": ".http_gate",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
