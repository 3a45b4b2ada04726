"""Bridges to other ecosystems: MCP (:mod:`~toolscript.runtime.integrations.mcp`, tools
from MCP servers and ``run_script`` served over MCP), OpenAPI
(:mod:`~toolscript.runtime.integrations.openapi`, tools from an OpenAPI document) and
OpenTelemetry (:mod:`~toolscript.runtime.integrations.telemetry`, spans and metrics).
"""
