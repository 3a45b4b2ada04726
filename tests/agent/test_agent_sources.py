"""Tool sources are tools: ``Runtime(tools=[...])`` and ``Agent(tools=[...])`` take
OpenAPI and MCP sources next to functions (a real HTTP API and a real MCP server)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import sample_tools
from agent_helpers import make_runtime
from toolscript.runtime.agent import Agent
from toolscript.runtime.integrations.mcp import MCPToolSource
from toolscript.runtime.integrations.openapi import OpenAPISource

from toolscript.testing import TestModel, call, run_script

MCP_SERVER = str(Path(__file__).resolve().parents[1] / "ecosystem" / "eco_mcp_server.py")

DOCUMENT: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Rates", "version": "1"},
    "paths": {
        "/rates/{currency}": {
            "get": {
                "operationId": "getRate",
                "summary": "The rate of a currency to CNY.",
                "parameters": [{"name": "currency", "in": "path", "required": True,
                                "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok", "content": {"application/json": {
                    "schema": {"type": "object"}}}}},
            }
        }
    },
}


@pytest.fixture
def rates_api() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            currency = self.path.rsplit("/", 1)[-1]
            data = json.dumps({"currency": currency, "rate": 7.1}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_runtime_takes_an_openapi_source_next_to_functions(rates_api, backend):
    source = OpenAPISource(DOCUMENT, base_url=rates_api, prefix="fx")
    runtime = make_runtime(backend, tools=[source, sample_tools.list_stores])
    assert runtime.registry.names() == ["fx_getRate", "list_stores"]
    result = runtime.run("fx_getRate(currency='USD')['rate'] * len(list_stores())")
    assert result.ok, result.error
    assert result.value == pytest.approx(35.5)
    assert [r.name for r in result.tool_calls] == ["fx_getRate", "list_stores"]


class NotesSource:
    """A minimal tool source: anything with ``tools()`` (and ``close()``)."""

    def __init__(self) -> None:
        self.closed = False

    def tools(self) -> list[Any]:
        return [sample_tools.add_note]

    def close(self) -> None:
        self.closed = True


def test_agent_takes_mcp_and_openapi_sources_and_closes_what_it_was_given(rates_api):
    mcp = MCPToolSource.stdio(sys.executable, [MCP_SERVER])
    notes = NotesSource()
    model = TestModel(
        run_script("weather_server_forecast(city='Oslo', days=2)['temp_c']"),
        [call("weather_server_add", a=2, b=3), call("fx_getRate", currency="EUR")],
        "done",
    )
    with Agent(model, mode="mixed", runtime_options={"backend": "inprocess"},
               tools=[mcp, OpenAPISource(DOCUMENT, base_url=rates_api, prefix="fx"),
                      sample_tools.list_stores, notes]) as agent:
        result = agent.run("go")
        assert "add_note" in agent.runtime.registry
    assert [s.output for s in result.steps] == [
        "value:\n22", "5", json.dumps({"currency": "EUR", "rate": 7.1}, separators=(",", ":"))]
    assert "def weather_server_forecast(" in model.requests[0].tool("run_script").description
    assert notes.closed  # the agent closed the sources it was given
    mcp.close()  # idempotent: already closed by the agent
