"""``toolscript mcp``: serve the runtime over MCP, or inspect an MCP server's tools.

::

    toolscript mcp serve --tools examples/store_tools.py              # stdio
    TOOLSCRIPT_MCP_TOKEN=... toolscript mcp serve --tools pkg.tools --transport http --port 8000
    toolscript mcp tools --stdio "python weather_server.py" --prefix weather
    toolscript mcp tools --url http://127.0.0.1:8000/mcp
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

__all__ = ["add_mcp_command", "cmd_mcp_serve", "cmd_mcp_tools"]


def add_mcp_command(subparsers: Any) -> None:
    """Register ``toolscript mcp serve|tools`` (a ``cli._EXTRA_COMMANDS`` hook)."""
    from toolscript.runtime.cli.main import add_common_runtime_options

    parser = subparsers.add_parser("mcp", help="MCP: serve run_script, or list a server's tools")
    sub = parser.add_subparsers(dest="mcp_command", required=True)

    serve = sub.add_parser("serve", help="serve run_script over MCP (stdio or Streamable HTTP)")
    add_common_runtime_options(serve)
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP host (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    serve.add_argument("--name", default="toolscript", help="server name clients see")
    serve.add_argument("--no-elicit", action="store_true",
                       help="when a run pauses (--approve defer), do not ask the person through "
                       "MCP elicitation even if the client supports it")
    serve.add_argument("--client-decides", action="store_true",
                       help="offer decide_pending: the client approves or denies paused calls "
                       "itself (only for clients that confirm every tool call with the person)")
    serve.add_argument(
        "--token-env", default="TOOLSCRIPT_MCP_TOKEN", metavar="VAR",
        help="HTTP: the environment variable holding the bearer token every request must "
        "send (required; default TOOLSCRIPT_MCP_TOKEN)",
    )
    serve.add_argument(
        "--max-sessions", type=int, default=16, metavar="N",
        help="the most script sessions (sandboxes) open at once (default 16)",
    )
    serve.add_argument(
        "--idle-timeout", type=float, default=900.0, metavar="S",
        help="close a session unused for S seconds (default 900)",
    )
    serve.set_defaults(handler=cmd_mcp_serve)

    tools = sub.add_parser("tools", help="show an MCP server's tools as toolscript stubs")
    where = tools.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", metavar="COMMAND", help="server command line, e.g. 'uvx srv'")
    where.add_argument("--url", help="Streamable HTTP endpoint, e.g. http://host:8000/mcp")
    tools.add_argument("--prefix", default=None, help="tool name prefix (default: server name)")
    tools.set_defaults(handler=cmd_mcp_tools)


def _require_sdk() -> None:
    import importlib.util

    from toolscript.errors import ConfigurationError

    if importlib.util.find_spec("mcp") is None:
        raise ConfigurationError("MCP support needs the MCP SDK: pip install 'toolscript[mcp]'")


def cmd_mcp_serve(args: argparse.Namespace) -> int:
    """``toolscript mcp serve``."""
    _require_sdk()
    import os

    from toolscript.runtime.cli.main import build_runtime
    from toolscript.runtime.integrations.mcp.http_gate import check_token, serve_http
    from toolscript.runtime.integrations.mcp.server import build_server

    from toolscript.errors import ConfigurationError

    if args.approve == "ask":
        raise ConfigurationError(
            "--approve ask needs the terminal, which an MCP server does "
            "not have: use allow, defer, deny or default"
        )
    token = ""
    if args.transport == "http":
        token = check_token(os.environ.get(args.token_env), args.token_env)
    with build_runtime(args) as runtime:
        server = build_server(
            runtime,
            name=args.name,
            single_client=args.transport == "stdio",
            max_sessions=args.max_sessions,
            idle_ttl_s=args.idle_timeout,
            elicit=not args.no_elicit,
            approvals=args.approve == "defer" or args.client_decides,
            client_decides=args.client_decides,
        )
        try:
            if args.transport == "stdio":
                server.run("stdio")
            else:
                serve_http(server, token=token, host=args.host, port=args.port)
        finally:
            server.sessions.close_all()
    return 0


def cmd_mcp_tools(args: argparse.Namespace) -> int:
    """``toolscript mcp tools``."""
    _require_sdk()
    from toolscript.runtime.integrations.mcp.source import MCPToolSource
    from toolscript.tools import ToolRegistry

    if args.stdio:
        command, *rest = shlex.split(args.stdio)
        source = MCPToolSource.stdio(command, rest, prefix=args.prefix)
    else:
        source = MCPToolSource.http(args.url, prefix=args.prefix)
    with source:
        sys.stdout.write(ToolRegistry(source.tools()).render_stubs())
    return 0
