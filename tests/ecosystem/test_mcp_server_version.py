"""The MCP server reports the installed toolscript's version in its ``serverInfo``
(the SDK's real client, in memory and over stdio)."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from toolscript.runtime.integrations.mcp.server import build_server, package_version

from toolscript import Runtime, __version__

EXAMPLE_TOOLS = str(Path(__file__).resolve().parents[2] / "examples" / "store_tools.py")


def test_package_version_is_the_distributions() -> None:
    assert package_version() == importlib.metadata.version("toolscript") == __version__


def test_in_memory_server_reports_its_version() -> None:
    async def scenario(server: object) -> tuple[str, str]:
        async with Client(server) as client:
            info = client.server_info
            return info.name, info.version

    with Runtime([], backend="inprocess") as rt:
        server = build_server(rt, single_client=True)
        try:
            name, version = anyio.run(scenario, server)
        finally:
            server.sessions.close_all()
    assert name == "toolscript"
    assert version == __version__ != ""


def test_stdio_server_reports_its_version() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolscript", "mcp", "serve", "--tools", EXAMPLE_TOOLS,
              "--backend", "inprocess"],
    )

    async def scenario() -> str:
        async with Client(params) as client:
            return client.server_info.version

    assert anyio.run(scenario) == __version__
